/** RSS and Atom subscriptions: what /feeds takes and answers. */
import { z } from 'zod';

/** What the post text may name of an item. */
export const FEED_PLACEHOLDERS = ['title', 'link', 'summary'] as const;

/** When a new item is posted: at once, at each channel's next free slot, or as a draft for review. */
export const FEED_MODES = ['now', 'slot', 'draft'] as const;

export const DEFAULT_FEED_TEMPLATE = '{title}\n\n{link}';

const feedUrl = z
  .url({ protocol: /^https?$/, error: 'must be an http(s) URL' })
  .max(2048)
  .describe('The RSS or Atom feed; must be a public address');
const channels = z.array(z.string().min(1).max(200)).min(1).max(50).describe('Ids of the channels each new item is posted to');
const template = z
  .string()
  .max(5000)
  .refine((v) => v.trim() !== '', { error: 'must not be empty' })
  .superRefine((v, ctx) => {
    const unknown = [...v.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).find((p) => !(FEED_PLACEHOLDERS as readonly string[]).includes(p));
    if (unknown) ctx.addIssue({ code: 'custom', message: `has an unknown placeholder {${unknown}}; use {title}, {link} or {summary}` });
  })
  .describe(`The post text; {title}, {link} and {summary} are replaced by the item's (default "${DEFAULT_FEED_TEMPLATE.replace(/\n/g, '\\n')}")`);
const mode = z.enum(FEED_MODES).describe('"now": posted at once; "slot": at each channel\'s next free posting time; "draft": saved as drafts for review');
const attachImage = z.boolean().describe("Attach the item's image (its enclosure or media:content) to the post when it has one");
const name = z.string().trim().min(1).max(200);

export const feed = z.object({
  id: z.string(),
  url: z.string(),
  name: z.string().nullable().describe("The subscription's name; null shows the feed's own title"),
  title: z.string().nullable().describe("The feed's own title, from its last successful read"),
  channels: z.array(z.string()),
  template: z.string(),
  mode: z.enum(FEED_MODES),
  attachImage: z.boolean(),
  paused: z.boolean(),
  state: z
    .enum(['waiting', 'ok', 'failing', 'paused'])
    .describe('"waiting": not read yet; "ok": the last read worked; "failing": the last read failed (see lastError); "paused"'),
  lastError: z.string().nullable(),
  failures: z.number().describe('Failed reads in a row'),
  lastFetchedAt: z.string().nullable(),
  lastSuccessAt: z.string().nullable(),
  nextFetchAt: z.string().nullable().describe('When the feed is read next (null while paused)'),
  createdAt: z.string(),
  updatedAt: z.string(),
});

export const feedItem = z.object({
  key: z.string().describe("The item's guid, or its link when it has none"),
  title: z.string().nullable(),
  link: z.string().nullable(),
  postIds: z.array(z.string()).describe('The posts made from it; empty for items that existed when the feed was first read'),
  note: z.string().nullable(),
  seenAt: z.string(),
});

/** GET /feeds/{id}: the subscription and the items it saw last. */
export const feedDetail = feed.extend({ recentItems: z.array(feedItem) });

export const createFeedBody = z.object({
  url: feedUrl,
  channels,
  template: template.optional().default(DEFAULT_FEED_TEMPLATE),
  mode: mode.optional().default('now'),
  attachImage: attachImage.optional().default(false),
  paused: z.boolean().optional().default(false),
  name: name.optional(),
});

export const updateFeedBody = z.object({
  url: feedUrl.optional(),
  channels: channels.optional(),
  template: template.optional(),
  mode: mode.optional(),
  attachImage: attachImage.optional(),
  paused: z.boolean().optional(),
  name: name.nullable().optional(),
});

export type CreateFeedBody = z.output<typeof createFeedBody>;
export type UpdateFeedBody = z.output<typeof updateFeedBody>;

/** POST /feeds/{id}/check: what one read of the feed did. */
export const feedCheck = z.object({
  feed,
  outcome: z.enum(['posted', 'unchanged', 'recorded', 'failed']).describe('"recorded": the first read, which posts nothing; "unchanged": no new item (or 304)'),
  newItems: z.number(),
  posts: z.array(z.string()).describe('Ids of the posts created'),
});

export const deletedFeed = z.object({ deleted: z.boolean(), id: z.string() });
