/**
 * A local Threads API: the authorize screen, the code exchange, the long-lived
 * exchange and refresh, /me, and publishing as developers.facebook.com/docs/threads
 * describes it: POST /{user}/threads makes a container (media fetched from its
 * public URL), GET /{container}?fields=status,error_message reports
 * IN_PROGRESS then FINISHED, POST /{user}/threads_publish makes the post;
 * reply_to_id answers an earlier post; user insights (threads_insights) and
 * media insights need threads_manage_insights. The token comes as access_token.
 * Its create endpoint is threads_publish (`storeThenFail`).
 */
import { consentAllows, startNetworkFake, type FakeAnswer, type NetworkFake, type RecordedRequest } from './network-fake.ts';
import {
  authed,
  containerStore,
  createContainer,
  dailyFigure,
  dailyValue,
  granted,
  graphError,
  insightEntry,
  insightsBook,
  insightsRange,
  lifetimeFigure,
  lookAt,
  newId,
  paramsOf,
  rangeDays,
  requestedMetrics,
  tokenBook,
  graphServerError,
} from './meta.ts';

export const TH_APP = { id: 'threads-app-id', secret: 'threads-app-secret' };
export const TH_USER = { id: '26000000000000041', username: 'herald.threads', name: 'Herald on Threads' };
const CODE = 'th-code-1';

export interface ThreadsPost {
  id: string;
  container: string;
  text?: string;
  replyTo?: string;
  type: string;
  children: string[];
  /** When it was published (epoch ms). */
  at: number;
}

export interface ThreadsFake extends NetworkFake {
  posts: ThreadsPost[];
  lifetime: number;
}

/** Threads' documented count: 500 characters, where an emoji counts as many as its UTF-8 bytes. */
function documentedLength(text: string): number {
  let length = 0;
  for (const char of text)
    length += /\p{Extended_Pictographic}|\p{Emoji_Modifier}|\p{Regional_Indicator}|\u200d|\ufe0f/u.test(char) ? Buffer.byteLength(char) : 1;
  return length;
}

/** User metrics: views come by day, the others as a total over the range; follower_demographics takes no range. */
const USER_METRICS = ['views', 'likes', 'replies', 'reposts', 'quotes', 'clicks', 'followers_count', 'follower_demographics'];
const MEDIA_METRICS = ['views', 'likes', 'replies', 'reposts', 'quotes', 'shares'];
/** User insights since/until do not work before 2024-04-13. */
const EARLIEST = 1712991600;
const NO_PERMISSION = (): FakeAnswer => graphError(10, 'Application does not have permission for this action', { type: 'OAuthException' });
const metaTime = (at: number) => new Date(at).toISOString().replace(/\.\d+Z$/, '+0000');

export async function startThreadsFake(): Promise<ThreadsFake> {
  const fake = (await startNetworkFake()) as ThreadsFake;
  fake.posts = [];
  fake.lifetime = 5_184_000;
  const book = tokenBook(fake);
  const store = containerStore(fake);
  let issued = 0;
  const longLived = () => {
    const token = `th-long-${++issued}`;
    book.valid.set(token, TH_USER.id);
    return { body: { access_token: token, token_type: 'bearer', expires_in: fake.lifetime } };
  };
  const mine = (actor: string, user: string) =>
    actor === user ? undefined : graphError(10, '(#10) The user has not authorized the application', { type: 'OAuthException' });

  /** GET /{user}/threads_insights: views per day, the others as totals over since/until, followers as they stand. */
  const userInsights = (request: RecordedRequest, user: string): FakeAnswer => {
    const metrics = requestedMetrics(request, USER_METRICS);
    if (!Array.isArray(metrics)) return metrics;
    const p = paramsOf(request);
    if (metrics.includes('follower_demographics') && (p.since || p.until))
      return graphError(100, 'follower_demographics is not compatible with the since and until parameters');
    const range = insightsRange(request, 100_000);
    if (!('since' in range)) return range;
    if (range.since < EARLIEST) return graphError(100, `Param since must be on or after ${EARLIEST}`);
    const days = rangeDays(range.since, range.until);
    const total = (name: string) => days.reduce((sum, d) => sum + dailyFigure(fake, user, name, d), 0);
    const data = metrics.map((name) => {
      if (name === 'views') return insightEntry(user, name, 'day', { values: days.map((d) => dailyValue(d, dailyFigure(fake, user, name, d))) });
      if (name === 'followers_count') return insightEntry(user, name, 'day', { total_value: { value: lifetimeFigure(fake, user, name) } });
      return insightEntry(user, name, 'day', { total_value: { value: name === 'follower_demographics' ? {} : total(name) } });
    });
    return { body: { data } };
  };

  /** Every reply under a post, nested ones too (a root post's replies count them all). */
  const repliesUnder = (id: string): number => fake.posts.filter((p) => p.replyTo === id).reduce((n, p) => n + 1 + repliesUnder(p.id), 0);

  /** GET /{media}/insights: lifetime values; replies are the ones made, unless a test set the figure. */
  const mediaInsights = (request: RecordedRequest, post: ThreadsPost): FakeAnswer => {
    const metrics = requestedMetrics(request, MEDIA_METRICS);
    if (!Array.isArray(metrics)) return metrics;
    const set = insightsBook(fake).lifetime.get(post.id) ?? {};
    const value = (name: string) => (name === 'replies' && !('replies' in set) ? repliesUnder(post.id) : lifetimeFigure(fake, post.id, name));
    return { body: { data: metrics.map((name) => insightEntry(post.id, name, 'lifetime', { values: [{ value: value(name) }] })) } };
  };

  fake.route({
    'GET /oauth/authorize': consentAllows(CODE),
    'POST /oauth/access_token': (request) => {
      const f = request.form ?? {};
      if (f.client_id !== TH_APP.id || f.client_secret !== TH_APP.secret) return graphError(101, 'Error validating application.', { type: 'OAuthException' });
      if (f.grant_type !== 'authorization_code' || f.code !== CODE || f.redirect_uri !== fake.state.authorize?.redirect_uri)
        return graphError(100, 'Invalid verification code format.', { type: 'OAuthException' });
      book.valid.set('th-short', TH_USER.id);
      return { headers: { 'content-type': 'application/json' }, body: `{"access_token":"th-short","user_id":${TH_USER.id}}` };
    },
    'GET /access_token': (request) => {
      const q = request.query;
      if (q.grant_type !== 'th_exchange_token' || q.client_secret !== TH_APP.secret || q.access_token !== 'th-short')
        return graphError(190, 'Invalid OAuth access token.');
      return longLived();
    },
    'GET /refresh_access_token': (request) => {
      const token = request.query.access_token;
      if (request.query.grant_type !== 'th_refresh_token' || !book.valid.has(token) || book.revoked.has(token))
        return graphError(190, 'Error validating access token: Session has expired.', { subcode: 463 });
      return longLived();
    },
    'GET /:version/me': authed(fake, () => ({ body: { ...TH_USER, threads_profile_picture_url: 'https://pics.example/threads.jpg' } })),
    'POST /:version/:user/threads': authed(fake, async (request, actor) => {
      const denied = mine(actor, request.params.user);
      if (denied) return denied;
      const p = paramsOf(request);
      if (documentedLength(p.text ?? '') > 500) return graphError(100, 'Param text must be at most 500 characters long.', { subcode: 2207010 });
      if (p.media_type === 'TEXT' && !p.text) return graphError(100, 'Param text is required for TEXT posts');
      if (p.media_type === 'IMAGE' && !p.image_url) return graphError(100, 'Param image_url is required for IMAGE');
      if (p.media_type === 'VIDEO' && !p.video_url) return graphError(100, 'Param video_url is required for VIDEO');
      if (p.media_type === 'CAROUSEL') {
        const children = (p.children ?? '').split(',').filter(Boolean);
        if (children.length < 2 || children.length > 20) return graphError(100, 'A carousel needs 2 to 20 children');
        if (children.some((c) => !store.containers.has(c) || lookAt(store.containers.get(c)!) !== 'FINISHED'))
          return graphError(100, 'A carousel item is not ready');
      }
      if (p.reply_to_id && !fake.posts.some((x) => x.id === p.reply_to_id)) return graphError(100, `Param reply_to_id: no post ${p.reply_to_id}`);
      const container = await createContainer(fake, actor, p, 'FAILED_DOWNLOADING_VIDEO');
      return { body: { id: container.id } };
    }),
    'POST /:version/:user/threads_publish': authed(fake, (request, actor) => {
      const denied = mine(actor, request.params.user);
      if (denied) return denied;
      const container = store.containers.get(paramsOf(request).creation_id);
      if (!container) return graphError(100, 'Param creation_id is invalid');
      if (lookAt(container) !== 'FINISHED')
        return graphError(24, 'The requested resource does not exist', { subcode: 4279009, userMessage: 'Media not found or not ready' });
      container.state = 'PUBLISHED';
      const id = newId(fake);
      fake.posts.push({
        id,
        container: container.id,
        text: container.params.text,
        replyTo: container.params.reply_to_id,
        type: container.params.media_type,
        children: (container.params.children ?? '').split(',').filter(Boolean),
        at: Date.now(),
      });
      return { body: { id } };
    }),
    // The profile's posts (not its replies), newest first, at most `limit`.
    'GET /:version/:user/threads': authed(fake, (request) => ({
      body: {
        data: fake.posts
          .filter((p) => !p.replyTo)
          .reverse()
          .slice(0, Number(request.query.limit ?? 25))
          .map((p) => ({ id: p.id, text: p.text, timestamp: metaTime(p.at), permalink: `https://www.threads.net/@${TH_USER.username}/post/S${p.id}` })),
      },
    })),
    'GET /:version/:user/threads_insights': authed(fake, (request, actor) => {
      if (!granted(fake, 'threads_manage_insights')) return NO_PERMISSION();
      return mine(actor, request.params.user) ?? userInsights(request, request.params.user);
    }),
    'GET /:version/:media/insights': authed(fake, (request) => {
      if (!granted(fake, 'threads_manage_insights')) return NO_PERMISSION();
      const post = fake.posts.find((p) => p.id === request.params.media);
      return post ? mediaInsights(request, post) : graphError(100, `Object with ID '${request.params.media}' does not exist`);
    }),
    'GET /:version/:media/replies': authed(fake, (request) => ({
      body: {
        data: fake.posts
          .filter((p) => p.replyTo === request.params.media)
          .map((p) => ({ id: p.id, text: p.text, timestamp: new Date().toISOString().replace(/\.\d+Z$/, '+0000') })),
      },
    })),
    'GET /:version/:id': authed(fake, (request) => {
      const id = request.params.id;
      const container = store.containers.get(id);
      if (container) {
        const state = lookAt(container);
        return { body: { id, status: state, ...(container.error ? { error_message: container.error } : {}) } };
      }
      const post = fake.posts.find((p) => p.id === id);
      if (post) return { body: { id, permalink: `https://www.threads.net/@${TH_USER.username}/post/S${id}`, shortcode: `S${id}` } };
      return graphError(100, `Object with ID '${id}' does not exist`);
    }),
  });
  // Store, then answer a 5xx (`storeThenFail`): threads_publish is what publishes (a container publishes nothing).
  fake.create = { route: 'POST /:version/:user/threads_publish', serverError: graphServerError };
  return fake;
}
