/**
 * Request counters kept in the database, so every process of a deployment shares
 * them. Herald's own limits keep the sliding window of sliding-window.ts (a
 * burst across a clock window's edge never gets twice the allowance):
 * `consumeSliding` exactly, for the posts allowance, sign-in, device codes and
 * preview comments; `consumeBatched` counting in memory and adding to the shared
 * rows a few times a second, for the per-key limit every request passes.
 * `consumeFixed` counts in clock windows, as the networks whose pace Herald keeps
 * count theirs.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.ts';
import { ApiError } from './errors.ts';
import { inBackground } from '../lib/background.ts';
import { countedAfter, type LimitState, type StepCount, stepStart, windowState } from './sliding-window.ts';

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
/** Counts read longer ago than this are read again before a request is answered (a process idle for a while). */
const STALE_MS = 4 * SYNC_MS;

/** One bucket's sliding window as this process knows it. */
interface LocalWindow {
  windowMs: number;
  /** Per step: the shared count as last read (all processes), and what this process counted since it last wrote. */
  steps: Map<number, { shared: number; pending: number }>;
  /** The time of the latest request (the caller's clock): the window the counts are read back for ends there. */
  latest: number;
  /** When the counts were last read (the same clock). */
  readAt: number;
  /** When this bucket's rows that no window touches any more were last deleted. */
  clearedAt: number;
  /** Resolves once the window's counts were first read. */
  ready: Promise<void>;
}

function tooMany(what: string, limit: number, windowMs: number, state: LimitState): ApiError {
  const per = windowMs >= 3_600_000 ? `${windowMs / 3_600_000} hour(s)` : `${windowMs / 60_000} minute(s)`;
  return new ApiError('rate_limited', `${what}: at most ${limit} requests per ${per}; try again in ${state.resetSeconds} s`, [], {
    'Retry-After': String(state.resetSeconds),
    ...limitHeaders(state),
  });
}

function windowOf(now: number, windowMs: number) {
  const windowStart = now - (now % windowMs);
  return { windowStart, resetSeconds: Math.max(1, Math.ceil((windowStart + windowMs - now) / 1000)) };
}

const pendingIn = (entry: LocalWindow) => [...entry.steps.values()].reduce((sum, step) => sum + step.pending, 0);

export class RateLimiter {
  private readonly local = new Map<string, LocalWindow>();
  private timer?: NodeJS.Timeout;
  private syncing?: Promise<void>;
  private failedSyncs = 0;

  constructor(private readonly db: Kysely<Database>) {}

  /**
   * Counts one request against `bucket` in its clock window; throws 429 (with
   * Retry-After and the rate-limit headers) when the window's allowance is used up.
   */
  async consumeFixed(bucket: string, limit: number, windowMs: number, what: string, now = Date.now()): Promise<LimitState> {
    const { windowStart, resetSeconds } = windowOf(now, windowMs);
    const count = await this.add(bucket, windowStart, 1);
    const state = { limit, remaining: Math.max(0, limit - count), resetSeconds };
    if (count > limit) throw tooMany(what, limit, windowMs, state);
    return state;
  }

  /** Like consumeFixed, over the sliding window (sliding-window.ts). A refused request takes itself back. */
  async consumeSliding(bucket: string, limit: number, windowMs: number, what: string, now = Date.now()): Promise<LimitState> {
    const step = stepStart(now, windowMs);
    // The steps before this one no longer change; this step's count is an atomic increment,
    // so parallel requests each see a different total and exactly the allowance passes.
    const earlier = await this.readWindow(bucket, windowMs, now, step);
    const current = await this.add(bucket, step, 1);
    const { used, ...state } = windowState([...earlier, { window_start: step, count: current }], limit, windowMs, now);
    if (used > limit) {
      await this.add(bucket, step, -1);
      throw tooMany(what, limit, windowMs, state);
    }
    return state;
  }

  /**
   * Like consumeSliding, without a database write per request. Other processes'
   * counts arrive within SYNC_MS, so a deployment of several processes may let a
   * few requests over the limit during that time; one process alone is exact.
   */
  async consumeBatched(bucket: string, limit: number, windowMs: number, what: string, now = Date.now()): Promise<LimitState> {
    let entry = this.local.get(bucket);
    if (!entry || (now - entry.readAt > STALE_MS && pendingIn(entry) === 0)) entry = this.open(bucket, windowMs, now);
    await entry.ready;
    entry.latest = Math.max(entry.latest, now);
    const current = stepStart(now, windowMs);
    const counts = [...entry.steps].map(([start, step]) => ({ window_start: start, count: step.shared + step.pending }));
    const { used, ...state } = windowState([...counts, { window_start: current, count: 1 }], limit, windowMs, now);
    if (used > limit) throw tooMany(what, limit, windowMs, state);
    const step = entry.steps.get(current) ?? { shared: 0, pending: 0 };
    step.pending++;
    entry.steps.set(current, step);
    this.scheduleSync(SYNC_MS);
    return state;
  }

  /** A bucket's window as this process starts to count it: what every process counted so far. */
  private open(bucket: string, windowMs: number, now: number): LocalWindow {
    const entry: LocalWindow = { windowMs, steps: new Map(), latest: now, readAt: now, clearedAt: now, ready: Promise.resolve() };
    entry.ready = this.readWindow(bucket, windowMs, now).then(
      (rows) => {
        for (const row of rows) entry.steps.set(row.window_start, { shared: row.count, pending: 0 });
      },
      (err: unknown) => {
        // The next request reads again rather than failing for ever.
        if (this.local.get(bucket) === entry) this.local.delete(bucket);
        throw err;
      },
    );
    this.local.set(bucket, entry);
    return entry;
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

  /** Adds this process's counts to the shared rows and reads back what every process counted. */
  async sync(): Promise<void> {
    if (this.syncing) return this.syncing;
    this.syncing = (async () => {
      for (const [bucket, entry] of this.local) {
        if (pendingIn(entry) === 0) {
          // Nothing new here since the last sync: read again at this bucket's next request.
          if (entry.latest + entry.windowMs < Date.now()) this.local.delete(bucket);
          continue;
        }
        for (const [start, step] of entry.steps) {
          const pending = step.pending;
          if (pending === 0) continue;
          // Still counted while the write is under way: requests answered meanwhile see them.
          step.pending -= pending;
          step.shared += pending;
          try {
            step.shared = await this.add(bucket, start, pending);
          } catch (err) {
            // Not written: counted again at the next sync, so no request goes uncounted.
            step.shared -= pending;
            step.pending += pending;
            throw err;
          }
        }
        await this.readBack(bucket, entry);
      }
    })().finally(() => {
      this.syncing = undefined;
    });
    return this.syncing;
  }

  /** Replaces the shared counts with the database's (other processes' included); drops steps that left the window. */
  private async readBack(bucket: string, entry: LocalWindow): Promise<void> {
    const at = entry.latest;
    const rows = await this.readWindow(bucket, entry.windowMs, at);
    const steps = new Map(rows.map((row) => [row.window_start, { shared: row.count, pending: entry.steps.get(row.window_start)?.pending ?? 0 }]));
    // Requests counted since the write, in a step the database does not have yet.
    for (const [start, step] of entry.steps) if (step.pending > 0 && !steps.has(start)) steps.set(start, { shared: 0, pending: step.pending });
    entry.steps = steps;
    entry.readAt = at;
    // A busy key fills a row a second: those no window touches any more go once a window, not only at the daily prune.
    if (at - entry.clearedAt >= entry.windowMs) {
      entry.clearedAt = at;
      await this.db
        .deleteFrom('rate_counters')
        .where('bucket', '=', bucket)
        .where('window_start', '<', at - 2 * entry.windowMs)
        .execute();
    }
  }

  /** The bucket's steps the window ending at `now` touches, oldest first (before `until`, when given). */
  private readWindow(bucket: string, windowMs: number, now: number, until = Number.MAX_SAFE_INTEGER): Promise<StepCount[]> {
    return this.db
      .selectFrom('rate_counters')
      .select(['window_start', 'count'])
      .where('bucket', '=', bucket)
      .where('window_start', '>', countedAfter(now, windowMs))
      .where('window_start', '<', until)
      .orderBy('window_start')
      .execute();
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
