/** Media as the public API shows it and takes it in posts. */
import { z } from 'zod';

/** A media tag: letters, digits, spaces and hyphens (so it never needs escaping in a LIKE pattern), up to 40 characters. */
export const MEDIA_TAG = /^[\p{L}\p{N}][\p{L}\p{N} -]{0,39}$/u;

/** A media library tag (see MEDIA_TAG). */
export const mediaTag = z.string().trim().regex(MEDIA_TAG, 'must be 1 to 40 letters, digits, spaces or hyphens');

export const mediaRef = z.object({
  id: z.string().max(200).optional(),
  path: z.string().min(1).max(2048).describe('URL of media uploaded to this service'),
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

/** Items per page of the media library. */
export const MEDIA_PAGE_SIZE = 50;
export const mediaPage = z.object({ media: z.array(mediaObject), total: z.number(), page: z.number(), limit: z.number(), hasMore: z.boolean() });

export const uploadFromUrlBody = z.object({ url: z.string().min(1).max(2048) });
export const deletedMedia = z.object({ id: z.string(), deleted: z.literal(true) });
