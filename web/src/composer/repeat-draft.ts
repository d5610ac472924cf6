/**
 * The composer's "Repeat" fields as values: the draft of a rule, the `repeat`
 * it makes for /series, and a stored rule read back to edit it. Pure (no
 * React, no DOM), so the request builder and its unit tests use it.
 */
import type { RepeatRule } from '../api.ts';
import { toLocalInput } from '../wall-clock.ts';

export const WEEKDAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

export interface RepeatDraft {
  on: boolean;
  name: string;
  unit: 'day' | 'week';
  every: number;
  weekdays: Weekday[];
  end: 'never' | 'until' | 'count';
  /** YYYY-MM-DD: the last day (in the rule's zone) an occurrence may fall on. */
  until: string;
  count: number;
}

export const noRepeat = (): RepeatDraft => ({ on: false, name: '', unit: 'week', every: 1, weekdays: [], end: 'never', until: '', count: 10 });

/** The weekday (mon … sun) of a YYYY-MM-DDTHH:MM local date. */
export function weekdayOf(local: string): Weekday {
  const day = new Date(`${local.slice(0, 10)}T00:00:00Z`).getUTCDay();
  return WEEKDAYS[(day + 6) % 7]!;
}

/** The `repeat` of a POST /series body; `start` is the composer's date and time, in `zone`. */
export function repeatBody(draft: RepeatDraft, start: number, zone: string) {
  return {
    start: new Date(start).toISOString(),
    unit: draft.unit,
    every: draft.every,
    ...(draft.unit === 'week' && draft.weekdays.length > 0 ? { weekdays: draft.weekdays } : {}),
    timezone: zone,
    ...(draft.end === 'until' ? { until: draft.until } : {}),
    ...(draft.end === 'count' ? { count: draft.count } : {}),
  };
}

/** The fields of a stored rule, to edit it. */
export function fromRule(rule: RepeatRule, name: string | null): RepeatDraft {
  return {
    on: true,
    name: name ?? '',
    unit: rule.unit,
    every: rule.every,
    weekdays: rule.weekdays ?? [],
    end: rule.until ? 'until' : rule.count ? 'count' : 'never',
    until: rule.until ? toLocalInput(Date.parse(rule.until), rule.timezone).slice(0, 10) : '',
    count: rule.count ?? 10,
  };
}
