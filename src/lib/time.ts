/**
 * Instants are epoch ms in UTC everywhere inside Herald. Input may carry any ISO
 * 8601 offset; a timestamp without one means UTC (never the server's zone).
 */
const ISO_8601 = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?)?(Z|[+-]\d{2}(?::?\d{2})?)?$/i;

/** Parses an ISO 8601 date or date-time; undefined when it is not one or names no real day. */
export function parseInstant(text: string): number | undefined {
  const m = ISO_8601.exec(text.trim());
  if (!m) return undefined;
  const [, y, mo, d, h = '00', mi = '00', s = '00', frac = '', zone = 'Z'] = m;
  const ms = Number((frac + '000').slice(0, 3));
  // Not Date.UTC: it reads the years 0 to 99 as 1900 to 1999.
  const check = new Date(0);
  check.setUTCFullYear(+y, +mo - 1, +d);
  check.setUTCHours(+h, +mi, +s, ms);
  const local = check.getTime();
  if (check.getUTCFullYear() !== +y || check.getUTCMonth() !== +mo - 1 || check.getUTCDate() !== +d || +h > 23 || +mi > 59 || +s > 59) {
    return undefined;
  }
  if (zone.toUpperCase() === 'Z') return local;
  const sign = zone[0] === '-' ? -1 : 1;
  const digits = zone.slice(1).replace(':', '');
  const offset = (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2, 4) || '0')) * sign;
  if (Math.abs(offset) > 18 * 60) return undefined;
  return local - offset * 60_000;
}

export function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/**
 * Instant `at` as the wall clock in `zone` with that moment's offset,
 * 2031-10-26T02:30:00+01:00 (milliseconds only when there are some): local
 * time to read, and one instant even in the hour a daylight-saving change repeats.
 */
export function zonedIso(zone: string, at: number): string {
  const offset = offsetMinutes(zone, at);
  const wall = new Date(at + offset * 60_000);
  const two = (n: number) => String(n).padStart(2, '0');
  const ms = wall.getUTCMilliseconds();
  const date = `${String(wall.getUTCFullYear()).padStart(4, '0')}-${two(wall.getUTCMonth() + 1)}-${two(wall.getUTCDate())}`;
  const time = `${two(wall.getUTCHours())}:${two(wall.getUTCMinutes())}:${two(wall.getUTCSeconds())}${ms ? `.${String(ms).padStart(3, '0')}` : ''}`;
  const sign = offset < 0 ? '-' : '+';
  return `${date}T${time}${sign}${two(Math.floor(Math.abs(offset) / 60))}:${two(Math.abs(offset) % 60)}`;
}

export function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

const partsFormatters = new Map<string, Intl.DateTimeFormat>();

/** Offset of `zone` from UTC at instant `at`, in minutes. */
function offsetMinutes(zone: string, at: number): number {
  let f = partsFormatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    partsFormatters.set(zone, f);
  }
  const p = Object.fromEntries(f.formatToParts(at).map((x) => [x.type, x.value]));
  const asUtc = Date.UTC(+p.year, +p.month - 1, +p.day, +p.hour, +p.minute, +p.second);
  return Math.round((asUtc - (at - (at % 1000))) / 60_000);
}

/** The calendar day (in `zone`) of instant `at`, as [year, month(1-12), day]. */
export function localDay(zone: string, at: number): [number, number, number] {
  const shifted = new Date(at + offsetMinutes(zone, at) * 60_000);
  return [shifted.getUTCFullYear(), shifted.getUTCMonth() + 1, shifted.getUTCDate()];
}

/** The wall clock (in `zone`) at instant `at`, as [year, month(1-12), day, hour, minute]. */
export function localDateTime(zone: string, at: number): [number, number, number, number, number] {
  const shifted = new Date(at + offsetMinutes(zone, at) * 60_000);
  return [shifted.getUTCFullYear(), shifted.getUTCMonth() + 1, shifted.getUTCDate(), shifted.getUTCHours(), shifted.getUTCMinutes()];
}

/**
 * The instant at which the wall clock in `zone` shows the given local time.
 * A time skipped by a daylight-saving jump moves forward by the jump.
 */
export function zonedInstant(zone: string, year: number, month: number, day: number, hour: number, minute: number): number {
  const wall = Date.UTC(year, month - 1, day, hour, minute);
  let guess = wall - offsetMinutes(zone, wall) * 60_000;
  // A second pass settles guesses that crossed an offset change.
  guess = wall - offsetMinutes(zone, guess) * 60_000;
  return guess;
}
