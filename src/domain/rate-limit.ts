/**
 * Fixed-window request counters kept in the database, so every process of a
 * deployment shares them. One upsert per counted request.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.ts';
import { ApiError } from './errors.ts';

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

export class RateLimiter {
  constructor(private readonly db: Kysely<Database>) {}

  /**
   * Counts one request against `bucket`; throws 429 (with Retry-After and the
   * rate-limit headers) when the window's allowance is used up.
   */
  async consume(bucket: string, limit: number, windowMs: number, what: string, now = Date.now()): Promise<LimitState> {
    const windowStart = now - (now % windowMs);
    const row = await this.db
      .insertInto('rate_counters')
      .values({ bucket, window_start: windowStart, count: 1 })
      .onConflict((oc) => oc.columns(['bucket', 'window_start']).doUpdateSet((eb) => ({ count: eb('rate_counters.count', '+', 1) })))
      .returning('count')
      .executeTakeFirstOrThrow();
    const resetSeconds = Math.max(1, Math.ceil((windowStart + windowMs - now) / 1000));
    const state = { limit, remaining: Math.max(0, limit - row.count), resetSeconds };
    if (row.count > limit) {
      throw new ApiError(429, 'rate_limited', `${what}: at most ${limit} requests per ${windowMs / 60_000} minutes; try again in ${resetSeconds} s`, [], {
        'Retry-After': String(resetSeconds),
        ...limitHeaders(state),
      });
    }
    return state;
  }

  /** Drops windows that ended more than a day ago. */
  async prune(now = Date.now()): Promise<void> {
    await this.db.deleteFrom('rate_counters').where('window_start', '<', now - 86_400_000).execute();
  }
}
