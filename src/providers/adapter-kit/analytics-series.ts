/**
 * Building GET /analytics answers from what networks report: daily figures
 * become a series with its change, a figure that exists only as it stands now
 * (followers, likes of a post) becomes one point dated today.
 */
import type { AnalyticsSeries } from '../types.ts';

/** YYYY-MM-DD (UTC) of an instant. */
export function day(at: number | string | Date): string {
  return new Date(at).toISOString().slice(0, 10);
}

/** The change of the later half's sum against the earlier half's, in percent, one decimal. */
export function percentageChange(values: number[]): number {
  if (values.length < 2) return 0;
  const half = Math.floor(values.length / 2);
  const earlier = values.slice(0, half).reduce((a, b) => a + b, 0);
  const later = values.slice(values.length - half).reduce((a, b) => a + b, 0);
  return earlier === 0 ? 0 : Math.round(((later - earlier) / earlier) * 1000) / 10;
}

/** A daily series, in date order; numbers that are not finite count as 0. */
export function dailySeries(label: string, points: { date: string; total: number }[]): AnalyticsSeries {
  const data = [...points].map((p) => ({ date: p.date, total: Number.isFinite(p.total) ? p.total : 0 })).sort((a, b) => a.date.localeCompare(b.date));
  return { label, data, percentageChange: percentageChange(data.map((p) => p.total)) };
}

/** Figures as they stand now, one series each. */
export function currentFigures(figures: Record<string, number | undefined>, now = Date.now()): AnalyticsSeries[] {
  return Object.entries(figures)
    .filter((e): e is [string, number] => typeof e[1] === 'number' && Number.isFinite(e[1]))
    .map(([label, total]) => ({ label, data: [{ total, date: day(now) }], percentageChange: 0 }));
}

/** The first and last day of a period of `days` days ending today (UTC). */
export function period(days: number, now = Date.now()): { since: Date; until: Date } {
  const until = new Date(now);
  return { since: new Date(now - (days - 1) * 86_400_000), until };
}
