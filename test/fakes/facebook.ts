/**
 * A local Facebook Graph API for Pages: the Login dialog, the code and
 * long-lived token exchanges, /me/accounts (paged), and the Page endpoints a
 * publisher uses (feed, photos, videos, stories, comments, permalinks) as
 * developers.facebook.com documents them, and their insights (Page Insights
 * by day, a post's lifetime insights, a video's video_insights; read_insights
 * needed). Versioned paths accept any version; tests read which one came. Its
 * create endpoint is the Page feed (`storeThenFail`).
 */
import { consentAllows, startNetworkFake, type FakeAnswer, type NetworkFake, type RecordedRequest } from './network-fake.ts';
import {
  authed,
  dailyFigure,
  dailyValue,
  granted,
  graphError,
  insightEntry,
  insightsAnswer,
  insightsRange,
  lifetimeFigure,
  newId,
  paramsOf,
  pick,
  rangeDays,
  requestedMetrics,
  tokenBook,
  graphServerError,
} from './meta.ts';

export const FB_APP = { id: 'fb-app-id', secret: 'fb-app-secret' };
export const FB_CODE = 'fb-code-1';
export const FB_PAGES = [
  { id: '1010', name: 'Herald Bakery', username: 'heraldbakery', token: 'page-token-bakery' },
  { id: '1020', name: 'Herald Garage', username: 'heraldgarage', token: 'page-token-garage' },
];
const SHORT = 'fb-user-short';
const LONG = 'fb-user-long';

export interface FacebookPost {
  id: string;
  kind: 'feed' | 'photo' | 'video' | 'comment' | 'story';
  page: string;
  params: Record<string, string>;
  token: string;
  /** When it was made (epoch ms). */
  at: number;
  /** What a comment is under. */
  parent?: string;
}

/** A Business Manager account, with the Pages it owns and its clients' Pages it was given access to. */
export interface FacebookBusiness {
  id: string;
  name: string;
  owned: FacebookPage[];
  client: FacebookPage[];
}

export type FacebookPage = { id: string; name: string; username: string; token: string };

export interface FacebookFake extends NetworkFake {
  posts: FacebookPost[];
  /** The user's Business Manager accounts (none unless a test adds them); their Pages' tokens are valid. */
  businesses: FacebookBusiness[];
  /** Followers of each Page (0 when not set), as its followers_count field says. */
  followers: Map<string, number>;
  /** How often each post was shared (Meta leaves `shares` out of a post nobody shared). */
  shares: Map<string, number>;
}

/** Page metrics with daily values (Page Insights reference), and the post and video lifetime metrics. */
const PAGE_METRICS = [
  'page_media_view',
  'page_total_media_view_unique',
  'page_post_engagements',
  'page_daily_follows_unique',
  'page_daily_unfollows_unique',
  'page_views_total',
  'page_follows',
  'page_video_views',
];
const POST_METRICS = ['post_media_view', 'post_total_media_view_unique', 'post_reactions_by_type_total', 'post_clicks', 'post_video_views'];
const VIDEO_METRICS = ['total_video_views', 'total_video_views_unique', 'total_video_avg_time_watched'];
const PERIOD_DAYS: Record<string, number> = { day: 1, week: 7, days_28: 28 };
/** Page Insights take at most 90 days between since and until. */
const PAGE_RANGE_DAYS = 90;
/** Business Manager reads need business_management (Business Management API reference). */
const NO_BUSINESS = (): FakeAnswer => graphError(200, '(#200) Requires business_management permission to manage the object', { type: 'OAuthException' });
const NO_INSIGHTS = (): FakeAnswer => graphError(200, '(#200) Requires extended permission: read_insights', { type: 'OAuthException' });

export async function startFacebookFake(): Promise<FacebookFake> {
  const fake = (await startNetworkFake()) as FacebookFake;
  fake.posts = [];
  fake.businesses = [];
  fake.followers = new Map();
  fake.shares = new Map();
  const book = tokenBook(fake);
  book.valid.set(SHORT, 'user-1');
  book.valid.set(LONG, 'user-1');
  for (const page of FB_PAGES) book.valid.set(page.token, page.id);

  const tokenOfRequest = (r: RecordedRequest) => String(r.headers.authorization ?? '').replace(/^Bearer /, '');
  const store = (request: RecordedRequest, kind: FacebookPost['kind'], page: string, id: string, parent?: string) => {
    fake.posts.push({ id, kind, page, params: paramsOf(request), token: tokenOfRequest(request), at: Date.now(), ...(parent ? { parent } : {}) });
  };
  const metaTime = (at: number) => new Date(at).toISOString().replace(/\.\d+Z$/, '+0000');
  const businessPages = () => fake.businesses.flatMap((b) => [...b.owned, ...b.client]);
  const isPage = (id: string) => [...FB_PAGES, ...businessPages()].some((p) => p.id === id);
  /** A Page as a Graph list gives it; its token only when asked for. */
  const pageEntry = (request: RecordedRequest, page: FacebookPage) => ({
    id: page.id,
    name: page.name,
    username: page.username,
    picture: { data: { url: `https://pics.example/${page.id}.jpg` } },
    ...((request.query.fields ?? '').includes('access_token') ? { access_token: page.token } : {}),
  });
  const businessPagesList = (edge: 'owned' | 'client') =>
    authed(fake, (request) => {
      if (!granted(fake, 'business_management')) return NO_BUSINESS();
      const business = fake.businesses.find((b) => b.id === request.params.business);
      if (!business) return graphError(100, `(#100) Unsupported get request. Object with ID '${request.params.business}' does not exist`);
      return { body: { data: business[edge].map((page) => pageEntry(request, page)), paging: { cursors: { before: 'b0', after: 'b0' } } } };
    });

  /** GET /{page-id}/insights: each metric's value per day of the range (a week's or 28 days' sum ending that day). */
  const pageInsights = (request: RecordedRequest, page: string): FakeAnswer => {
    const metrics = requestedMetrics(request, PAGE_METRICS);
    if (!Array.isArray(metrics)) return metrics;
    const period = paramsOf(request).period ?? 'day';
    const span = PERIOD_DAYS[period];
    if (!span) return graphError(100, `(#100) The period ${period} is not supported for these metrics`);
    const range = insightsRange(request, PAGE_RANGE_DAYS);
    if (!('since' in range)) return range;
    const days = rangeDays(range.since, range.until);
    const sum = (metric: string, last: string) => {
      let total = 0;
      for (let i = 0; i < span; i++)
        total += dailyFigure(fake, page, metric, new Date(Date.parse(`${last}T00:00:00Z`) - i * 86_400_000).toISOString().slice(0, 10));
      return total;
    };
    const data = metrics.map((name) => insightEntry(page, name, period, { values: days.map((d) => dailyValue(d, sum(name, d))) }));
    return insightsAnswer(fake, request, range, data);
  };

  /** GET /{post-id}/insights: lifetime values; a video is not a post and has no such edge. */
  const postInsights = (request: RecordedRequest, post: FacebookPost): FakeAnswer => {
    if (post.kind === 'video') return graphError(100, '(#100) Tried accessing nonexisting field (insights) on node type (Video)');
    const metrics = requestedMetrics(request, POST_METRICS);
    if (!Array.isArray(metrics)) return metrics;
    return { body: { data: metrics.map((name) => insightEntry(post.id, name, 'lifetime', { values: [{ value: lifetimeFigure(fake, post.id, name) }] })) } };
  };
  /** Page endpoints act as the Page whose token came. */
  const asPage = (request: RecordedRequest, actor: string) =>
    actor === request.params.page
      ? undefined
      : graphError(200, '(#200) The user has not authorized the application to perform this action', { type: 'OAuthException' });

  fake.route({
    'GET /:version/dialog/oauth': consentAllows(FB_CODE),
    'GET /:version/oauth/access_token': (request) => {
      const q = request.query;
      if (q.client_id !== FB_APP.id || q.client_secret !== FB_APP.secret)
        return graphError(101, 'Error validating application. Invalid application ID.', { type: 'OAuthException' });
      if (q.grant_type === 'fb_exchange_token') {
        return q.fb_exchange_token === SHORT
          ? { body: { access_token: LONG, token_type: 'bearer', expires_in: 5_184_000 } }
          : graphError(190, 'Invalid OAuth access token.');
      }
      if (q.code !== FB_CODE || q.redirect_uri !== fake.state.authorize?.redirect_uri) {
        return graphError(100, 'Invalid verification code format.', { type: 'OAuthException' });
      }
      return { body: { access_token: SHORT, token_type: 'bearer', expires_in: 5400 } };
    },
    // Pages come one per result page, so the cursor must be followed.
    'GET /:version/me/accounts': authed(fake, (request) => {
      const index = request.query.after === 'cursor-1' ? 1 : 0;
      return {
        body: {
          data: [pageEntry(request, FB_PAGES[index])],
          paging: {
            cursors: { before: `cursor-${index}`, after: `cursor-${index + 1}` },
            ...(index === 0 ? { next: `${fake.url}/${request.params.version}/me/accounts?after=cursor-1` } : {}),
          },
        },
      };
    }),
    'GET /:version/me/businesses': authed(fake, (request) => {
      if (!granted(fake, 'business_management')) return NO_BUSINESS();
      return { body: { data: fake.businesses.map((b) => pick(request, { id: b.id, name: b.name })), paging: { cursors: { before: 'b0', after: 'b0' } } } };
    }),
    'GET /:version/:business/owned_pages': businessPagesList('owned'),
    'GET /:version/:business/client_pages': businessPagesList('client'),
    'POST /:version/:page/feed': authed(fake, (request, actor) => {
      const denied = asPage(request, actor);
      if (denied) return denied;
      const p = paramsOf(request);
      if (!p.message && !p.link && !p.attached_media) return graphError(100, '(#100) Missing message or attachment');
      if (p.attached_media) {
        for (const { media_fbid } of JSON.parse(p.attached_media)) {
          if (!fake.posts.some((x) => x.id === media_fbid && x.kind === 'photo')) return graphError(100, `(#100) Invalid media_fbid ${media_fbid}`);
        }
      }
      const id = `${request.params.page}_${newId(fake)}`;
      store(request, 'feed', request.params.page, id);
      return { body: { id } };
    }),
    'POST /:version/:page/photos': authed(fake, (request, actor) => {
      const denied = asPage(request, actor);
      if (denied) return denied;
      const photoId = newId(fake);
      store(request, 'photo', request.params.page, photoId);
      const published = paramsOf(request).published !== 'false';
      return { body: published ? { id: photoId, post_id: `${request.params.page}_${photoId}` } : { id: photoId } };
    }),
    'POST /:version/:page/videos': authed(fake, (request, actor) => {
      const denied = asPage(request, actor);
      if (denied) return denied;
      const id = newId(fake);
      store(request, 'video', request.params.page, id);
      return { body: { id } };
    }),
    'POST /:version/:page/photo_stories': authed(fake, (request, actor) => {
      const denied = asPage(request, actor);
      if (denied) return denied;
      const id = newId(fake);
      store(request, 'story', request.params.page, id);
      return { body: { success: true, post_id: id } };
    }),
    'POST /:version/:page/video_stories': authed(fake, (request, actor) => {
      const denied = asPage(request, actor);
      if (denied) return denied;
      const p = paramsOf(request);
      if (p.upload_phase === 'start') {
        const videoId = newId(fake);
        fake.state.storyUploads = { ...fake.state.storyUploads, [videoId]: { uploaded: false } };
        return { body: { video_id: videoId, upload_url: `${fake.url}/video-upload/${request.params.version}/${videoId}` } };
      }
      if (p.upload_phase === 'finish') {
        if (!fake.state.storyUploads?.[p.video_id]?.uploaded) return graphError(100, '(#100) The video was not uploaded');
        store(request, 'story', request.params.page, p.video_id);
        return { body: { success: true, post_id: `${request.params.page}_${p.video_id}` } };
      }
      return graphError(100, '(#100) upload_phase must be start or finish');
    }),
    // rupload.facebook.com: the token as "OAuth <token>", the bytes or a file_url header.
    'POST /video-upload/:version/:video': (request) => {
      const token = String(request.headers.authorization ?? '').replace(/^OAuth /, '');
      if (!tokenBook(fake).valid.has(token)) return graphError(190, 'Invalid OAuth access token.');
      const upload = fake.state.storyUploads?.[request.params.video];
      if (!upload || !request.headers.file_url)
        return { status: 400, body: { debug_info: { type: 'ProcessingFailedError', message: 'Request processing failed' } } };
      upload.uploaded = true;
      return { body: { success: true } };
    },
    'POST /:version/:object/comments': authed(fake, (request) => {
      const target = request.params.object;
      const parent = fake.posts.find((p) => p.id === target || `${p.page}_${p.id}` === target);
      if (!parent) return graphError(100, `(#100) Object with ID '${target}' does not exist`);
      // Comment ids are "{object id}_{comment id}".
      const id = `${target.split('_').pop()}_${newId(fake)}`;
      store(request, 'comment', parent.page, id, target);
      return { body: { id } };
    }),
    'GET /:version/:page/published_posts': authed(fake, (request) => ({
      // Newest first, at most `limit`.
      body: {
        data: fake.posts
          .filter((p) => p.page === request.params.page && p.kind === 'feed')
          .reverse()
          .slice(0, Number(request.query.limit ?? 25))
          .map((p) => ({ id: p.id, message: p.params.message, created_time: metaTime(p.at), permalink_url: `https://www.facebook.com/${p.id}` })),
      },
    })),
    'GET /:version/:object/insights': authed(fake, (request, actor) => {
      const id = request.params.object;
      if (!granted(fake, 'read_insights')) return NO_INSIGHTS();
      if (isPage(id))
        return actor === id
          ? pageInsights(request, id)
          : graphError(200, '(#200) The user has not authorized the application to perform this action', { type: 'OAuthException' });
      const post = fake.posts.find((p) => p.id === id);
      return post ? postInsights(request, post) : graphError(100, `(#100) Object with ID '${id}' does not exist`);
    }),
    // All of a video's lifetime metrics unless `metric` narrows them.
    'GET /:version/:video/video_insights': authed(fake, (request) => {
      const video = fake.posts.find((p) => p.id === request.params.video && p.kind === 'video');
      if (!video) return graphError(100, `(#100) Object with ID '${request.params.video}' does not exist`);
      if (!granted(fake, 'read_insights')) return NO_INSIGHTS();
      const metrics = paramsOf(request).metric ? requestedMetrics(request, VIDEO_METRICS) : VIDEO_METRICS;
      if (!Array.isArray(metrics)) return metrics;
      return {
        body: {
          data: metrics.map((name) =>
            insightEntry(video.id, name, 'lifetime', { values: [{ value: lifetimeFigure(fake, video.id, name) }] }, 'video_insights'),
          ),
        },
      };
    }),
    'GET /:version/:object': authed(fake, (request) => {
      const id = request.params.object;
      const page = FB_PAGES.find((p) => p.id === id);
      if (page) return { body: pick(request, { id, name: page.name, username: page.username, followers_count: fake.followers.get(id) ?? 0 }) };
      const found = fake.posts.find((p) => p.id === id);
      if (!found) return graphError(100, `(#100) Object with ID '${id}' does not exist`);
      const permalink =
        found.kind === 'video' ? `/${found.page}/videos/${found.id}/` : `https://www.facebook.com/${found.page}/posts/${found.id.split('_').pop()}`;
      const comments = fake.posts.filter((p) => p.kind === 'comment' && p.parent === id).length;
      const shares = fake.shares.get(id) ?? 0;
      return {
        body: pick(request, {
          id: found.id,
          permalink_url: permalink,
          message: found.params.message,
          created_time: metaTime(found.at),
          shares: shares > 0 ? { count: shares } : undefined,
          // comments.limit(0).summary(true): no comments listed, only the summary.
          comments: { data: [], summary: { order: 'ranked', total_count: comments, can_comment: true } },
        }),
      };
    }),
  });
  // Store, then answer a 5xx (`storeThenFail`) on the Page feed; the photo, video and comment edges take the same error.
  fake.create = { route: 'POST /:version/:page/feed', serverError: graphServerError };
  return fake;
}

/** Gives the user a Business Manager account; its Pages' tokens work like any Page's. */
export function addBusiness(fake: FacebookFake, business: FacebookBusiness): void {
  fake.businesses.push(business);
  for (const page of [...business.owned, ...business.client]) tokenBook(fake).valid.set(page.token, page.id);
}
