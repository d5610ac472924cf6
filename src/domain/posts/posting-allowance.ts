/**
 * The account's hourly allowance of requests that create posts
 * (HERALD_POSTS_PER_HOUR). POST /posts, a CSV import, a new series and the MCP
 * tools that do the same each count once, however many posts or occurrences
 * they make, in one sliding hour that every process shares (rate-limit.ts).
 * Posts holds it (Posts.takeAllowance): Posts.create and Series.create take it
 * once the request passed its checks, so no caller counts it, or forgets to.
 */
import type { Config } from '../../config.ts';
import type { RateLimiter } from '../rate-limit.ts';
import type { LimitState } from '../sliding-window.ts';

const HOUR_MS = 3_600_000;

/** Counts one request of the account at `now`; 429 rate_limited, with Retry-After, once the hour's allowance is used. */
export function takePostingAllowance(
  deps: { rateLimiter: RateLimiter; config: Pick<Config, 'postsPerHour'> },
  accountId: string,
  now = Date.now(),
): Promise<LimitState> {
  // Named as POST /posts in the refusal whichever request it was: they share one allowance.
  return deps.rateLimiter.consumeSliding(`posts:${accountId}`, deps.config.postsPerHour, HOUR_MS, 'POST /posts', now);
}
