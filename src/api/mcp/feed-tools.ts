/**
 * Tools about RSS and Atom subscriptions: list, subscribe, change (pause and
 * resume too), end, read now. Each calls the Feeds service /feeds calls, with
 * the same checks; the arguments are the public API's own body schemas.
 */
import { z } from 'zod';
import { createFeedBody, idParam, updateFeedBody } from '../../contract/index.ts';
import { newId } from '../../lib/ids.ts';
import { defineTool } from './tool.ts';

const feedId = idParam.shape.id.describe('The subscription id (id from add_feed or list_feeds)');
const channels = (more: string) => createFeedBody.shape.channels.describe(`Ids of the channels each new item is posted to, from list_channels${more}`);

export const listFeeds = defineTool({
  name: 'list_feeds',
  title: 'List feed subscriptions',
  description: [
    "Lists this account's RSS and Atom subscriptions: for each its id, url, channels, template, mode, paused,",
    'state ("waiting": not read yet, "ok", "failing" with lastError, "paused"), lastFetchedAt and nextFetchAt.',
    'Use an id with update_feed, check_feed_now or delete_feed; add_feed subscribes to a new feed.',
  ].join(' '),
  scope: 'feeds:read',
  input: z.object({}).strict(),
  hints: { readOnly: true },
  async run(_args, { services, principal }) {
    return { feeds: await services.feeds.list(principal.accountId) };
  },
});

export const addFeed = defineTool({
  name: 'add_feed',
  title: 'Subscribe to a feed',
  description: [
    "Subscribes to an RSS or Atom feed so that each new item is posted to the channels, with the template's text:",
    'at once ("mode": "now"), at each channel\'s next free slot ("slot") or as drafts for a person to review ("draft").',
    'Example: {"url": "https://blog.example.com/feed.xml", "channels": ["<channel id>"], "template": "New on the blog: {title} {link}", "mode": "slot"}.',
    'Channel ids come from list_channels. The first read only records the items the feed already has and posts none of them;',
    'Herald then reads the feed on its own at regular intervals. The url must be a public http(s) address (a private one is refused naming "url").',
    'Answers the subscription (id, state "waiting"); call check_feed_now with its id to read it at once and see that it works.',
  ].join(' '),
  scope: 'feeds:write',
  input: createFeedBody
    .extend({
      url: createFeedBody.shape.url.describe('The RSS or Atom feed address, e.g. https://blog.example.com/feed.xml; must be public'),
      channels: channels(''),
      name: createFeedBody.shape.name.describe("A name for the subscription, shown in Herald; the feed's own title by default"),
      paused: createFeedBody.shape.paused.describe('true: subscribe without reading it yet (update_feed resumes it)'),
    })
    .strict(),
  hints: { readOnly: false, openWorld: true },
  async run(args, { services, principal }) {
    return services.feeds.create(principal.accountId, args, principal.userId);
  },
});

export const updateFeed = defineTool({
  name: 'update_feed',
  title: 'Change, pause or resume a feed subscription',
  description: [
    'Changes a subscription: only the arguments sent change. Pause it with {"id": "<feed id>", "paused": true} (nothing is read or posted',
    'until resumed), resume it with "paused": false (it is read again soon), or change url, channels, template, mode, attachImage or name,',
    'e.g. {"id": "<feed id>", "mode": "draft"}. Another url is another feed: its first read records what it has, as for a new subscription.',
    'Answers the subscription as list_feeds shows it.',
  ].join(' '),
  scope: 'feeds:write',
  input: updateFeedBody
    .extend({
      id: feedId,
      channels: channels('; they replace the current ones').optional(),
      paused: updateFeedBody.shape.paused.describe('true pauses the subscription, false resumes it'),
      name: updateFeedBody.shape.name.describe("A name for the subscription; null shows the feed's own title"),
    })
    .strict(),
  hints: { readOnly: false, idempotent: true, openWorld: true },
  async run({ id, ...changes }, { services, principal }) {
    return services.feeds.update(principal.accountId, id, changes, principal.userId);
  },
});

export const deleteFeed = defineTool({
  name: 'delete_feed',
  title: 'End a feed subscription',
  description: [
    'Ends a subscription: the feed is no longer read and nothing more is posted from it. The posts it already made stay, scheduled ones included',
    '(delete_post removes one). To stop it for a while instead, use update_feed with "paused": true. Answers {"deleted": true, "id"}.',
  ].join(' '),
  scope: 'feeds:write',
  input: z.object({ id: feedId }).strict(),
  hints: { readOnly: false, destructive: true, idempotent: true },
  async run({ id }, { services, principal }) {
    await services.feeds.remove(principal.accountId, id);
    return { deleted: true, id };
  },
});

export const checkFeedNow = defineTool({
  name: 'check_feed_now',
  title: 'Read a feed now',
  description: [
    'Reads the feed now, whatever its schedule, and posts its new items as the subscription says. Answers the outcome:',
    '"recorded" (the first read: it records the items there are and posts none), "posted" (newItems items, the created post ids in "posts";',
    'follow them with get_post), "unchanged" (nothing new) or "failed" (why in feed.lastError, e.g. not a feed or not reachable; fix it with',
    'update_feed). Refused while the subscription is paused (resume it with update_feed) or being read.',
  ].join(' '),
  scope: 'feeds:write',
  input: z.object({ id: feedId }).strict(),
  hints: { readOnly: false, openWorld: true },
  async run({ id }, { services, principal }) {
    // Who holds the feed while it is read, as the public route names its reader.
    return services.feeds.checkNow(principal.accountId, id, `mcp-${process.pid}-${newId().slice(0, 8)}`);
  },
});
