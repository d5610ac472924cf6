/**
 * Publishing to an Instagram professional account, the same for both ways of
 * connecting it (through a Facebook Page on graph.facebook.com, or Instagram
 * Login on graph.instagram.com): media containers are created from public URLs,
 * polled until FINISHED, then published. One image is a post, one video a reel,
 * several media a carousel; a story is one container per media. Later items of
 * a thread become comments under the post.
 */
import { z } from 'zod';
import type {
  AnalyticsSeries,
  ContentRules,
  MediaRef,
  NetworkContext,
  Pacing,
  Provider,
  PublishChannel,
  PublishContext,
  PublishResult,
  RecentPost,
  RuleItem,
} from '../../types.ts';
import { PublishError } from '../../errors.ts';
import { findByText, mediaContainer, metaTime, readGraphAnswer, waitForContainer, type Graph } from './graph.ts';
import { dailyPoints, figure, insightRanges, type InsightsAnswer } from './insights.ts';
import { currentFigures, dailySeries } from '../../adapter-kit/analytics-series.ts';

/** The settings fields clients send for instagram and instagram-standalone. */
export const instagramSettings = z.object({
  post_type: z.enum(['post', 'story']).describe('post (a single video becomes a reel) or story'),
  is_trial_reel: z.boolean().optional().describe('Share a reel with non-followers first'),
  graduation_strategy: z.enum(['MANUAL', 'SS_PERFORMANCE']).optional().describe('When a trial reel is shared with followers'),
  collaborators: z
    .array(z.object({ label: z.string().min(1).max(100) }))
    .max(3)
    .optional()
    .describe('Instagram usernames invited as collaborators'),
});

type Settings = z.infer<typeof instagramSettings>;

const isVideo = (m: { mimeType: string }) => m.mimeType.startsWith('video/');
const HASHTAG = /(^|\s)#[\p{L}\p{N}_]+/gu;
const MENTION = /(^|\s)@[\p{L}\p{N}_.]+/gu;

function check(item: RuleItem): { field: 'content' | 'image'; message: string }[] {
  const problems: { field: 'content' | 'image'; message: string }[] = [];
  if (item.threadIndex > 0) {
    if (item.settings.post_type === 'story') problems.push({ field: 'content', message: 'follows a story, but stories take no comments' });
    if (item.media.length > 0) problems.push({ field: 'image', message: 'is a comment, and Instagram comments are text only' });
    return problems;
  }
  if (item.media.length === 0) problems.push({ field: 'image', message: 'is empty, but Instagram needs at least one image or video' });
  const hashtags = item.content.match(HASHTAG)?.length ?? 0;
  if (hashtags > 30) problems.push({ field: 'content', message: `has ${hashtags} hashtags, but Instagram allows at most 30` });
  const mentions = item.content.match(MENTION)?.length ?? 0;
  if (mentions > 20) problems.push({ field: 'content', message: `has ${mentions} @mentions, but Instagram allows at most 20` });
  return problems;
}

/** Instagram publishes at most 100 posts per account in 24 hours through the API. */
export const instagramPacing: Pacing = { perChannel: { count: 100, windowMs: 24 * 60 * 60_000 } };

export const instagramRules: ContentRules = {
  maxLength: 2200,
  // A carousel holds 2 to 10 images or videos.
  maxMedia: 10,
  mediaKinds: ['image', 'video'],
  threads: true,
  // Instagram takes JPEG only, at most 8 MB, and rescales beyond 1440 px wide.
  media: { imageTypes: ['image/jpeg'], maxImageBytes: 8 * 1024 * 1024, maxImageSide: 1440 },
  check,
};

/** Where a container's state and error are read. */
const POLL = { stateField: 'status_code', errorField: 'status' };

export interface InstagramAccount {
  graph: Graph;
  /** The professional account's id used in publishing paths. */
  userId: string;
  /** Shown when the post's own address cannot be read. */
  profileUrl: string;
}

function settingsOf(ctx: PublishContext<unknown>): Settings {
  const parsed = instagramSettings.partial().safeParse(ctx.item.settings);
  return (parsed.success ? parsed.data : {}) as Settings;
}

function createContainer(ctx: PublishContext<unknown>, ig: InstagramAccount, params: Record<string, string | boolean | undefined>): Promise<string> {
  return mediaContainer(ctx, ig.graph, `${ig.userId}/media`, params, POLL);
}

async function permalink(ig: InstagramAccount, mediaId: string): Promise<string> {
  try {
    const { permalink: url } = await ig.graph.get<{ permalink?: string }>(mediaId, { fields: 'permalink' });
    return url || ig.profileUrl;
  } catch {
    return ig.profileUrl;
  }
}

/** Waits for the container, then publishes it (unless Instagram says it already went out). */
async function publishContainer(ctx: PublishContext<unknown>, ig: InstagramAccount, containerId: string): Promise<string> {
  const state = await waitForContainer(ig.graph, containerId, POLL, ctx.signal);
  if (state === 'PUBLISHED') throw new PublishError('unknown', `Instagram reports container ${containerId} as already published; check the account`);
  const { id } = await ig.graph.post<{ id: string }>(`${ig.userId}/media_publish`, { creation_id: containerId });
  return id;
}

function collaboratorsParam(settings: Settings): string | undefined {
  const names = (settings.collaborators ?? []).map((c) => c.label.replace(/^@/, ''));
  return names.length > 0 ? JSON.stringify(names) : undefined;
}

function singleContainerParams(media: MediaRef, caption: string, settings: Settings): Record<string, string | boolean | undefined> {
  const collaborators = collaboratorsParam(settings);
  if (!isVideo(media)) return { image_url: media.url, caption, collaborators };
  const trial = settings.is_trial_reel ? JSON.stringify({ graduation_strategy: settings.graduation_strategy ?? 'MANUAL' }) : undefined;
  return { media_type: 'REELS', video_url: media.url, caption, share_to_feed: settings.is_trial_reel ? undefined : true, collaborators, trial_params: trial };
}

/**
 * One story per media. Every container is made and processed before the first
 * story goes out, so a video still processing when an attempt ends leaves no
 * story live; and each story published is recorded, so an attempt that fails
 * after some went out (a lost answer, a throttle) does not post them again.
 */
async function publishStories(ctx: PublishContext<unknown>, ig: InstagramAccount): Promise<PublishResult> {
  const containers: string[] = [];
  for (const media of ctx.item.media) {
    containers.push(
      await createContainer(ctx, ig, isVideo(media) ? { media_type: 'STORIES', video_url: media.url } : { media_type: 'STORIES', image_url: media.url }),
    );
  }
  for (const container of containers) await waitForContainer(ig.graph, container, POLL, ctx.signal);
  const ids: string[] = [];
  for (const container of containers) {
    const key = `instagram-story:${container}`;
    const published = await ctx.progress.get(key);
    if (published) {
      ids.push(published);
      continue;
    }
    const id = await publishContainer(ctx, ig, container);
    await ctx.progress.set(key, id);
    ids.push(id);
  }
  return { releaseId: ids[0], releaseUrl: await permalink(ig, ids[0]) };
}

async function publishPost(ctx: PublishContext<unknown>, ig: InstagramAccount): Promise<PublishResult> {
  const { media, content } = ctx.item;
  const settings = settingsOf(ctx);
  if (media.length === 0) throw new PublishError('refused', 'Instagram needs at least one image or video');
  let container: string;
  if (media.length === 1) {
    container = await createContainer(ctx, ig, singleContainerParams(media[0], content, settings));
  } else {
    const children: string[] = [];
    for (const m of media) {
      const child = await createContainer(
        ctx,
        ig,
        isVideo(m) ? { is_carousel_item: true, media_type: 'VIDEO', video_url: m.url } : { is_carousel_item: true, image_url: m.url },
      );
      await waitForContainer(ig.graph, child, POLL, ctx.signal);
      children.push(child);
    }
    // Instagram refuses `collaborators` on a carousel ("Param collaborators is not allowed"): it goes without.
    container = await createContainer(ctx, ig, { media_type: 'CAROUSEL', children: children.join(','), caption: content });
  }
  const id = await publishContainer(ctx, ig, container);
  return { releaseId: id, releaseUrl: await permalink(ig, id) };
}

/** The post a comment belongs to: the item before it, or the post that comment is under. */
async function commentedMedia(ctx: PublishContext<unknown>, ig: InstagramAccount): Promise<string> {
  const previous = ctx.replyTo?.releaseId;
  if (!previous) throw new PublishError('refused', 'The post this comment belongs to has no Instagram id');
  if (ctx.item.threadIndex === 1) return previous;
  const comment = await ig.graph.get<{ media?: { id?: string } }>(previous, { fields: 'media' });
  if (!comment.media?.id) throw new PublishError('refused', `Instagram did not say which post comment ${previous} is under`);
  return comment.media.id;
}

export async function publishInstagram(ctx: PublishContext<unknown>, ig: InstagramAccount): Promise<PublishResult> {
  if (ctx.item.threadIndex > 0) {
    const mediaId = await commentedMedia(ctx, ig);
    const { id } = await ig.graph.post<{ id: string }>(`${mediaId}/comments`, { message: ctx.item.content });
    // Comments have no address of their own: the post's is shown.
    return { releaseId: id, releaseUrl: await permalink(ig, mediaId) };
  }
  if (settingsOf(ctx).post_type === 'story') return publishStories(ctx, ig);
  return publishPost(ctx, ig);
}

/** After a timeout: the account's latest media (or the post's comments) with this text. */
export async function findOnInstagram(ctx: PublishContext<unknown>, ig: InstagramAccount): Promise<PublishResult | null> {
  const { item } = ctx;
  if (item.threadIndex > 0) {
    if (!ctx.replyTo) return null;
    const mediaId = await commentedMedia(ctx, ig);
    const { data = [] } = await ig.graph.get<{ data?: { id: string; text?: string; timestamp?: string }[] }>(`${mediaId}/comments`, {
      fields: 'id,text,timestamp',
      limit: 50,
    });
    const found = findByText(data, 'text', 'timestamp', item.content, item.publishAt);
    return found ? { releaseId: found.id, releaseUrl: await permalink(ig, mediaId) } : null;
  }
  if (settingsOf(ctx).post_type === 'story') throw new PublishError('unknown', 'Stories cannot be looked up; check the account');
  const found = findByText(await latestMedia(ig, 10), 'caption', 'timestamp', item.content, item.publishAt);
  return found ? { releaseId: found.id, releaseUrl: found.permalink ?? ig.profileUrl } : null;
}

type Media = { id: string; caption?: string; timestamp?: string; permalink?: string };

/** The account's latest posts and reels, newest first (stories are not listed). */
async function latestMedia(ig: InstagramAccount, limit: number): Promise<Media[]> {
  const { data = [] } = await ig.graph.get<{ data?: Media[] }>(`${ig.userId}/media`, { fields: 'id,caption,timestamp,permalink', limit });
  return data;
}

export async function recentInstagramPosts(ig: InstagramAccount): Promise<RecentPost[]> {
  return (await latestMedia(ig, 25)).map((m) => {
    const at = metaTime(m.timestamp);
    return { id: m.id, url: m.permalink ?? ig.profileUrl, text: m.caption, at: Number.isNaN(at) ? undefined : at };
  });
}

/** Account Insights take at most 30 days between since and until. */
const ACCOUNT_RANGE_DAYS = 30;
/** Interactions Instagram reports only as a total over the range (metric_type=total_value), with their labels. */
const ACCOUNT_TOTALS: [string, string][] = [
  ['views', 'Views'],
  ['likes', 'Likes'],
  ['comments', 'Comments'],
  ['shares', 'Shares'],
  ['saves', 'Saves'],
  ['total_interactions', 'Interactions'],
];

/**
 * The account's daily reach and its interactions over the last `days` days
 * (read 30 days at a time, as Instagram allows), and its followers and posts as
 * they stand.
 */
export async function instagramAccountAnalytics(ig: InstagramAccount, days: number): Promise<AnalyticsSeries[]> {
  const daily: InsightsAnswer[] = [];
  const totals: InsightsAnswer[] = [];
  for (const range of insightRanges(days, ACCOUNT_RANGE_DAYS)) {
    daily.push(await ig.graph.get<InsightsAnswer>(`${ig.userId}/insights`, { metric: 'reach', period: 'day', metric_type: 'time_series', ...range }));
    totals.push(
      await ig.graph.get<InsightsAnswer>(`${ig.userId}/insights`, {
        metric: ACCOUNT_TOTALS.map(([name]) => name).join(','),
        period: 'day',
        metric_type: 'total_value',
        ...range,
      }),
    );
  }
  const account = await ig.graph.get<{ followers_count?: number; media_count?: number }>(ig.userId, { fields: 'followers_count,media_count' });
  const reach = dailyPoints(daily, 'reach', days);
  return [
    ...(reach ? [dailySeries('Reach', reach)] : []),
    ...currentFigures(Object.fromEntries(ACCOUNT_TOTALS.map(([name, label]) => [label, figure(totals, name)]))),
    ...currentFigures({ Followers: account.followers_count, Posts: account.media_count }),
  ];
}

/** Media Insights metrics by media product type (asking a story for likes is an error), with their labels. */
const MEDIA_METRICS: Record<'STORY' | 'OTHER', [string, string][]> = {
  STORY: [
    ['views', 'Views'],
    ['reach', 'Reach'],
    ['replies', 'Replies'],
    ['shares', 'Shares'],
    ['total_interactions', 'Interactions'],
  ],
  OTHER: [
    ['views', 'Views'],
    ['reach', 'Reach'],
    ['likes', 'Likes'],
    ['comments', 'Comments'],
    ['saved', 'Saves'],
    ['shares', 'Shares'],
    ['total_interactions', 'Interactions'],
  ],
};

/** A post's, reel's or story's lifetime figures. */
export async function instagramMediaAnalytics(ig: InstagramAccount, mediaId: string): Promise<AnalyticsSeries[]> {
  const { media_product_type: type } = await ig.graph.get<{ media_product_type?: string }>(mediaId, { fields: 'media_product_type' });
  const metrics = MEDIA_METRICS[type === 'STORY' ? 'STORY' : 'OTHER'];
  const insights = await ig.graph.get<InsightsAnswer>(`${mediaId}/insights`, { metric: metrics.map(([name]) => name).join(',') });
  return currentFigures(Object.fromEntries(metrics.map(([name, label]) => [label, figure([insights], name)])));
}

/**
 * What both Instagram channels do alike once `account` says which account and
 * token a channel uses: settings, rules, pacing, publishing and analytics.
 */
export function instagramChannel<C>(account: (ctx: NetworkContext & { channel: PublishChannel<C> }) => InstagramAccount) {
  return {
    readAnswer: readGraphAnswer,
    settings: instagramSettings,
    rules: instagramRules,
    pacing: instagramPacing,
    publish: (ctx) => publishInstagram(ctx, account(ctx)),
    findPublished: (ctx) => findOnInstagram(ctx, account(ctx)),
    recentPosts: (ctx) => recentInstagramPosts(account(ctx)),
    analytics: {
      channel: (ctx) => instagramAccountAnalytics(account(ctx), ctx.days),
      post: (ctx) => instagramMediaAnalytics(account(ctx), ctx.releaseId),
    },
  } satisfies Partial<Provider<C>>;
}
