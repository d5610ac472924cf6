/**
 * The `threads` channel: a Threads profile, connected with Threads OAuth. Its
 * long-lived token (60 days) renews itself. Each item is a media container
 * (text, image, video or carousel) polled until FINISHED, then published;
 * later items of a thread reply to the item before them (reply_to_id).
 */
import { z } from 'zod';
import type { NetworkContext, Provider, PublishChannel, PublishContext, PublishResult, RuleItem } from '../types.ts';
import { PublishError } from '../errors.ts';
import { Graph, findByText, mediaContainer, metaTime, readGraphAnswer, waitForContainer } from './meta/graph.ts';
import { dailyPoints, figure, insightRanges, type InsightsAnswer } from './meta/insights.ts';
import { currentFigures, dailySeries } from '../adapter-kit/analytics-series.ts';
import { authorizationCode, connectToken, renewToken, type LongLivedTokenFlow, loginUrl } from './meta/long-lived-token.ts';

const NAME = 'Threads';
const DEFAULT_VERSION = 'v1.0';

/** threads_read_replies lets Herald look for a reply after a timeout; threads_manage_insights reads analytics. */
const SCOPES = ['threads_basic', 'threads_content_publish', 'threads_manage_replies', 'threads_read_replies', 'threads_manage_insights'];

/** User insights since/until do not work before 2024-04-13 (Unix 1712991600). */
const INSIGHTS_EARLIEST = 1712991600;
/** Figures Threads gives only as a total over the range, with their labels. */
const USER_TOTALS: [string, string][] = [
  ['likes', 'Likes'],
  ['replies', 'Replies'],
  ['reposts', 'Reposts'],
  ['quotes', 'Quotes'],
];
/** A post's lifetime figures, with their labels. */
const MEDIA_METRICS: [string, string][] = [
  ['views', 'Views'],
  ['likes', 'Likes'],
  ['replies', 'Replies'],
  ['reposts', 'Reposts'],
  ['quotes', 'Quotes'],
  ['shares', 'Shares'],
];

const LINK = /(?:https?:\/\/|www\.)[^\s]+/gi;
const MAX_LINKS = 5;

function check(item: RuleItem): { field: 'content' | 'image'; message: string }[] {
  const links = new Set((item.content.match(LINK) ?? []).map((l) => l.replace(/[.,;:!?)]+$/, '').toLowerCase()));
  return links.size > MAX_LINKS ? [{ field: 'content', message: `has ${links.size} different links, but Threads allows at most ${MAX_LINKS}` }] : [];
}

interface ThreadsConfig {
  accessToken: string;
  username?: string;
}

const POLL = { stateField: 'status', errorField: 'error_message' };

function flow(ctx: NetworkContext): LongLivedTokenFlow {
  return {
    network: NAME,
    codeUrl: `${ctx.urls.api}/oauth/access_token`,
    exchangeUrl: `${ctx.urls.api}/access_token`,
    exchangeGrant: 'th_exchange_token',
    refreshUrl: `${ctx.urls.api}/refresh_access_token`,
    refreshGrant: 'th_refresh_token',
  };
}

function graph(ctx: NetworkContext, token: string): Graph {
  return new Graph(ctx, { host: ctx.urls.api, version: ctx.app.API_VERSION || DEFAULT_VERSION, token, tokenIn: 'param', network: NAME });
}

const isVideo = (m: { mimeType: string }) => m.mimeType.startsWith('video/');

async function permalink(api: Graph, id: string, fallback: string): Promise<string> {
  try {
    const { permalink: url } = await api.get<{ permalink?: string }>(id, { fields: 'permalink' });
    return url || fallback;
  } catch {
    return fallback;
  }
}

function container(ctx: PublishContext<ThreadsConfig>, api: Graph, params: Record<string, string | boolean | undefined>): Promise<string> {
  return mediaContainer(ctx, api, `${ctx.channel.externalId}/threads`, params, POLL);
}

async function publish(ctx: PublishContext<ThreadsConfig>): Promise<PublishResult> {
  const config = ctx.channel.config;
  const api = graph(ctx, config.accessToken);
  const { content: text, media, threadIndex } = ctx.item;
  let replyTo: string | undefined;
  if (threadIndex > 0) {
    replyTo = ctx.replyTo?.releaseId;
    if (!replyTo) throw new PublishError('refused', 'The post this reply answers has no Threads id');
  }
  let id: string;
  if (media.length === 0) {
    id = await container(ctx, api, { media_type: 'TEXT', text, reply_to_id: replyTo });
  } else if (media.length === 1) {
    const m = media[0];
    id = await container(
      ctx,
      api,
      isVideo(m)
        ? { media_type: 'VIDEO', video_url: m.url, text, reply_to_id: replyTo }
        : { media_type: 'IMAGE', image_url: m.url, text, reply_to_id: replyTo },
    );
  } else {
    const children: string[] = [];
    for (const m of media) {
      const child = await container(
        ctx,
        api,
        isVideo(m) ? { media_type: 'VIDEO', video_url: m.url, is_carousel_item: true } : { media_type: 'IMAGE', image_url: m.url, is_carousel_item: true },
      );
      await waitForContainer(api, child, POLL, ctx.signal);
      children.push(child);
    }
    id = await container(ctx, api, { media_type: 'CAROUSEL', children: children.join(','), text, reply_to_id: replyTo });
  }
  const state = await waitForContainer(api, id, POLL, ctx.signal);
  // Already live: publishing again would post it twice.
  if (state === 'PUBLISHED') throw new PublishError('unknown', `Threads reports container ${id} as already published; check the profile`);
  const published = await api.post<{ id: string }>(`${ctx.channel.externalId}/threads_publish`, { creation_id: id });
  return { releaseId: published.id, releaseUrl: await permalink(api, published.id, `https://www.threads.net/@${config.username ?? ''}`) };
}

type ThreadsPost = { id: string; text?: string; timestamp?: string; permalink?: string };

/** Posts at `path` (the profile's threads, or a post's replies), newest first. */
async function latestPosts(api: Graph, path: string): Promise<ThreadsPost[]> {
  const { data = [] } = await api.get<{ data?: ThreadsPost[] }>(path, { fields: 'id,text,timestamp,permalink', limit: 25 });
  return data;
}

function api(ctx: NetworkContext & { channel: PublishChannel<ThreadsConfig> }): Graph {
  return graph(ctx, ctx.channel.config.accessToken);
}

export const threads: Provider<ThreadsConfig> = {
  identifier: 'threads',
  name: NAME,
  readAnswer: readGraphAnswer,
  auth: 'oauth2',
  urls: { api: 'https://graph.threads.net', login: 'https://threads.com' },
  appSettings: ['CLIENT_ID', 'CLIENT_SECRET'],
  optionalSettings: ['API_VERSION'],
  settings: z.object({}),
  rules: {
    maxLength: 500,
    counting: 'threads',
    // A carousel holds 2 to 20 images or videos.
    maxMedia: 20,
    mediaKinds: ['image', 'video'],
    threads: true,
    media: { imageTypes: ['image/jpeg', 'image/png'], maxImageBytes: 8 * 1024 * 1024, maxImageSide: 1440 },
    check,
  },
  // Threads publishes at most 250 posts per profile in 24 hours through the API.
  pacing: { perChannel: { count: 250, windowMs: 24 * 60 * 60_000 } },

  oauth: {
    async start(ctx) {
      return { url: loginUrl(ctx, SCOPES) };
    },
    async finish(ctx) {
      const token = await connectToken(ctx, flow(ctx), authorizationCode(ctx.query, NAME), ctx.redirectUri);
      const me = await graph(ctx, token.accessToken).get<{ id?: string; username?: string; name?: string; threads_profile_picture_url?: string }>('me', {
        fields: 'id,username,name,threads_profile_picture_url',
      });
      const id = me.id ?? token.userId;
      if (!id) throw new PublishError('refused', 'Threads did not say which profile logged in');
      return [
        {
          externalId: String(id),
          name: me.name || me.username || String(id),
          picture: me.threads_profile_picture_url ?? null,
          profile: me.username ?? null,
          config: { accessToken: token.accessToken, expiresAt: token.expiresAt, tokenExpiresAt: token.tokenExpiresAt, username: me.username },
        },
      ];
    },
  },

  async refresh(ctx) {
    const { accessToken } = ctx.channel.config;
    return renewToken(ctx, flow(ctx), accessToken);
  },

  publish,

  /** After a timeout: the profile's latest posts (or the replies to the item before) with this text. */
  async findPublished(ctx) {
    const { item } = ctx;
    if (item.threadIndex > 0 && !ctx.replyTo) return null;
    const path = item.threadIndex > 0 ? `${ctx.replyTo!.releaseId}/replies` : `${ctx.channel.externalId}/threads`;
    const found = findByText(await latestPosts(api(ctx), path), 'text', 'timestamp', item.content, item.publishAt);
    return found ? { releaseId: found.id, releaseUrl: found.permalink ?? null } : null;
  },

  async recentPosts(ctx) {
    const { username } = ctx.channel.config;
    return (await latestPosts(api(ctx), `${ctx.channel.externalId}/threads`)).map((p) => {
      const at = metaTime(p.timestamp);
      return { id: p.id, url: p.permalink ?? `https://www.threads.net/@${username ?? ''}`, text: p.text, at: Number.isNaN(at) ? undefined : at };
    });
  },

  analytics: {
    /** Daily profile views, the period's likes, replies, reposts and quotes, and the followers as they stand (threads_manage_insights). */
    async channel(ctx) {
      const [range] = insightRanges(ctx.days, ctx.days, Date.now(), INSIGHTS_EARLIEST);
      const metric = ['views', ...USER_TOTALS.map(([name]) => name), 'followers_count'].join(',');
      const answer = await api(ctx).get<InsightsAnswer>(`${ctx.channel.externalId}/threads_insights`, { metric, ...range });
      const views = dailyPoints([answer], 'views', ctx.days);
      return [
        ...(views ? [dailySeries('Profile views', views)] : []),
        ...currentFigures(Object.fromEntries(USER_TOTALS.map(([name, label]) => [label, figure([answer], name)]))),
        ...currentFigures({ Followers: figure([answer], 'followers_count') }),
      ];
    },
    async post(ctx) {
      const answer = await api(ctx).get<InsightsAnswer>(`${ctx.releaseId}/insights`, { metric: MEDIA_METRICS.map(([name]) => name).join(',') });
      return currentFigures(Object.fromEntries(MEDIA_METRICS.map(([name, label]) => [label, figure([answer], name)])));
    },
  },
};
