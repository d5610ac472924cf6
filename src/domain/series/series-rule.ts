/**
 * The rule of a repeating post and the instants it gives. Every occurrence keeps
 * the wall-clock time of the rule's start in the rule's time zone, so a post at
 * 09:00 in Europe/Berlin stays at 09:00 when the clocks change (a time the change
 * skips moves forward by the jump). Weeks start on Monday; "every 2 weeks on Mon
 * and Thu" counts weeks from the week of the start. Pure functions, no store.
 */
import { WEEKDAYS, type RepeatInput, type Weekday } from '../../contract/series.ts';
import { isTimeZone, localDateTime, localDay, parseInstant, zonedInstant } from '../../lib/time.ts';
import type { FieldProblem } from '../errors.ts';

export interface RepeatRule {
  /** The first possible occurrence; its local time of day is every occurrence's. */
  start: number;
  unit: 'day' | 'week';
  /** Every `every` days or weeks. */
  every: number;
  /** Weekly rules: the days of the week (in WEEKDAYS order); null means the start's weekday. */
  weekdays: Weekday[] | null;
  timezone: string;
  /** The last instant an occurrence may have (inclusive). */
  until: number | null;
  /** How many occurrences in all. */
  count: number | null;
}

export interface Occurrence {
  /** 0 for the rule's first occurrence, counted from the start whether created or not. */
  index: number;
  at: number;
}

const DAY_MS = 86_400_000;
const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Days since 1970-01-01 of a calendar date. */
const dayNumber = (y: number, m: number, d: number) => Math.round(Date.UTC(y, m - 1, d) / DAY_MS);

/** "until": a date alone means the whole of that day in the rule's zone; anything else is an instant. */
export function untilInstant(until: string, timezone: string): number | undefined {
  const date = DATE_ONLY.exec(until.trim());
  if (!date) return parseInstant(until);
  if (parseInstant(until) === undefined) return undefined;
  return zonedInstant(timezone, +date[1], +date[2], +date[3] + 1, 0, 0) - 1;
}

/**
 * Checks a rule as the API takes it and gives it in its stored form, or the
 * problems, each naming its field under `at` ("repeat").
 */
export function normaliseRule(input: RepeatInput, now: number, at = 'repeat'): { rule?: RepeatRule; problems: FieldProblem[] } {
  const problems: FieldProblem[] = [];
  const timezone = input.timezone;
  if (!isTimeZone(timezone)) problems.push({ path: `${at}.timezone`, message: 'must be an IANA time zone such as Europe/Berlin or UTC' });
  if (input.weekdays && input.unit !== 'week') problems.push({ path: `${at}.weekdays`, message: 'are for weekly rules: set unit to "week"' });
  if (input.until !== undefined && input.count !== undefined) problems.push({ path: `${at}.count`, message: 'give either until or count, not both' });
  if (problems.length > 0) return { problems };
  const until = input.until === undefined ? null : (untilInstant(input.until, timezone) ?? null);
  if (until !== null && until < input.start) problems.push({ path: `${at}.until`, message: 'must not be before repeat.start' });
  const weekdays = input.weekdays ? WEEKDAYS.filter((d) => input.weekdays!.includes(d)) : null;
  const rule: RepeatRule = { start: input.start, unit: input.unit, every: input.every, weekdays, timezone, until, count: input.count ?? null };
  if (problems.length === 0 && nextOccurrences(rule, now, 1).length === 0) {
    problems.push({ path: at, message: 'has no occurrence after now: its start, until or count ends it in the past' });
  }
  return problems.length > 0 ? { problems } : { rule, problems };
}

/**
 * The rule's occurrences after `after` (all of them when it is not given), in
 * order; endless for a rule without until or count, so callers stop reading.
 * It starts near `after` instead of at the rule's start, so an old series costs
 * no more than a new one.
 */
export function* occurrencesAfter(rule: RepeatRule, after = -Infinity): Generator<Occurrence> {
  const [y, m, d, hour, minute] = localDateTime(rule.timezone, rule.start);
  // Seconds and milliseconds of the start are kept (offsets are whole minutes).
  const withinMinute = ((rule.start % 60_000) + 60_000) % 60_000;
  const startDay = dayNumber(y, m, d);
  const instantOn = (day: number) => {
    const date = new Date(day * DAY_MS);
    return zonedInstant(rule.timezone, date.getUTCFullYear(), date.getUTCMonth() + 1, date.getUTCDate(), hour, minute) + withinMinute;
  };
  // A day before `after`'s local day, so an occurrence later that day is not skipped.
  const fromDay = Number.isFinite(after) ? dayNumber(...localDay(rule.timezone, after)) - 1 : startDay;
  const ended = (o: Occurrence) => (rule.count !== null && o.index >= rule.count) || (rule.until !== null && o.at > rule.until);

  if (rule.unit === 'day') {
    for (let k = Math.max(0, Math.floor((fromDay - startDay) / rule.every)); ; k++) {
      const o = { index: k, at: instantOn(startDay + k * rule.every) };
      if (ended(o)) return;
      if (o.at > after) yield o;
    }
  }

  const startWeekday = (new Date(startDay * DAY_MS).getUTCDay() + 6) % 7;
  const days = (rule.weekdays ?? [WEEKDAYS[startWeekday]]).map((w) => WEEKDAYS.indexOf(w));
  const monday = startDay - startWeekday;
  const firstWeek = days.filter((wd) => wd >= startWeekday).length;
  const span = rule.every * 7;
  for (let block = Math.max(0, Math.floor((fromDay - monday) / span)); ; block++) {
    let index = block === 0 ? 0 : firstWeek + (block - 1) * days.length;
    for (const wd of days) {
      const day = monday + block * span + wd;
      if (day < startDay) continue;
      const o = { index: index++, at: instantOn(day) };
      if (ended(o)) return;
      if (o.at > after) yield o;
    }
  }
}

/** The next `n` occurrences after `after`. */
export function nextOccurrences(rule: RepeatRule, after: number, n: number): Occurrence[] {
  const found: Occurrence[] = [];
  if (n <= 0) return found;
  for (const o of occurrencesAfter(rule, after)) {
    found.push(o);
    if (found.length >= n) break;
  }
  return found;
}

/** The occurrences in (after, through], in order. */
export function occurrencesBetween(rule: RepeatRule, after: number, through: number): Occurrence[] {
  const found: Occurrence[] = [];
  for (const o of occurrencesAfter(rule, after)) {
    if (o.at > through) break;
    found.push(o);
  }
  return found;
}
