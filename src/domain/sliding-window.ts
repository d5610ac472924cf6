/**
 * The sliding window of Herald's request limits (rate-limit.ts): at most `limit`
 * accepted requests in any `windowMs`, not per clock window (a burst at the end
 * of one clock minute and another at the start of the next both passed: twice
 * the limit within seconds). Requests are counted in steps of a sixtieth of the
 * window (a minute of the hourly posts limit, a second of the per-minute one);
 * the window sums the steps it touches, including the one it begins in whole, so
 * it never lets more through (it may refuse up to a step early). A request
 * leaves the window one window after the end of its step.
 */

/** Where a bucket stands in its window, as the RateLimit-* headers say it. */
export interface LimitState {
  limit: number;
  remaining: number;
  /** Seconds until the window resets (a sliding window: until the oldest counted request leaves it). */
  resetSeconds: number;
}

/** A bucket's count of one step, as `rate_counters` keeps it. */
export interface StepCount {
  window_start: number;
  count: number;
}

const STEPS_PER_WINDOW = 60;

export function stepMs(windowMs: number): number {
  return Math.max(1, Math.floor(windowMs / STEPS_PER_WINDOW));
}

/** The start of the step `now` falls in: the row a request at `now` is counted in. */
export function stepStart(now: number, windowMs: number): number {
  return now - (now % stepMs(windowMs));
}

/** Steps that start after this touch the window ending at `now`. */
export function countedAfter(now: number, windowMs: number): number {
  return now - windowMs - stepMs(windowMs);
}

/**
 * The limit's state with one more request at `now` counted in `steps` (the
 * bucket's steps, this request included; those the window no longer touches are
 * left out). `used` over `limit` means refused. Reset (Retry-After when refused)
 * is when enough of the oldest requests have left the window for this one to
 * fit; for an accepted one, when the oldest leaves.
 */
export function windowState(steps: StepCount[], limit: number, windowMs: number, now: number): LimitState & { used: number } {
  const after = countedAfter(now, windowMs);
  const counted = steps.filter((s) => s.window_start > after).sort((a, b) => a.window_start - b.window_start);
  const used = counted.reduce((sum, s) => sum + s.count, 0);
  const leave = Math.max(1, used - limit);
  let left = 0;
  let resetSeconds = 1;
  for (const s of counted) {
    left += s.count;
    if (left >= leave) {
      resetSeconds = Math.max(1, Math.ceil((s.window_start + stepMs(windowMs) + windowMs - now) / 1000));
      break;
    }
  }
  return { limit, remaining: Math.max(0, limit - used), resetSeconds, used };
}
