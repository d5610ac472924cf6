/**
 * Node keeps a timer's delay in a signed 32-bit count of milliseconds: a longer
 * one (past about 24.8 days) fires at once, with a TimeoutOverflowWarning. Every
 * timer whose delay is computed (a post's time, a network's retry-after, a
 * setting) takes it through `timerDelay`.
 */

/** The longest delay setTimeout, setInterval and AbortSignal.timeout honour (2^31 - 1 ms, about 24.8 days). */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * `ms` as a delay a timer honours: never negative, never past MAX_TIMER_MS. A
 * caller that must wait longer arms again when the capped timer fires.
 */
export function timerDelay(ms: number): number {
  if (!(ms > 0)) return 0;
  return Math.min(ms, MAX_TIMER_MS);
}
