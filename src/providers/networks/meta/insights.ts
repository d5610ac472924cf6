/**
 * Reading Meta's Insights answers (Facebook Pages, Instagram, Threads), which
 * share one shape: {data: [{name, period, values: [{value, end_time}],
 * total_value: {value}, title, id}]}. Daily metrics come as `values` dated by
 * the end of their day; totals over a range as `total_value`; a post's figures
 * as one lifetime value.
 */
import { day, period } from '../../adapter-kit/analytics-series.ts';
import { metaTime } from './graph.ts';

export interface InsightMetric {
  name: string;
  period?: string;
  values?: { value?: unknown; end_time?: string }[];
  total_value?: { value?: unknown };
  title?: string;
  id?: string;
}

export interface InsightsAnswer {
  data?: InsightMetric[];
}

const DAY_MS = 86_400_000;

/** The last `days` days (from the start of the first, UTC) in ranges of at most `maxDays`, as Unix seconds, oldest first. */
export function insightRanges(days: number, maxDays: number, now = Date.now(), earliest = 0): { since: number; until: number }[] {
  const first = Math.max(Date.parse(`${day(period(days, now).since)}T00:00:00Z`), earliest * 1000);
  const ranges: { since: number; until: number }[] = [];
  for (let from = first; from < now; from += maxDays * DAY_MS) {
    ranges.push({ since: Math.floor(from / 1000), until: Math.floor(Math.min(from + maxDays * DAY_MS, now) / 1000) });
  }
  return ranges;
}

/** A value as a number: a count, or counts by kind (reactions by type) added up. */
export function count(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (value && typeof value === 'object') return Object.values(value).reduce<number>((sum, v) => sum + (typeof v === 'number' ? v : 0), 0);
  return undefined;
}

/** Meta dates a daily value by the end of its day (07:00 or 08:00 UTC the next morning), so it counts for the day before. */
function valueDay(endTime: string): string | undefined {
  const at = metaTime(endTime);
  return Number.isNaN(at) ? undefined : day(at - DAY_MS);
}

/**
 * A metric's daily points across answers for ranges, one per day of the last
 * `days` days (a day two ranges share counts once), or undefined when Meta did
 * not list the metric at all.
 */
export function dailyPoints(answers: InsightsAnswer[], name: string, days: number, now = Date.now()): { date: string; total: number }[] | undefined {
  const metrics = answers.flatMap((a) => a.data ?? []).filter((m) => m.name === name);
  if (metrics.length === 0) return undefined;
  const first = day(period(days, now).since);
  const last = day(now);
  const byDay = new Map<string, number>();
  for (const value of metrics.flatMap((m) => m.values ?? [])) {
    const date = value.end_time ? valueDay(value.end_time) : undefined;
    if (!date || date < first || date > last) continue;
    byDay.set(date, count(value.value) ?? 0);
  }
  return [...byDay].map(([date, total]) => ({ date, total }));
}

/** A metric's figure: its total_value, else its (lifetime) value; added up across answers for consecutive ranges. */
export function figure(answers: InsightsAnswer[], name: string): number | undefined {
  let sum: number | undefined;
  for (const metric of answers.flatMap((a) => a.data ?? []).filter((m) => m.name === name)) {
    const value = metric.total_value ? count(metric.total_value.value) : count(metric.values?.[0]?.value);
    if (value !== undefined) sum = (sum ?? 0) + value;
  }
  return sum;
}
