/** Repeating posts: what /series takes and answers. */
import { z } from 'zod';
import { isoInstant, wholeNumber } from './common.ts';
import { mediaRef } from './media.ts';
import { createPostsBody } from './posts.ts';

export const WEEKDAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

const DATE_OR_INSTANT = /^\d{4}-\d{2}-\d{2}$/;

export const repeatRuleBody = z.object({
  start: isoInstant.describe("The first possible occurrence; every occurrence is at this time of day in the rule's time zone"),
  unit: z.enum(['day', 'week']).describe('Repeat every `every` days or weeks'),
  every: wholeNumber(1, 365).optional().default(1).describe('Every how many days or weeks (1 to 365)'),
  weekdays: z
    .array(z.enum(WEEKDAYS))
    .min(1)
    .max(7)
    .nullable()
    .optional()
    .transform((v) => v ?? undefined)
    .describe("Weekly rules: on these days of the week (mon … sun); by default the start's weekday"),
  timezone: z
    .string()
    .min(1)
    .max(100)
    .optional()
    .default('UTC')
    .describe('IANA time zone (Europe/Berlin) whose wall clock the occurrences keep across daylight-saving changes'),
  until: z
    .string()
    .max(40)
    .refine((v) => DATE_OR_INSTANT.test(v.trim()) || isoInstant.safeParse(v).success, {
      error: 'must be a date (2026-12-31, the whole day counts) or an ISO 8601 date-time',
    })
    .nullable()
    .optional()
    .transform((v) => v ?? undefined)
    .describe('No occurrence after this: a date (the whole day in the time zone counts) or an instant'),
  count: wholeNumber(1, 1000)
    .nullable()
    .optional()
    .transform((v) => v ?? undefined)
    .describe('How many occurrences in all (1 to 1000); give until or count, or neither for no end'),
});
export type RepeatInput = z.output<typeof repeatRuleBody>;

/**
 * POST /series and PUT /series/{id}: the rule, and the post to repeat as POST /posts takes it (without type and date).
 * What GET /series/{id} answers can be sent back as it is (nulls for what is not set).
 */
export const seriesBody = z.object({
  name: z
    .string()
    .trim()
    .min(1)
    .max(200)
    .nullable()
    .optional()
    .transform((v) => v ?? undefined)
    .describe('A name for the series, shown in the web application'),
  repeat: repeatRuleBody,
  shortLink: createPostsBody.shape.shortLink,
  tags: createPostsBody.shape.tags,
  posts: createPostsBody.shape.posts,
});
export type SeriesBody = z.output<typeof seriesBody>;

export const repeatRule = z.object({
  start: z.string(),
  unit: z.enum(['day', 'week']),
  every: z.number(),
  weekdays: z.array(z.enum(WEEKDAYS)).nullable(),
  timezone: z.string(),
  until: z.string().nullable().describe('The last instant an occurrence may have'),
  count: z.number().nullable(),
});

const seriesEntry = z.object({
  integration: z.object({ id: z.string() }),
  value: z.array(z.object({ content: z.string(), image: z.array(mediaRef), delay: z.number() })),
  settings: z.record(z.string(), z.unknown()).optional(),
});

export const series = z.object({
  id: z.string(),
  name: z.string().nullable(),
  repeat: repeatRule,
  shortLink: z.boolean(),
  tags: z.array(z.object({ value: z.string(), label: z.string() })),
  posts: z.array(seriesEntry),
  state: z.enum(['active', 'ended']).describe('"ended": the rule has no occurrence left after now'),
  upcoming: z.array(z.string()).describe("The rule's next occurrences after now (at most 5), created yet or not"),
  lastError: z.string().nullable().describe('Why the last occurrence could not be created (a channel removed, media deleted); null once one was'),
  createdAt: z.string(),
  updatedAt: z.string(),
});

export const seriesOccurrence = z.object({
  at: z.string(),
  index: z.number().describe("The occurrence's place in the rule, from 0"),
  detached: z.boolean().describe('Changed or deleted on its own: edits of the series leave it as it is'),
  posts: z.array(
    z.object({
      id: z.string(),
      group: z.string(),
      integration: z.string(),
      state: z.enum(['QUEUE', 'PUBLISHED', 'ERROR', 'DRAFT']),
      publishDate: z.string(),
    }),
  ),
});

/** GET /series/{id}: the series and its latest occurrences (up to 100, in time order). */
export const seriesDetail = series.extend({ occurrences: z.array(seriesOccurrence) });

export const deletedSeries = z.object({
  deleted: z.boolean(),
  id: z.string(),
  removedPosts: z.array(z.string()).describe('Posts of occurrences not yet published, deleted with the series'),
});
