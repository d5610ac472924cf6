/**
 * The `facebook` channel: a Facebook Page. Connected with Facebook Login; the
 * user then picks one of the Pages they manage, whose Page token publishes.
 * A post is text (with an optional link), one or several photos, one video, or
 * stories; later items of a thread become a comment on the post, then replies
 * to that comment.
 */
import { z } from 'zod';
import type { AnalyticsSeries, MediaRef, NetworkContext, Provider, PublishChannel, PublishContext, PublishResult, RuleItem } from '../types.ts';
import { PublishError } from '../errors.ts';
import { Graph, findByText, graphCall, metaTime, readGraphAnswer } from './meta/graph.ts';
import { graphVersion, loginDialogUrl, longLivedUserToken, managedPages, userGraph } from './meta/facebook-login.ts';
import { dailyPoints, figure, insightRanges, type InsightsAnswer } from './meta/insights.ts';
import { currentFigures, dailySeries } from '../adapter-kit/analytics-series.ts';

const NAME = 'Facebook';

/** pages_manage_engagement: comments; publish_video: videos; business_management: Pages owned through Business Manager; read_insights: analytics. */
const SCOPES = [
  'pages_show_list',
  'pages_manage_posts',
  'pages_read_engagement',
  'pages_manage_engagement',
  'publish_video',
  'business_management',
  'read_insights',
];

/** Daily Page metrics and their labels (page_media_view and page_total_media_view_unique replace the retired impressions). */
const PAGE_METRICS: [string, string][] = [
  ['page_media_view', 'Views'],
  ['page_total_media_view_unique', 'Viewers'],
  ['page_post_engagements', 'Engagements'],
  ['page_daily_follows_unique', 'New follows'],
];
/** Page Insights take at most 90 days between since and until. */
const PAGE_RANGE_DAYS = 90;

const settings = z.object({
  url: z
    .url({ protocol: /^https?$/, error: 'must be an http(s) URL' })
    .optional()
    .describe('A link attached to a text post'),
  post_type: z.enum(['post', 'story']).optional().describe('post (default) or story: each image or video becomes a story'),
});

interface PageConfig {
  accessToken: string;
  userToken?: string;
  userTokenExpiresAt?: number | null;
}

interface PageEntry {
  id: string;
  name?: string;
  username?: string;
  access_token?: string;
  picture?: { data?: { url?: string } };
}

const PAGE_FIELDS = 'id,name,username,access_token,picture.type(large)';

const isVideo = (m: { mimeType: string }) => m.mimeType.startsWith('video/');

function check(item: RuleItem): { field: 'content' | 'image'; message: string }[] {
  const problems: { field: 'content' | 'image'; message: string }[] = [];
  const story = item.settings.post_type === 'story';
  if (item.threadIndex > 0) {
    if (item.media.length > 1 || item.media.some(isVideo))
      problems.push({ field: 'image', message: 'is a comment, which takes at most one image and no video' });
    return problems;
  }
  if (story && item.media.length === 0) problems.push({ field: 'image', message: 'is empty, but a story needs at least one image or video' });
  if (!story && item.media.some(isVideo) && item.media.length > 1)
    problems.push({ field: 'image', message: 'mixes a video with other media, but a video is posted alone' });
  if (!story && item.settings.url && item.media.length > 0)
    problems.push({ field: 'image', message: 'has media, but the link in settings.url is attached only to a post without media' });
  return problems;
}

type PageContext = NetworkContext & { channel: PublishChannel<PageConfig> };

const pageToken = (ctx: PageContext) => ctx.channel.config.accessToken;

function pageGraph(ctx: PageContext, host = ctx.urls.api): Graph {
  return new Graph(ctx, { host, version: graphVersion(ctx), token: pageToken(ctx), tokenIn: 'header', network: NAME });
}

/** The post's address; a failure to read it must not fail a post that is already out. */
async function permalink(graph: Graph, id: string, fallback: string): Promise<string> {
  try {
    const { permalink_url } = await graph.get<{ permalink_url?: string }>(id, { fields: 'permalink_url' });
    if (!permalink_url) return fallback;
    return permalink_url.startsWith('/') ? `https://www.facebook.com${permalink_url}` : permalink_url;
  } catch {
    return fallback;
  }
}

async function publishComment(ctx: PublishContext<PageConfig>, graph: Graph): Promise<PublishResult> {
  const target = ctx.replyTo?.releaseId;
  if (!target) throw new PublishError('refused', 'The post this comment belongs to has no Facebook id');
  // The first comment goes under the post; each later one answers the comment before it.
  const { id } = await graph.post<{ id: string }>(`${target}/comments`, { message: ctx.item.content, attachment_url: ctx.item.media[0]?.url });
  return { releaseId: id, releaseUrl: await permalink(graph, id, `https://www.facebook.com/${id}`) };
}

async function unpublishedPhoto(graph: Graph, pageId: string, media: MediaRef): Promise<string> {
  // An unpublished photo shows nowhere until a post or story uses it.
  const { id } = await graph.post<{ id: string }>(`${pageId}/photos`, { url: media.url, published: false }, { repeatable: true });
  return id;
}

async function publishStories(ctx: PublishContext<PageConfig>, graph: Graph, pageId: string): Promise<PublishResult> {
  const ids: string[] = [];
  for (const media of ctx.item.media) {
    if (isVideo(media)) {
      const started = await graph.post<{ video_id: string; upload_url: string }>(`${pageId}/video_stories`, { upload_phase: 'start' }, { repeatable: true });
      // Meta fetches the bytes itself from the public URL; the upload host takes the token as "OAuth".
      await graphCall(ctx, started.upload_url, {
        method: 'POST',
        headers: { authorization: `OAuth ${pageToken(ctx)}`, file_url: media.url },
        repeatable: true,
      });
      const done = await graph.post<{ post_id: string }>(`${pageId}/video_stories`, { upload_phase: 'finish', video_id: started.video_id });
      ids.push(done.post_id ?? started.video_id);
    } else {
      const photoId = await unpublishedPhoto(graph, pageId, media);
      const done = await graph.post<{ post_id: string }>(`${pageId}/photo_stories`, { photo_id: photoId });
      ids.push(done.post_id ?? photoId);
    }
  }
  return { releaseId: ids[0], releaseUrl: `https://www.facebook.com/stories/${pageId}` };
}

async function publishPost(ctx: PublishContext<PageConfig>, graph: Graph, pageId: string): Promise<PublishResult> {
  const { content, media, settings: s } = ctx.item;
  const link = typeof s.url === 'string' ? s.url : undefined;
  if (media.length === 1 && isVideo(media[0])) {
    const video = pageGraph(ctx, ctx.urls.video);
    const { id } = await video.post<{ id: string }>(`${pageId}/videos`, { file_url: media[0].url, description: content });
    return { releaseId: id, releaseUrl: await permalink(graph, id, `https://www.facebook.com/${pageId}/videos/${id}`) };
  }
  let postId: string;
  if (media.length === 1) {
    const photo = await graph.post<{ id: string; post_id?: string }>(`${pageId}/photos`, { url: media[0].url, caption: content, published: true });
    postId = photo.post_id ?? photo.id;
  } else if (media.length > 1) {
    const photoIds: string[] = [];
    for (const m of media) photoIds.push(await unpublishedPhoto(graph, pageId, m));
    const post = await graph.post<{ id: string }>(`${pageId}/feed`, {
      message: content,
      attached_media: JSON.stringify(photoIds.map((id) => ({ media_fbid: id }))),
      published: true,
    });
    postId = post.id;
  } else {
    postId = (await graph.post<{ id: string }>(`${pageId}/feed`, { message: content, link, published: true })).id;
  }
  return { releaseId: postId, releaseUrl: await permalink(graph, postId, `https://www.facebook.com/${postId}`) };
}

type PagePost = { id: string; message?: string; created_time?: string; permalink_url?: string };

/** The Page's latest posts, newest first. */
async function latestPosts(graph: Graph, pageId: string, limit: number): Promise<PagePost[]> {
  const { data = [] } = await graph.get<{ data?: PagePost[] }>(`${pageId}/published_posts`, { fields: 'id,message,created_time,permalink_url', limit });
  return data;
}

/** A Page post's figures: views and reactions from its insights, comments and shares from the post. */
async function postFigures(graph: Graph, postId: string): Promise<AnalyticsSeries[]> {
  const insights = await graph.get<InsightsAnswer>(`${postId}/insights`, {
    metric: 'post_media_view,post_total_media_view_unique,post_reactions_by_type_total',
    period: 'lifetime',
  });
  // Meta leaves `shares` out of a post nobody shared.
  const post = await graph.get<{ shares?: { count?: number }; comments?: { summary?: { total_count?: number } } }>(postId, {
    fields: 'shares,comments.limit(0).summary(true)',
  });
  return currentFigures({
    Views: figure([insights], 'post_media_view'),
    Viewers: figure([insights], 'post_total_media_view_unique'),
    Reactions: figure([insights], 'post_reactions_by_type_total'),
    Comments: post.comments?.summary?.total_count,
    Shares: post.shares?.count ?? 0,
  });
}

/** A video (published alone, its id has no Page prefix) reports through its own insights. */
async function videoFigures(graph: Graph, videoId: string): Promise<AnalyticsSeries[]> {
  const insights = await graph.get<InsightsAnswer>(`${videoId}/video_insights`);
  return currentFigures({ Views: figure([insights], 'total_video_views'), Viewers: figure([insights], 'total_video_views_unique') });
}

export const facebook: Provider<PageConfig> = {
  identifier: 'facebook',
  name: NAME,
  readAnswer: readGraphAnswer,
  auth: 'oauth2',
  urls: { api: 'https://graph.facebook.com', video: 'https://graph-video.facebook.com', login: 'https://www.facebook.com' },
  appSettings: ['CLIENT_ID', 'CLIENT_SECRET'],
  optionalSettings: ['API_VERSION'],
  settings,
  rules: {
    maxLength: 63_206,
    maxMedia: 10,
    mediaKinds: ['image', 'video'],
    threads: true,
    // Photos: JPEG, PNG, GIF (BMP and TIFF too, converted), at most 4 MB.
    media: { imageTypes: ['image/jpeg', 'image/png', 'image/gif'], maxImageBytes: 4 * 1024 * 1024 },
    check,
  },

  oauth: {
    async start(ctx) {
      return { url: loginDialogUrl(ctx, SCOPES) };
    },
    async finish(ctx) {
      const user = await longLivedUserToken(ctx, NAME);
      const pages = await managedPages<PageEntry>(userGraph(ctx, NAME, user.token), PAGE_FIELDS, { throughBusinesses: true });
      // Each Page is one choice; its own token (no expiry when read with a long-lived user token) publishes.
      return pages
        .filter((p) => p.access_token)
        .map((p) => ({
          externalId: p.id,
          name: p.name ?? p.username ?? p.id,
          picture: p.picture?.data?.url ?? null,
          profile: p.username ?? null,
          config: { accessToken: p.access_token!, userToken: user.token, userTokenExpiresAt: user.expiresAt },
        }));
    },
  },

  async publish(ctx) {
    const graph = pageGraph(ctx);
    const pageId = ctx.channel.externalId;
    if (ctx.item.threadIndex > 0) return publishComment(ctx, graph);
    if (ctx.item.settings.post_type === 'story') return publishStories(ctx, graph, pageId);
    return publishPost(ctx, graph, pageId);
  },

  /** After a timeout: the Page's latest posts (or the comments under the post) with this text. */
  async findPublished(ctx) {
    const graph = pageGraph(ctx);
    const { item } = ctx;
    if (item.settings.post_type === 'story' && item.threadIndex === 0) throw new PublishError('unknown', 'Stories cannot be looked up; check the Page');
    if (item.threadIndex > 0) {
      if (!ctx.replyTo) return null;
      const { data = [] } = await graph.get<{ data?: { id: string; message?: string; created_time?: string; permalink_url?: string }[] }>(
        `${ctx.replyTo.releaseId}/comments`,
        {
          fields: 'id,message,created_time,permalink_url',
          order: 'reverse_chronological',
          limit: 25,
        },
      );
      const found = findByText(data, 'message', 'created_time', item.content, item.publishAt);
      return found ? { releaseId: found.id, releaseUrl: found.permalink_url ?? null } : null;
    }
    const found = findByText(await latestPosts(graph, ctx.channel.externalId, 10), 'message', 'created_time', item.content, item.publishAt);
    return found ? { releaseId: found.id, releaseUrl: found.permalink_url ?? null } : null;
  },

  async recentPosts(ctx) {
    const posts = await latestPosts(pageGraph(ctx), ctx.channel.externalId, 25);
    return posts.map((p) => {
      const at = metaTime(p.created_time);
      return { id: p.id, url: p.permalink_url ?? `https://www.facebook.com/${p.id}`, text: p.message, at: Number.isNaN(at) ? undefined : at };
    });
  },

  analytics: {
    /** Daily Page Insights over the period (read_insights), and the followers as they stand. */
    async channel(ctx) {
      const graph = pageGraph(ctx);
      const pageId = ctx.channel.externalId;
      const answers: InsightsAnswer[] = [];
      for (const range of insightRanges(ctx.days, PAGE_RANGE_DAYS)) {
        answers.push(await graph.get<InsightsAnswer>(`${pageId}/insights`, { metric: PAGE_METRICS.map(([name]) => name).join(','), period: 'day', ...range }));
      }
      const page = await graph.get<{ followers_count?: number }>(pageId, { fields: 'followers_count' });
      return [
        ...PAGE_METRICS.flatMap(([name, label]) => {
          const points = dailyPoints(answers, name, ctx.days);
          return points ? [dailySeries(label, points)] : [];
        }),
        ...currentFigures({ Followers: page.followers_count }),
      ];
    },
    async post(ctx) {
      const graph = pageGraph(ctx);
      return ctx.releaseId.includes('_') ? postFigures(graph, ctx.releaseId) : videoFigures(graph, ctx.releaseId);
    },
  },

  tools: {
    pages: {
      description: 'List the Facebook Pages the connected login manages (to connect another one, connect again and pick it).',
      async run(ctx) {
        const { userToken } = ctx.channel.config;
        if (!userToken) return { pages: [] };
        const pages = await managedPages<PageEntry>(userGraph(ctx, NAME, userToken), 'id,name,username,picture.type(large)', { throughBusinesses: true });
        return {
          pages: pages.map((p) => ({
            id: p.id,
            name: p.name ?? p.id,
            username: p.username ?? null,
            picture: p.picture?.data?.url ?? null,
            connected: p.id === ctx.channel.externalId,
          })),
        };
      },
    },
  },
};
