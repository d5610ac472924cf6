/**
 * Per-network pacing shared by every worker: a provider may declare how many
 * publishes it allows at once (slots in the database, held with a lease so a dead
 * worker's slot frees itself) and per time window (a shared counter).
 */
import { sql } from 'kysely';
import type { Store } from '../db/index.ts';
import { ApiError } from '../domain/errors.ts';
import type { RateLimiter } from '../domain/rate-limit.ts';
import type { Provider } from '../providers/types.ts';

export type Permit = { granted: true; release(): Promise<void> } | { granted: false; retryAt: number; reason: string };

/** A busy network is asked again soon; items keep roughly their order. */
const BUSY_RETRY_MS = 100;

function describeWindow(ms: number): string {
  if (ms >= 3_600_000) return `${ms / 3_600_000} hour(s)`;
  if (ms >= 60_000) return `${ms / 60_000} minute(s)`;
  return `${ms / 1000} second(s)`;
}

export class Pacing {
  /** Slot names whose rows this process has made sure exist. */
  private readonly seeded = new Set<string>();

  constructor(
    private readonly store: Store,
    private readonly limiter: RateLimiter,
  ) {}

  async acquire(provider: Provider, channelId: string, holder: string, holdMs: number, now = Date.now()): Promise<Permit> {
    const pacing = provider.pacing;
    let release = async () => {};
    if (pacing?.concurrent) {
      const held = await this.slot(`network:${provider.identifier}`, pacing.concurrent, holder, holdMs, now);
      if (!held) return { granted: false, retryAt: now + BUSY_RETRY_MS + Math.round(Math.random() * (BUSY_RETRY_MS / 2)), reason: `${provider.name} is busy` };
      release = held;
    }
    const windows = [
      pacing?.perWindow && { bucket: `network:${provider.identifier}`, ...pacing.perWindow, what: provider.name },
      pacing?.perChannel && { bucket: `channel:${channelId}`, ...pacing.perChannel, what: `this ${provider.name} channel` },
    ].filter((w) => !!w);
    for (const w of windows) {
      try {
        await this.limiter.consumeFixed(w.bucket, w.count, w.windowMs, w.what, now);
      } catch (err) {
        await release();
        if (!(err instanceof ApiError)) throw err;
        const retryAt = now + Number(err.headers['Retry-After'] ?? 1) * 1000;
        return {
          granted: false,
          retryAt,
          reason: `${w.what} allows ${w.count} posts per ${describeWindow(w.windowMs)}; the limit is reached until ${new Date(retryAt).toISOString()}`,
        };
      }
    }
    return { granted: true, release };
  }

  /**
   * Takes one of `size` slots named `key` for `holdMs`, shared by every process;
   * undefined when all are held. The slot frees itself when its holder dies.
   */
  async slot(key: string, size: number, holder: string, holdMs: number, now = Date.now()): Promise<(() => Promise<void>) | undefined> {
    await this.seed(key, size);
    const lock = this.store.dialect === 'postgres' ? sql`FOR UPDATE SKIP LOCKED` : sql``;
    const taken = await sql<{ slot: number }>`
      UPDATE network_slots SET holder = ${holder}, held_until = ${now + holdMs}
      WHERE name = ${key} AND slot = (
        SELECT slot FROM network_slots WHERE name = ${key} AND slot < ${size} AND held_until < ${now}
        ORDER BY slot LIMIT 1 ${lock})
      RETURNING slot`.execute(this.store.db);
    const slot = taken.rows[0]?.slot;
    if (slot === undefined) return undefined;
    return async () => {
      await this.store.db
        .updateTable('network_slots')
        .set({ holder: null, held_until: 0 })
        .where('name', '=', key)
        .where('slot', '=', slot)
        .where('holder', '=', holder)
        .execute();
    };
  }

  private async seed(key: string, slots: number): Promise<void> {
    if (this.seeded.has(key)) return;
    const rows = Array.from({ length: slots }, (_, slot) => ({ name: key, slot, holder: null, held_until: 0 }));
    await this.store.db
      .insertInto('network_slots')
      .values(rows)
      .onConflict((oc) => oc.columns(['name', 'slot']).doNothing())
      .execute();
    this.seeded.add(key);
  }
}
