/**
 * Request and response schemas of the public API. The same objects validate
 * requests, shape responses and generate the OpenAPI document at /api/docs.
 */
import { z } from 'zod';
import { parseInstant } from '../../lib/time.ts';
import { MEDIA_TAG } from '../../domain/media-tag.ts';

/** Clients send "" for "not given" (value[].id, posts[].group). */
const optionalId = z
  .string()
  .max(200)
  .optional()
  .transform((v) => (v ? v : undefined));

export const isoInstant = z
  .string()
  .refine((v) => parseInstant(v) !== undefined, { error: 'must be an ISO 8601 date-time, e.g. 2026-12-01T09:00:00.000Z' })
  .transform((v) => parseInstant(v) as number);

export const idParam = z.object({ id: z.string().min(1).max(200) });

/** A media library tag (see MEDIA_TAG). */
export const mediaTag = z.string().trim().regex(MEDIA_TAG, 'must be 1 to 40 letters, digits, spaces or hyphens');

export const mediaRef = z.object({
  id: z.string().max(200).optional(),
  path: z.string().min(1).max(2048).describe('URL of media uploaded to this service'),
});

const tag = z.union([
  z
    .string()
    .max(200)
    .transform((v) => ({ value: v, label: v })),
  z.object({ value: z.string().max(200), label: z.string().max(200).optional() }).transform((t) => ({ value: t.value, label: t.label ?? t.value })),
]);

/**
 * A whole number sent as a number or as decimal digits ("5", as query strings and
 * some clients send it); never true, [1] or "0x10", which Number() would also
 * turn into a number.
 */
export function wholeNumber(min: number, max: number) {
  return z
    .union(
      [
        z.number(),
        z
          .string()
          .regex(/^\d{1,15}$/, 'must be a whole number (digits only)')
          .transform(Number),
      ],
      { error: 'must be a whole number' },
    )
    .pipe(z.number().int().min(min).max(max));
}

export const threadItem = z.object({
  id: optionalId,
  content: z.string().max(200_000),
  image: z.array(mediaRef).max(50).optional().default([]),
  delay: wholeNumber(0, 60 * 24 * 30)
    .optional()
    .default(0)
    .describe('Minutes after the previous item'),
});

export const postEntry = z.object({
  integration: z.object({ id: z.string().min(1).max(200) }),
  value: z.array(threadItem).min(1).max(100),
  settings: z.record(z.string(), z.unknown()).optional(),
  group: optionalId,
});

export const createPostsBody = z.object({
  type: z.enum(['draft', 'schedule', 'now', 'update']),
  date: isoInstant.optional(),
  shortLink: z.boolean().optional().default(false),
  tags: z.array(tag).max(50).optional().default([]),
  posts: z.array(postEntry).min(1).max(50),
  creationMethod: z.string().max(50).optional(),
});
export type CreatePostsBody = z.output<typeof createPostsBody>;

export const listPostsQuery = z.object({
  startDate: isoInstant,
  endDate: isoInstant,
  customer: z.string().max(200).optional(),
});

export const integration = z.object({
  id: z.string(),
  name: z.string(),
  identifier: z.string(),
  picture: z.string().nullable(),
  disabled: z.boolean(),
  profile: z.string().nullable(),
  customer: z.object({ id: z.string(), name: z.string() }).nullable(),
  needsReconnect: z.boolean(),
  timeZone: z.string(),
  postingTimes: z.array(z.string()),
  defaultSettings: z.record(z.string(), z.unknown()).describe("The network's post settings a new post on this channel starts from"),
});

const postingTime = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, { error: 'must be a local time HH:MM' });

export const createIntegrationBody = z.object({
  identifier: z.string().min(1).max(50),
  name: z.string().min(1).max(200).optional(),
  credentials: z.record(z.string(), z.unknown()).optional().default({}),
  timeZone: z.string().max(100).optional(),
  postingTimes: z.array(postingTime).min(1).max(48).optional(),
  customer: z.string().max(200).optional(),
});

export const updateIntegrationBody = z.object({
  name: z.string().min(1).max(200).optional(),
  timeZone: z.string().max(100).optional(),
  postingTimes: z.array(postingTime).min(1).max(48).optional(),
  customer: z.string().max(200).nullable().optional(),
  disabled: z.boolean().optional(),
  defaultSettings: z
    .record(z.string(), z.unknown())
    .optional()
    .describe("The network's post settings a new post starts from (checked against the network's settings schema)"),
});

export const mediaObject = z.object({
  id: z.string(),
  name: z.string(),
  originalName: z.string(),
  path: z.string(),
  thumbnail: z.string().nullable(),
  alt: z.string().nullable(),
  mimeType: z.string(),
  size: z.number(),
  width: z.number().nullable(),
  height: z.number().nullable(),
  duration: z.number().nullable(),
  tags: z.array(z.string()).describe('Tags given in the web application’s media library'),
});

export const postSummary = z.object({
  id: z.string(),
  content: z.string(),
  publishDate: z.string(),
  releaseURL: z.string().nullable(),
  releaseId: z.string().nullable(),
  state: z.enum(['QUEUE', 'PUBLISHED', 'ERROR', 'DRAFT']),
  group: z.string(),
  creationMethod: z.string(),
  settings: z.record(z.string(), z.unknown()),
  tags: z.array(z.object({ value: z.string(), label: z.string() })),
  image: z.array(mediaRef),
  error: z.string().nullable(),
  warning: z.string().nullable(),
  integration: z.object({ id: z.string(), providerIdentifier: z.string(), name: z.string(), picture: z.string().nullable() }),
});
export type PostSummary = z.output<typeof postSummary>;

export const threadItemState = z.object({
  id: z.string(),
  content: z.string(),
  image: z.array(mediaRef),
  delay: z.number(),
  state: z.enum(['QUEUE', 'PUBLISHED', 'ERROR', 'DRAFT']),
  publishDate: z.string(),
  releaseId: z.string().nullable(),
  releaseURL: z.string().nullable(),
  error: z.string().nullable(),
  attempts: z.array(z.object({ startedAt: z.string(), finishedAt: z.string().nullable(), outcome: z.string(), detail: z.string().nullable() })),
});

export const postDetail = postSummary.extend({ thread: z.array(threadItemState) });

export const errorBody = z.object({
  statusCode: z.number(),
  error: z.string(),
  message: z.string(),
  msg: z.string(),
  code: z.string(),
  errors: z.array(z.object({ path: z.string(), message: z.string() })),
});
