/** The account's notifications and short links, as the public API answers them. */
import { z } from 'zod';

export const notificationsPage = z.object({
  notifications: z.array(z.object({ id: z.string(), content: z.string(), link: z.string().nullable(), createdAt: z.string() })),
  total: z.number(),
  page: z.number(),
  limit: z.number(),
  hasMore: z.boolean(),
});

export const shortLink = z.object({ code: z.string(), url: z.string(), clicks: z.number(), createdAt: z.string() });

/** GET /is-connected. */
export const connected = z.object({ connected: z.boolean() });
