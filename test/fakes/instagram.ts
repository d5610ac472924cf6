/**
 * A local Instagram API with Facebook Login: Facebook Login (dialog, code and
 * long-lived exchanges, /me/accounts with each Page's instagram_business_account)
 * and the Instagram content endpoints on graph.facebook.com: media containers
 * (fetched from their public URL, IN_PROGRESS then FINISHED), media_publish,
 * comments, permalinks, and account and media insights, as the Instagram
 * Platform docs describe them. The content routes are shared with the
 * Instagram Login fake; their create endpoint is media_publish (`storeThenFail`).
 */
import { consentAllows, startNetworkFake, type FakeAnswer, type NetworkFake, type RecordedRequest, type Routes } from './network-fake.ts';
import {
  authed,
  containerStore,
  createContainer,
  dailyFigure,
  dailyValue,
  granted,
  graphError,
  insightEntry,
  insightsAnswer,
  insightsBook,
  insightsRange,
  lifetimeFigure,
  lookAt,
  newId,
  paramsOf,
  pick,
  rangeDays,
  requestedMetrics,
  tokenBook,
  graphServerError,
} from './meta.ts';

export const IG_APP = { id: 'ig-fb-app-id', secret: 'ig-fb-app-secret' };
export const IG_PAGES = [
  { id: '2010', name: 'Plain Page', token: 'page-token-plain' },
  { id: '2020', name: 'Studio Page', token: 'page-token-studio', ig: { id: '17841400000000020', username: 'herald.studio', name: 'Herald Studio' } },
];
export const IG_STUDIO = IG_PAGES[1].ig!;

export interface InstagramMedia {
  id: string;
  owner: string;
  container: string;
  caption?: string;
  type: string;
  children: string[];
  /** When it was published (epoch ms). */
  at: number;
}

export interface InstagramComment {
  id: string;
  media: string;
  text: string;
}

export interface InstagramFake extends NetworkFake {
  media: InstagramMedia[];
  comments: InstagramComment[];
  /** Each account's followers (0 when not set), as its followers_count field says. */
  followers: Map<string, number>;
}

const CAPTION_MAX = 2200;

/** Account metrics: reach and follower_count also come by day (time_series); the others only as a total over the range. */
const ACCOUNT_SERIES = ['reach', 'follower_count'];
const ACCOUNT_TOTALS = [
  'views',
  'accounts_engaged',
  'total_interactions',
  'likes',
  'comments',
  'shares',
  'saves',
  'replies',
  'reposts',
  'profile_links_taps',
  'follows_and_unfollows',
];
/** Account Insights take at most 30 days between since and until. */
const ACCOUNT_RANGE_DAYS = 30;
/** Media metrics by media product type. */
const MEDIA_METRICS: Record<string, string[]> = {
  FEED: ['views', 'reach', 'likes', 'comments', 'saved', 'shares', 'total_interactions', 'profile_visits', 'follows'],
  REELS: ['views', 'reach', 'likes', 'comments', 'saved', 'shares', 'total_interactions', 'ig_reels_avg_watch_time', 'ig_reels_video_view_total_time'],
  STORY: ['views', 'reach', 'replies', 'shares', 'total_interactions', 'navigation', 'follows', 'profile_visits'],
};
const NO_PERMISSION = (): FakeAnswer => graphError(10, '(#10) Application does not have permission for this action', { type: 'OAuthException' });

const productType = (m: InstagramMedia) => (m.type === 'STORIES' ? 'STORY' : m.type === 'REELS' ? 'REELS' : 'FEED');
const metaTime = (at: number) => new Date(at).toISOString().replace(/\.\d+Z$/, '+0000');

/**
 * The content endpoints, the same on graph.facebook.com and graph.instagram.com;
 * insights need `insightsPermission` (instagram_manage_insights, or
 * instagram_business_manage_insights with Instagram Login).
 */
export function instagramContentRoutes(fake: InstagramFake, insightsPermission: string): Routes {
  const store = containerStore(fake);
  // Store, then answer a 5xx (`storeThenFail`): media_publish is what publishes (a container publishes nothing).
  fake.create = { route: 'POST /:version/:user/media_publish', serverError: graphServerError };
  const notMine = (actor: string, user: string) => (actor === user ? undefined : NO_PERMISSION());
  const isAccount = (id: string) => [...tokenBook(fake).valid.values()].includes(id);

  /** GET /{ig-user-id}/insights: period=day over since/until, by day (time_series) or as one total (total_value). */
  const accountInsights = (request: RecordedRequest, user: string): FakeAnswer => {
    const metrics = requestedMetrics(request, [...ACCOUNT_SERIES, ...ACCOUNT_TOTALS]);
    if (!Array.isArray(metrics)) return metrics;
    const p = paramsOf(request);
    if (!p.period) return graphError(100, '(#100) The parameter period is required');
    if (p.period !== 'day') return graphError(100, `(#100) Incompatible period ${p.period} for the metrics requested`);
    const type = p.metric_type ?? 'time_series';
    const totalsOnly = metrics.filter((m) => ACCOUNT_TOTALS.includes(m));
    if (type === 'time_series' && totalsOnly.length > 0)
      return graphError(100, `(#100) The following metrics (${totalsOnly.join(', ')}) should be specified with parameter metric_type=total_value`);
    const range = insightsRange(request, ACCOUNT_RANGE_DAYS);
    if (!('since' in range)) return range;
    const days = rangeDays(range.since, range.until);
    const data = metrics.map((name) =>
      type === 'total_value'
        ? insightEntry(user, name, 'day', { total_value: { value: days.reduce((sum, d) => sum + dailyFigure(fake, user, name, d), 0) } })
        : insightEntry(user, name, 'day', { values: days.map((d) => dailyValue(d, dailyFigure(fake, user, name, d))) }),
    );
    return insightsAnswer(fake, request, range, data);
  };

  /** GET /{ig-media-id}/insights: lifetime values of the metrics its product type has. */
  const mediaInsights = (request: RecordedRequest, media: InstagramMedia): FakeAnswer => {
    const allowed = MEDIA_METRICS[productType(media)];
    const metrics = requestedMetrics(request, [...new Set(Object.values(MEDIA_METRICS).flat())]);
    if (!Array.isArray(metrics)) return metrics;
    const unsupported = metrics.find((m) => !allowed.includes(m));
    if (unsupported) return graphError(100, `(#100) The Media Insights API does not support the ${unsupported} metric for this media product type.`);
    const set = insightsBook(fake).lifetime.get(media.id) ?? {};
    // Comments are the ones made, unless a test set the figure.
    const value = (name: string) =>
      name === 'comments' && !('comments' in set) ? fake.comments.filter((c) => c.media === media.id).length : lifetimeFigure(fake, media.id, name);
    return { body: { data: metrics.map((name) => insightEntry(media.id, name, 'lifetime', { values: [{ value: value(name) }] })) } };
  };

  return {
    'POST /:version/:user/media': authed(fake, async (request, actor) => {
      const denied = notMine(actor, request.params.user);
      if (denied) return denied;
      const p = paramsOf(request);
      if ((p.caption ?? '').length > CAPTION_MAX) return graphError(100, 'The caption is too long', { subcode: 2207010 });
      if (p.media_type === 'CAROUSEL') {
        // What integrators see when a carousel names collaborators (only single images and reels take them).
        if (p.collaborators !== undefined) return graphError(100, '(#100) Param collaborators is not allowed');
        const children = (p.children ?? '').split(',').filter(Boolean);
        if (children.length < 2 || children.length > 10) return graphError(100, 'Invalid parameter: too little or too many attachments');
        for (const child of children) {
          const c = store.containers.get(child);
          if (c?.params.is_carousel_item !== 'true' || lookAt(c) !== 'FINISHED') return graphError(100, `(#100) The carousel item ${child} is not ready`);
        }
      } else if (!p.image_url && !p.video_url) {
        return graphError(100, '(#100) The parameter image_url is required.');
      } else if (p.video_url && !['REELS', 'STORIES', 'VIDEO'].includes(p.media_type)) {
        return graphError(100, '(#100) media_type must be REELS, STORIES or VIDEO for a video');
      }
      const container = await createContainer(fake, actor, p, 'ERROR: the media could not be fetched from this URI (2207052)');
      return { body: { id: container.id } };
    }),
    'POST /:version/:user/media_publish': authed(fake, (request, actor) => {
      const denied = notMine(actor, request.params.user);
      if (denied) return denied;
      const container = store.containers.get(paramsOf(request).creation_id);
      if (!container) return graphError(100, '(#100) Invalid creation_id');
      if (lookAt(container) !== 'FINISHED')
        return graphError(9007, 'Media ID is not available', {
          subcode: 2207027,
          userMessage: 'The media is not ready for publishing, please wait for a moment',
        });
      container.state = 'PUBLISHED';
      const id = newId(fake);
      fake.media.push({
        id,
        owner: actor,
        container: container.id,
        caption: container.params.caption,
        type: container.params.media_type ?? 'IMAGE',
        children: (container.params.children ?? '').split(',').filter(Boolean),
        at: Date.now(),
      });
      return { body: { id } };
    }),
    'POST /:version/:media/comments': authed(fake, (request) => {
      const media = fake.media.find((m) => m.id === request.params.media);
      if (!media) return graphError(100, `(#100) Unsupported post request. Object with ID '${request.params.media}' does not exist`);
      const text = paramsOf(request).message;
      if (!text) return graphError(100, '(#100) The parameter message is required');
      const id = newId(fake);
      fake.comments.push({ id, media: media.id, text });
      return { body: { id } };
    }),
    // Posts and reels, newest first (stories are listed at /stories), at most `limit`.
    'GET /:version/:user/media': authed(fake, (request) => ({
      body: {
        data: fake.media
          .filter((m) => m.owner === request.params.user && m.type !== 'STORIES')
          .reverse()
          .slice(0, Number(request.query.limit ?? 25))
          .map((m) => ({ id: m.id, caption: m.caption, timestamp: metaTime(m.at), permalink: `https://www.instagram.com/p/${m.id}/` })),
      },
    })),
    'GET /:version/:id/insights': authed(fake, (request, actor) => {
      const id = request.params.id;
      if (!granted(fake, insightsPermission)) return NO_PERMISSION();
      if (isAccount(id)) return notMine(actor, id) ?? accountInsights(request, id);
      const media = fake.media.find((m) => m.id === id);
      if (!media) return graphError(100, `(#100) Object with ID '${id}' does not exist`);
      return notMine(actor, media.owner) ?? mediaInsights(request, media);
    }),
    'GET /:version/:media/comments': authed(fake, (request) => ({
      body: {
        data: fake.comments
          .filter((c) => c.media === request.params.media)
          .map((c) => ({ id: c.id, text: c.text, timestamp: new Date().toISOString().replace(/\.\d+Z$/, '+0000') })),
      },
    })),
    'GET /:version/:id': authed(fake, (request) => {
      const id = request.params.id;
      const container = store.containers.get(id);
      if (container) {
        const state = lookAt(container);
        return {
          body: {
            id,
            status_code: state,
            status: container.error ?? (state === 'FINISHED' ? 'Finished: Media has been uploaded and it is ready to be published.' : state),
          },
        };
      }
      const media = fake.media.find((m) => m.id === id);
      if (media) {
        const video = Boolean(store.containers.get(media.container)?.params.video_url);
        return {
          body: pick(request, {
            id,
            permalink: media.type === 'REELS' ? `https://www.instagram.com/reel/${id}/` : `https://www.instagram.com/p/${id}/`,
            caption: media.caption,
            timestamp: metaTime(media.at),
            media_product_type: productType(media),
            media_type: media.type === 'CAROUSEL' ? 'CAROUSEL_ALBUM' : video ? 'VIDEO' : 'IMAGE',
            comments_count: fake.comments.filter((c) => c.media === id).length,
          }),
        };
      }
      const comment = fake.comments.find((c) => c.id === id);
      if (comment) return { body: { id, media: { id: comment.media } } };
      if (isAccount(id))
        return {
          body: pick(request, {
            id,
            followers_count: fake.followers.get(id) ?? 0,
            media_count: fake.media.filter((m) => m.owner === id && m.type !== 'STORIES').length,
          }),
        };
      return graphError(100, `(#100) Object with ID '${id}' does not exist`);
    }),
  };
}

export async function startInstagramFake(): Promise<InstagramFake> {
  const fake = (await startNetworkFake()) as InstagramFake;
  fake.media = [];
  fake.comments = [];
  fake.followers = new Map();
  const book = tokenBook(fake);
  book.valid.set('ig-user-short', 'user-1');
  book.valid.set('ig-user-long', 'user-1');
  // A Page token acts for the Page's Instagram account.
  for (const page of IG_PAGES) book.valid.set(page.token, page.ig?.id ?? page.id);

  fake.route({
    'GET /:version/dialog/oauth': consentAllows('ig-fb-code'),
    'GET /:version/oauth/access_token': (request) => {
      const q = request.query;
      if (q.client_id !== IG_APP.id || q.client_secret !== IG_APP.secret)
        return graphError(101, 'Error validating application. Invalid application ID.', { type: 'OAuthException' });
      if (q.grant_type === 'fb_exchange_token')
        return q.fb_exchange_token === 'ig-user-short'
          ? { body: { access_token: 'ig-user-long', token_type: 'bearer', expires_in: 5_184_000 } }
          : graphError(190, 'Invalid OAuth access token.');
      if (q.code !== 'ig-fb-code' || q.redirect_uri !== fake.state.authorize?.redirect_uri)
        return graphError(100, 'Invalid verification code format.', { type: 'OAuthException' });
      return { body: { access_token: 'ig-user-short', token_type: 'bearer', expires_in: 5400 } };
    },
    'GET /:version/me/accounts': authed(fake, (request) => {
      const fields = request.query.fields ?? '';
      return {
        body: {
          data: IG_PAGES.map((p) => ({
            id: p.id,
            name: p.name,
            ...(fields.includes('access_token') ? { access_token: p.token } : {}),
            ...(p.ig ? { instagram_business_account: { ...p.ig, profile_picture_url: `https://pics.example/${p.ig.id}.jpg` } } : {}),
          })),
          paging: { cursors: { before: 'b', after: 'a' } },
        },
      };
    }),
    ...instagramContentRoutes(fake, 'instagram_manage_insights'),
  });
  return fake;
}
