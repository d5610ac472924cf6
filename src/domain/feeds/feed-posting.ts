/**
 * Posting one new feed item to the subscription's channels: the text fitted to
 * each network, the item's image uploaded to the library when asked for, then
 * the posts and the item's "seen" row written in one transaction. The row's
 * primary key (feed, item) refuses a second one, so an item read by two workers
 * at once, or again after a crash, is posted once: the loser's posts roll back.
 *
 * A post the networks' rules refuse (too long even with the summary cut, a
 * required setting the channel has no default for, a disabled channel) is kept
 * as a draft with the reason, rather than lost or tried again for ever.
 */
import type { ChannelRow, FeedRow } from '../../db/schema.ts';
import { isUniqueViolation } from '../../db/constraint.ts';
import type { CreatePostsBody } from '../../contract/index.ts';
import { countText } from '../../providers/text-counting.ts';
import type { Provider } from '../../providers/types.ts';
import type { Channels } from '../channels.ts';
import { ApiError } from '../errors.ts';
import type { FeedEntry } from './feed-source.ts';
import { fitTemplate } from './feed-template.ts';
import { refusalReason, storeFromUrl, type MediaFromUrlDeps } from '../media-from-url.ts';
import type { Posts } from '../posts/posts.ts';

/** How a feed item's image is asked for: as the feed itself is (feed-source.ts). */
const IMAGE_REQUEST = { accept: 'image/*', 'user-agent': 'Herald/1 (feed reader)' };

export interface FeedPostingDeps extends MediaFromUrlDeps {
  posts: Posts;
  channels: Channels;
}

export interface PostedItem {
  postIds: string[];
  /** Why it did not go out as the subscription says (kept as a draft, no image). */
  note: string | null;
}

type Target = { channel: ChannelRow; provider: Provider };

/**
 * Posts `entry` and records it as seen; undefined when another reader recorded
 * it first (nothing was posted here then).
 */
export async function postItem(deps: FeedPostingDeps, feed: FeedRow, targets: Target[], entry: FeedEntry, now: number): Promise<PostedItem | undefined> {
  const notes: string[] = [];
  // The feed's author writes its posts: a member's wait for approval as their own posts do.
  const author = { author: feed.author_id ?? undefined };
  let image: { id: string; path: string } | undefined;
  if (feed.attach_image && entry.image) {
    // Refused as an upload from this URL would be (address, type, size); the post then goes out without it.
    try {
      const stored = await storeFromUrl(deps, feed.account_id, entry.image, { kinds: ['image'], headers: IMAGE_REQUEST });
      image = { id: stored.id, path: stored.url };
    } catch (err) {
      notes.push(`The image could not be attached: ${refusalReason(err)}`);
    }
  }
  const body = (type: CreatePostsBody['type']): CreatePostsBody => ({
    type,
    date: now,
    shortLink: false,
    tags: [],
    creationMethod: 'feed',
    posts: targets.map(({ channel, provider }) => {
      const takesImage = image && provider.rules.maxMedia > 0 && provider.rules.mediaKinds.includes('image');
      const text = fitTemplate(feed.template, entry, (t) => countText(provider.rules.counting, t) <= provider.rules.maxLength);
      return {
        integration: { id: channel.id },
        group: undefined,
        value: [{ id: undefined, content: text, image: takesImage ? [image!] : [], delay: 0 }],
        settings: JSON.parse(channel.default_settings),
      };
    }),
  });

  let plan: Awaited<ReturnType<Posts['plan']>>;
  try {
    const type = feed.mode === 'draft' ? 'draft' : feed.mode === 'now' ? 'now' : 'schedule';
    const slots = feed.mode === 'slot' ? await nextSlots(deps.channels, feed.account_id, targets, now) : undefined;
    plan = await deps.posts.plan(feed.account_id, body(type), now, author);
    for (const thread of plan.threads) thread.publishAt = slots?.get(thread.channel.id);
  } catch (err) {
    if (!(err instanceof ApiError) || err.statusCode >= 500) throw err;
    notes.push(`Saved as a draft: ${err.message}`);
    plan = await deps.posts.plan(feed.account_id, body('draft'), now, author);
  }

  const note = notes.length > 0 ? notes.join(' ') : null;
  try {
    const created = await deps.posts.commit(plan, now, async (tx, posts) => {
      await tx
        .insertInto('feed_items')
        .values({
          feed_id: feed.id,
          item_key: entry.key,
          title: entry.title.slice(0, 500) || null,
          link: entry.link.slice(0, 2000) || null,
          post_ids: JSON.stringify(posts.map((p) => p.postId)),
          note,
          seen_at: now,
          last_seen_at: now,
        })
        .execute();
    });
    return { postIds: created.map((c) => c.postId), note };
  } catch (err) {
    if (isUniqueViolation(err)) return undefined;
    throw err;
  }
}

/** Each channel's next free posting time; a channel without one (409) refuses the plan, which then keeps a draft. */
async function nextSlots(channels: Channels, accountId: string, targets: Target[], now: number): Promise<Map<string, number>> {
  const slots = new Map<string, number>();
  for (const { channel } of targets) slots.set(channel.id, await channels.findSlot(accountId, channel.id, now));
  return slots;
}
