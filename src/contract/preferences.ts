/**
 * A person's display preferences, kept on the server so they follow the person
 * from browser to browser. Null means "not chosen": the browser's own language,
 * zone and clock stand in until the person picks.
 */
import { z } from 'zod';
import { isTimeZone } from '../lib/time.ts';
import { LANGUAGES } from './languages.ts';

export { LANGUAGES, type Language } from './languages.ts';

export const CLOCKS = ['12h', '24h'] as const;
export type Clock = (typeof CLOCKS)[number];

/** 0 Sunday, 1 Monday: the two first days the calendar offers. */
export const WEEK_STARTS = [0, 1] as const;

const language = z.enum(LANGUAGES, { error: `must be one of ${LANGUAGES.join(', ')}` });
const zone = z.string().max(100).refine(isTimeZone, { error: 'must be an IANA time zone such as Europe/Paris or UTC' });
const weekStart = z.union(
  WEEK_STARTS.map((day) => z.literal(day)),
  { error: 'must be 0 (Sunday) or 1 (Monday)' },
);
const clock = z.enum(CLOCKS, { error: 'must be 12h or 24h' });

export const personPreferences = z.object({
  language: language.nullable(),
  zone: z.string().nullable(),
  weekStart: weekStart.nullable(),
  clock: clock.nullable(),
});
export type PersonPreferences = z.infer<typeof personPreferences>;

/** A change: only the fields sent change; null gives a field back to the browser's default. */
export const preferencesChange = z.strictObject({
  language: language.nullable().optional(),
  zone: zone.nullable().optional(),
  weekStart: weekStart.nullable().optional(),
  clock: clock.nullable().optional(),
});
export type PreferencesChange = z.infer<typeof preferencesChange>;
