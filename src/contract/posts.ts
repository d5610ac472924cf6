/** Posts: what POST /posts takes and what the post lists and details answer. */
import { z } from 'zod';
import { isoInstant, optionalId, wholeNumber } from './common.ts';
import { mediaRef } from './media.ts';
import { approvalState } from './approvals.ts';

const tag = z.union([
  z
    .string()
    .max(200)
    .transform((v) => ({ value: v, label: v })),
  z.object({ value: z.string().max(200), label: z.string().max(200).optional() }).transform((t) => ({ value: t.value, label: t.label ?? t.value })),
]);

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
  approval: approvalState,
  seriesId: z.string().nullable().describe('The repeating post (GET /series/{id}) this post is an occurrence of; null for other posts'),
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

/** POST /posts answers one entry per channel. */
export const createdPosts = z.array(z.object({ postId: z.string(), integration: z.string() }));
export const deletedPost = z.object({ deleted: z.boolean(), id: z.string(), group: z.string() });
export const deletedGroup = z.object({ deleted: z.boolean(), group: z.string(), ids: z.array(z.string()) });

/** A post the network lists for the channel (GET /posts/{id}/missing), to match a post published by hand. */
export const recentPost = z.object({ id: z.string(), url: z.string(), text: z.string().optional(), at: z.string().optional() });

export const postsList = z.object({ posts: z.array(postSummary) });
export const postStatusBody = z.object({ status: z.enum(['draft', 'schedule']) });
export const postStatus = z.object({ id: z.string(), state: z.string() });
export const postSettingsBody = z.object({ settings: z.record(z.string(), z.unknown()) });
export const postSettings = z.object({ id: z.string(), settings: z.record(z.string(), z.unknown()) });
export const releaseIdBody = z.object({ releaseId: z.string().min(1).max(500) });
export const releaseIdSet = z.object({ id: z.string(), releaseId: z.string(), state: z.string() });
