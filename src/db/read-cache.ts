/**
 * Values read from the store, kept in memory until a watched table changes
 * (src/db/changes.ts). Every entry also expires after MAX_AGE_MS, which bounds
 * how long a change whose signal was lost (a process killed between its commit
 * and its signal) can stay unseen. Callers share the values: they must not change them.
 */
import type { ChangeSignal } from './changes.ts';

const MAX_AGE_MS = 10_000;

interface Entry<V> {
  value: V;
  generation: number;
  expires: number;
}

export class ReadCache<V> {
  private readonly entries = new Map<string, Entry<V>>();

  constructor(
    private readonly changes: ChangeSignal,
    /** At most this many entries; the oldest goes first. */
    private readonly capacity: number,
  ) {}

  /** The value under `key`, read with `load` when missing, stale or when changes cannot be followed. */
  async get(key: string, load: () => Promise<V>): Promise<V> {
    const generation = this.changes.generation();
    if (generation === undefined) return load();
    const now = Date.now();
    const entry = this.entries.get(key);
    if (entry && entry.generation === generation && entry.expires > now) return entry.value;
    const value = await load();
    // "Not found" is not kept: made-up keys must not push out the ones in use.
    if (value === undefined) return value;
    this.entries.delete(key);
    if (this.entries.size >= this.capacity) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, { value, generation, expires: now + MAX_AGE_MS });
    return value;
  }
}
