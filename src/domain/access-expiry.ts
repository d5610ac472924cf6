/**
 * Access that Herald cannot renew (the network has no refresh, or refused it)
 * still works until the token lapses: the channel publishes until then, and its
 * owner is warned ahead, once per warning, so they reconnect in time.
 */
import type { TokenConfig } from '../providers/types.ts';

const DAY_MS = 24 * 60 * 60_000;

/** How far ahead of the lapse the owner is warned, longest first. */
export const EXPIRY_WARNINGS_MS = [7 * DAY_MS, DAY_MS] as const;

/** When the token really stops working: Meta's tokens keep the lapse apart from the (earlier) time Herald renews them. */
export function accessLapse(config: Record<string, unknown>): number | undefined {
  const { expiresAt, tokenExpiresAt } = config as TokenConfig & { tokenExpiresAt?: number };
  return tokenExpiresAt ?? expiresAt;
}

/**
 * The warning due at `now` (how far ahead it warns), or undefined when none is:
 * only the nearest one passed is sent, and none already sent again.
 */
export function dueWarning(lapsesAt: number, now: number, warned: number | null): number | undefined {
  const passed = EXPIRY_WARNINGS_MS.filter((ahead) => lapsesAt - ahead <= now);
  const nearest = passed.at(-1);
  if (nearest === undefined || (warned !== null && warned <= nearest)) return undefined;
  return nearest;
}

/** When to look at the channel next: the next warning's time, else the lapse itself. */
export function nextLook(lapsesAt: number, now: number): number {
  const next = EXPIRY_WARNINGS_MS.map((ahead) => lapsesAt - ahead).find((at) => at > now);
  return next ?? lapsesAt;
}

/** "in 7 days", "in 20 hours": how long is left, for the warning. */
export function timeLeft(lapsesAt: number, now: number): string {
  const hours = Math.max(1, Math.round((lapsesAt - now) / 3_600_000));
  if (hours < 36) return `in ${hours} hour${hours === 1 ? '' : 's'}`;
  const days = Math.round(hours / 24);
  return `in ${days} days`;
}
