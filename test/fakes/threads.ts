/**
 * A local Threads API: the authorize screen, the code exchange, the long-lived
 * exchange and refresh, /me, and publishing as developers.facebook.com/docs/threads
 * describes it: POST /{user}/threads makes a container (media fetched from its
 * public URL), GET /{container}?fields=status,error_message reports
 * IN_PROGRESS then FINISHED, POST /{user}/threads_publish makes the post;
 * reply_to_id answers an earlier post. The token comes as access_token.
 */
import { consentAllows, startNetworkFake, type NetworkFake } from './network-fake.ts';
import { authed, containerStore, createContainer, graphError, lookAt, newId, paramsOf, tokenBook } from './meta.ts';

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
}

export interface ThreadsFake extends NetworkFake {
  posts: ThreadsPost[];
  lifetime: number;
}

/** Threads' documented count: 500 characters, where an emoji counts as many as its UTF-8 bytes. */
function documentedLength(text: string): number {
  let length = 0;
  for (const char of text) length += /\p{Extended_Pictographic}|\p{Emoji_Modifier}|\p{Regional_Indicator}|\u200d|\ufe0f/u.test(char) ? Buffer.byteLength(char) : 1;
  return length;
}

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
  const mine = (actor: string, user: string) => (actor === user ? undefined : graphError(10, '(#10) The user has not authorized the application', { type: 'OAuthException' }));

  fake.route({
    'GET /oauth/authorize': consentAllows(CODE),
    'POST /oauth/access_token': (request) => {
      const f = request.form ?? {};
      if (f.client_id !== TH_APP.id || f.client_secret !== TH_APP.secret) return graphError(101, 'Error validating application.', { type: 'OAuthException' });
      if (f.grant_type !== 'authorization_code' || f.code !== CODE || f.redirect_uri !== fake.state.authorize?.redirect_uri) return graphError(100, 'Invalid verification code format.', { type: 'OAuthException' });
      book.valid.set('th-short', TH_USER.id);
      return { headers: { 'content-type': 'application/json' }, body: `{"access_token":"th-short","user_id":${TH_USER.id}}` };
    },
    'GET /access_token': (request) => {
      const q = request.query;
      if (q.grant_type !== 'th_exchange_token' || q.client_secret !== TH_APP.secret || q.access_token !== 'th-short') return graphError(190, 'Invalid OAuth access token.');
      return longLived();
    },
    'GET /refresh_access_token': (request) => {
      const token = request.query.access_token;
      if (request.query.grant_type !== 'th_refresh_token' || !book.valid.has(token) || book.revoked.has(token)) return graphError(190, 'Error validating access token: Session has expired.', { subcode: 463 });
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
        if (children.some((c) => !store.containers.has(c) || lookAt(store.containers.get(c)!) !== 'FINISHED')) return graphError(100, 'A carousel item is not ready');
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
      if (lookAt(container) !== 'FINISHED') return graphError(24, 'The requested resource does not exist', { subcode: 4279009, userMessage: 'Media not found or not ready' });
      container.state = 'PUBLISHED';
      const id = newId(fake);
      fake.posts.push({ id, container: container.id, text: container.params.text, replyTo: container.params.reply_to_id, type: container.params.media_type, children: (container.params.children ?? '').split(',').filter(Boolean) });
      return { body: { id } };
    }),
    'GET /:version/:user/threads': authed(fake, () => ({ body: { data: fake.posts.filter((p) => !p.replyTo).reverse().map((p) => ({ id: p.id, text: p.text, timestamp: new Date().toISOString().replace(/\.\d+Z$/, '+0000'), permalink: `https://www.threads.net/@${TH_USER.username}/post/S${p.id}` })) } })),
    'GET /:version/:media/replies': authed(fake, (request) => ({ body: { data: fake.posts.filter((p) => p.replyTo === request.params.media).map((p) => ({ id: p.id, text: p.text, timestamp: new Date().toISOString().replace(/\.\d+Z$/, '+0000') })) } })),
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
  return fake;
}
