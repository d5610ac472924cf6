/**
 * A local Facebook Graph API for Pages: the Login dialog, the code and
 * long-lived token exchanges, /me/accounts (paged), and the Page endpoints a
 * publisher uses (feed, photos, videos, stories, comments, permalinks) as
 * developers.facebook.com documents them. Versioned paths accept any version;
 * tests read which one came.
 */
import { consentAllows, startNetworkFake, type NetworkFake, type RecordedRequest } from './network-fake.ts';
import { authed, graphError, newId, paramsOf, tokenBook } from './meta.ts';

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
}

export interface FacebookFake extends NetworkFake {
  posts: FacebookPost[];
}

export async function startFacebookFake(): Promise<FacebookFake> {
  const fake = (await startNetworkFake()) as FacebookFake;
  fake.posts = [];
  const book = tokenBook(fake);
  book.valid.set(SHORT, 'user-1');
  book.valid.set(LONG, 'user-1');
  for (const page of FB_PAGES) book.valid.set(page.token, page.id);

  const tokenOfRequest = (r: RecordedRequest) => String(r.headers.authorization ?? '').replace(/^Bearer /, '');
  const store = (request: RecordedRequest, kind: FacebookPost['kind'], page: string, id: string) => {
    fake.posts.push({ id, kind, page, params: paramsOf(request), token: tokenOfRequest(request) });
  };
  /** Page endpoints act as the Page whose token came. */
  const asPage = (request: RecordedRequest, actor: string) => (actor === request.params.page ? undefined : graphError(200, '(#200) The user has not authorized the application to perform this action', { type: 'OAuthException' }));

  fake.route({
    'GET /:version/dialog/oauth': consentAllows(FB_CODE),
    'GET /:version/oauth/access_token': (request) => {
      const q = request.query;
      if (q.client_id !== FB_APP.id || q.client_secret !== FB_APP.secret) return graphError(101, 'Error validating application. Invalid application ID.', { type: 'OAuthException' });
      if (q.grant_type === 'fb_exchange_token') {
        return q.fb_exchange_token === SHORT ? { body: { access_token: LONG, token_type: 'bearer', expires_in: 5_184_000 } } : graphError(190, 'Invalid OAuth access token.');
      }
      if (q.code !== FB_CODE || q.redirect_uri !== fake.state.authorize?.redirect_uri) {
        return graphError(100, 'Invalid verification code format.', { type: 'OAuthException' });
      }
      return { body: { access_token: SHORT, token_type: 'bearer', expires_in: 5400 } };
    },
    // Pages come one per result page, so the cursor must be followed.
    'GET /:version/me/accounts': authed(fake, (request) => {
      const index = request.query.after === 'cursor-1' ? 1 : 0;
      const page = FB_PAGES[index];
      const fields = request.query.fields ?? '';
      const entry: Record<string, unknown> = { id: page.id, name: page.name, username: page.username, picture: { data: { url: `https://pics.example/${page.id}.jpg` } } };
      if (fields.includes('access_token')) entry.access_token = page.token;
      return {
        body: { data: [entry], paging: { cursors: { before: `cursor-${index}`, after: `cursor-${index + 1}` }, ...(index === 0 ? { next: `${fake.url}/${request.params.version}/me/accounts?after=cursor-1` } : {}) } },
      };
    }),
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
      if (!upload || !request.headers.file_url) return { status: 400, body: { debug_info: { type: 'ProcessingFailedError', message: 'Request processing failed' } } };
      upload.uploaded = true;
      return { body: { success: true } };
    },
    'POST /:version/:object/comments': authed(fake, (request) => {
      const target = request.params.object;
      const parent = fake.posts.find((p) => p.id === target || `${p.page}_${p.id}` === target);
      if (!parent) return graphError(100, `(#100) Object with ID '${target}' does not exist`);
      // Comment ids are "{object id}_{comment id}".
      const id = `${target.split('_').pop()}_${newId(fake)}`;
      store(request, 'comment', parent.page, id);
      return { body: { id } };
    }),
    'GET /:version/:page/published_posts': authed(fake, (request) => ({
      body: { data: fake.posts.filter((p) => p.page === request.params.page && p.kind === 'feed').map((p) => ({ id: p.id, message: p.params.message, created_time: new Date().toISOString().replace('Z', '+0000'), permalink_url: `https://www.facebook.com/${p.id}` })) },
    })),
    'GET /:version/:object': authed(fake, (request) => {
      const found = fake.posts.find((p) => p.id === request.params.object);
      if (!found) return graphError(100, `(#100) Object with ID '${request.params.object}' does not exist`);
      const permalink = found.kind === 'video' ? `/${found.page}/videos/${found.id}/` : `https://www.facebook.com/${found.page}/posts/${found.id.split('_').pop()}`;
      return { body: { id: found.id, permalink_url: permalink } };
    }),
  });
  return fake;
}
