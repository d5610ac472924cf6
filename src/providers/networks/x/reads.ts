/**
 * Reading from X for a channel: its account figures, one post's figures and its
 * latest posts. X keeps no history through the standard API, so figures are the
 * totals as they stand now (public_metrics of the user and of the post).
 */
import { currentFigures } from '../../adapter-kit/analytics-series.ts';
import type { NetworkContext, Provider, PublishChannel, RecentPost } from '../../types.ts';
import { PublishError } from '../../errors.ts';
import { consumerKeys, postUrl, signedJson, type XConfig } from './api.ts';

/** How many latest posts are listed: X bills reads per post, and a post published by hand is recent. */
const RECENT_POSTS = 20;

/** X's partial errors: a missing user or post is a 200 with `errors` and no `data`. */
interface Answer<T> {
  data?: T;
  errors?: { detail?: string; title?: string }[];
}

function dataOf<T>(answer: Answer<T>, what: string): T {
  if (answer.data !== undefined) return answer.data;
  const problem = answer.errors?.[0];
  throw new PublishError('refused', `X: ${problem?.detail ?? problem?.title ?? `no ${what} in the answer`}`);
}

function read<T>(ctx: NetworkContext & { channel: PublishChannel<XConfig> }, path: string, query: Record<string, string | number>): Promise<Answer<T>> {
  const config = ctx.channel.config;
  return signedJson<Answer<T>>(ctx, consumerKeys(ctx, config), `${ctx.urls.api}${path}`, { query });
}

interface UserMetrics {
  followers_count?: number;
  following_count?: number;
  tweet_count?: number;
  listed_count?: number;
}

interface PostMetrics {
  impression_count?: number;
  like_count?: number;
  retweet_count?: number;
  reply_count?: number;
  quote_count?: number;
  bookmark_count?: number;
}

export const analytics: NonNullable<Provider<XConfig>['analytics']> = {
  async channel(ctx) {
    const me = await read<{ public_metrics?: UserMetrics }>(ctx, '/2/users/me', { 'user.fields': 'public_metrics' });
    const m = dataOf(me, 'user').public_metrics ?? {};
    return currentFigures({ Followers: m.followers_count, Following: m.following_count, Posts: m.tweet_count, Listed: m.listed_count });
  },

  async post(ctx) {
    const post = await read<{ public_metrics?: PostMetrics }>(ctx, `/2/tweets/${encodeURIComponent(ctx.releaseId)}`, { 'tweet.fields': 'public_metrics' });
    const m = dataOf(post, 'post').public_metrics ?? {};
    return currentFigures({
      Impressions: m.impression_count,
      Likes: m.like_count,
      Reposts: m.retweet_count,
      Replies: m.reply_count,
      Quotes: m.quote_count,
      Bookmarks: m.bookmark_count,
    });
  },
};

/** The channel's latest posts, newest first; reposts of others' posts are left out, replies (threads) are kept. */
export async function recentPosts(ctx: NetworkContext & { channel: PublishChannel<XConfig> }): Promise<RecentPost[]> {
  const config = ctx.channel.config;
  const answer = await read<{ id: string; text?: string; created_at?: string }[]>(ctx, `/2/users/${encodeURIComponent(config.userId)}/tweets`, {
    max_results: RECENT_POSTS,
    'tweet.fields': 'created_at',
    exclude: 'retweets',
  });
  // No posts at all is an answer without `data` (meta.result_count 0) and without errors.
  const posts = answer.data === undefined && !answer.errors?.length ? [] : dataOf(answer, 'posts');
  return posts.map((post) => ({ id: post.id, url: postUrl(config, post.id), text: post.text, at: post.created_at ? Date.parse(post.created_at) : undefined }));
}
