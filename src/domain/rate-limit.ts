/**
 * Fixed-window request counters kept in the database, so every process of a
 * deployment shares them. `consume` is exact (one upsert per request) for limits
 * that must hold to the request; `consumeBatched` counts in memory and adds to
 * the shared row a few times a second, for the per-key limit every request passes.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.ts';
import { ApiError } from './errors.ts';
import { inBackground } from '../lib/background.ts';

export interface LimitState {
  limit: number;
  remaining: number;
  /** Seconds until the window resets. */
  resetSeconds: number;
}

export function limitHeaders(state: LimitState): Record<string, string> {
  const values = { Limit: String(state.limit), Remaining: String(state.remaining), Reset: String(state.resetSeconds) };
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(values)) {
    headers[`RateLimit-${name}`] = value;
    headers[`X-RateLimit-${name}`] = value;
  }
  return headers;
}

/** How often a process adds its local counts to the shared rows. */
const SYNC_MS = 250;
/** After a failed sync (a full disk, a lost connection), wait longer before the next, up to this. */
const MAX_SYNC_BACKOFF_MS = 30_000;

interface LocalCount {
  windowStart: number;
  /** The shared total as last read from the database (all processes). */
  shared: number;
  /** Requests this process counted since its last sync. */
  pending: number;
  /** Resolves once the shared total of this window was first read. */
  ready: Promise<void>;
}

function tooMany(what: string, limit: number, windowMs: number, state: LimitState): ApiError {
  const per = windowMs >= 3_600_000 ? `${windowMs / 3_600_000} hour(s)` : `${windowMs / 60_000} minute(s)`;
  return new ApiError(429, 'rate_limited', `${what}: at most ${limit} requests per ${per}; try again in ${state.resetSeconds} s`, [], {
    'Retry-After': String(state.resetSeconds),
    ...limitHeaders(state),
  });
}

function windowOf(now: number, windowMs: number) {
  const windowStart = now - (now % windowMs);
  return { windowStart, resetSeconds: Math.max(1, Math.ceil((windowStart + windowMs - now) / 1000)) };
}

/** The sliding window's step: requests are counted per minute. */
const SLIDING_STEP_MS = 60_000;

/** Seconds until the `leave` oldest requests in the window (`rows`: per-minute counts, oldest first) have left it. */
function slidingResetSeconds(rows: { window_start: number; count: number }[], leave: number, windowMs: number, now: number): number {
  let left = 0;
  for (const row of rows) {
    left += row.count;
    if (left >= leave) return Math.max(1, Math.ceil((row.window_start + SLIDING_STEP_MS + windowMs - now) / 1000));
  }
  return 1;
}

export class RateLimiter {
  private readonly local = new Map<string, LocalCount>();
  private timer?: NodeJS.Timeout;
  private syncing?: Promise<void>;
  private failedSyncs = 0;

  constructor(private readonly db: Kysely<Database>) {}

  /**
   * Counts one request against `bucket`; throws 429 (with Retry-After and the
   * rate-limit headers) when the window's allowance is used up.
   */
  async consume(bucket: string, limit: number, windowMs: number, what: string, now = Date.now()): Promise<LimitState> {
    const { windowStart, resetSeconds } = windowOf(now, windowMs);
    const count = await this.add(bucket, windowStart, 1);
    const state = { limit, remaining: Math.max(0, limit - count), resetSeconds };
    if (count > limit) throw tooMany(what, limit, windowMs, state);
    return state;
  }

  /**
   * Like consume, over a sliding window: at most `limit` accepted requests in any
   * `windowMs`, not per clock window (a burst at the end of one clock hour and
   * another at the start of the next both passed: twice the limit in a minute).
   * Requests are counted per minute; the window sums the minutes it touches,
   * including the one it begins in whole, so it never lets more through (it may
   * refuse up to a minute early). A refused request takes itself back.
   */
  async consumeSliding(bucket: string, limit: number, windowMs: number, what: string, now = Date.now()): Promise<LimitState> {
    const minute = now - (now % SLIDING_STEP_MS);
    // The minutes before this one no longer change; this minute's count is an atomic increment,
    // so parallel requests each see a different total and exactly the allowance passes.
    const earlier = await this.db
      .selectFrom('rate_counters')
      .select(['window_start', 'count'])
      .where('bucket', '=', bucket)
      .where('window_start', '>', now - windowMs - SLIDING_STEP_MS)
      .where('window_start', '<', minute)
      .orderBy('window_start')
      .execute();
    const current = await this.add(bucket, minute, 1);
    const rows = [...earlier, { window_start: minute, count: current }];
    const used = rows.reduce((sum, r) => sum + r.count, 0);
    // Over the limit, this many must leave the window before one more fits (this one is taken back); else the oldest.
    const state = { limit, remaining: Math.max(0, limit - used), resetSeconds: slidingResetSeconds(rows, Math.max(1, used - limit), windowMs, now) };
    if (used > limit) {
      await this.add(bucket, minute, -1);
      throw tooMany(what, limit, windowMs, state);
    }
    return state;
  }

  /**
   * Like consume, without a database write per request. Other processes' counts
   * arrive within SYNC_MS, so a deployment of several processes may let a few
   * requests over the limit during that time; one process alone is exact.
   */
  async consumeBatched(bucket: string, limit: number, windowMs: number, what: string, now = Date.now()): Promise<LimitState> {
    const { windowStart, resetSeconds } = windowOf(now, windowMs);
    let entry = this.local.get(bucket);
    if (!entry || entry.windowStart !== windowStart) {
      const fresh: LocalCount = { windowStart, shared: 0, pending: 0, ready: Promise.resolve() };
      // The first request of a window learns what the other processes counted so far.
      fresh.ready = this.read(bucket, windowStart).then(
        (count) => {
          fresh.shared = count;
        },
        (err: unknown) => {
          // The next request of this window reads again rather than failing for ever.
          if (this.local.get(bucket) === fresh) this.local.delete(bucket);
          throw err;
        },
      );
      this.local.set(bucket, fresh);
      entry = fresh;
    }
    await entry.ready;
    const used = entry.shared + entry.pending + 1;
    const state = { limit, remaining: Math.max(0, limit - used), resetSeconds };
    if (used > limit) throw tooMany(what, limit, windowMs, state);
    entry.pending++;
    this.scheduleSync(SYNC_MS);
    return state;
  }

  private scheduleSync(delayMs: number): void {
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      inBackground('rate limits: could not write the request counts (kept, will retry)', async () => {
        try {
          await this.sync();
          this.failedSyncs = 0;
        } catch (err) {
          this.failedSyncs++;
          this.scheduleSync(Math.min(MAX_SYNC_BACKOFF_MS, SYNC_MS * 2 ** this.failedSyncs));
          throw err;
        }
      });
    }, delayMs).unref();
  }

  /** Adds this process's counts to the shared rows and reads back the totals. */
  async sync(): Promise<void> {
    if (this.syncing) return this.syncing;
    this.syncing = (async () => {
      for (const [bucket, entry] of this.local) {
        const pending = entry.pending;
        if (pending > 0) {
          entry.pending -= pending;
          try {
            entry.shared = await this.add(bucket, entry.windowStart, pending);
          } catch (err) {
            // Not written: counted again at the next sync, so no request goes uncounted.
            entry.pending += pending;
            throw err;
          }
        } else if (entry.windowStart + 3_600_000 < Date.now()) {
          this.local.delete(bucket);
        }
      }
    })().finally(() => {
      this.syncing = undefined;
    });
    return this.syncing;
  }

  private async add(bucket: string, windowStart: number, count: number): Promise<number> {
    const row = await this.db
      .insertInto('rate_counters')
      .values({ bucket, window_start: windowStart, count })
      .onConflict((oc) => oc.columns(['bucket', 'window_start']).doUpdateSet((eb) => ({ count: eb('rate_counters.count', '+', count) })))
      .returning('count')
      .executeTakeFirstOrThrow();
    return row.count;
  }

  private async read(bucket: string, windowStart: number): Promise<number> {
    const row = await this.db
      .selectFrom('rate_counters')
      .select('count')
      .where('bucket', '=', bucket)
      .where('window_start', '=', windowStart)
      .executeTakeFirst();
    return row?.count ?? 0;
  }

  /** Writes out what this process counted; call before the store closes. */
  async close(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.sync();
  }

  /** Drops windows that ended more than a day ago. */
  async prune(now = Date.now()): Promise<void> {
    await this.db
      .deleteFrom('rate_counters')
      .where('window_start', '<', now - 86_400_000)
      .execute();
  }
}
