/**
 * Values read from the store, kept in memory until one of the tables they were
 * read from changes (src/db/changes.ts). Every entry also expires after
 * MAX_AGE_MS, which bounds how long a change whose signal was lost (a process
 * killed between its commit and its signal) can stay unseen. Callers share the
 * values: they must not change them.
 */
import type { ChangeSignal, Tables } from './changes.ts';

const MAX_AGE_MS = 10_000;

interface Entry<V> {
  value: V;
  generation: number;
  expires: number;
  size: number;
}

export interface CacheLimits<V> {
  /** At most this many entries; the oldest goes first. */
  entries: number;
  /** And, where values differ much in size, at most this much of `sizeOf` in all. */
  total?: { sizeOf: (value: V) => number; most: number };
}

export class ReadCache<V> {
  private readonly entries = new Map<string, Entry<V>>();
  private size = 0;

  constructor(
    private readonly changes: ChangeSignal,
    /** The tables the values are read from. */
    private readonly tables: Tables,
    private readonly limits: CacheLimits<V>,
  ) {}

  /** The value under `key`, read with `load` when missing, stale or when changes cannot be followed. */
  async get(key: string, load: () => Promise<V>): Promise<V> {
    const generation = this.changes.generation(this.tables);
    if (generation === undefined) return load();
    const now = Date.now();
    const entry = this.entries.get(key);
    if (entry && entry.generation === generation && entry.expires > now) return entry.value;
    const value = await load();
    // "Not found" is not kept: made-up keys must not push out the ones in use.
    if (value === undefined) return value;
    this.drop(key);
    const size = this.limits.total?.sizeOf(value) ?? 0;
    const most = this.limits.total?.most ?? Infinity;
    if (size > most) return value;
    while (this.entries.size >= this.limits.entries || this.size + size > most) this.drop(this.entries.keys().next().value!);
    this.entries.set(key, { value, generation, expires: now + MAX_AGE_MS, size });
    this.size += size;
    return value;
  }

  private drop(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.size -= entry.size;
  }
}
