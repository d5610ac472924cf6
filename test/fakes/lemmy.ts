/**
 * A local Lemmy 0.19 instance (API v3) as its source describes it: login
 * returning a JWT (401 {"error":"incorrect_login"} otherwise), `Authorization:
 * Bearer` required on posts, comments and uploads (400 not_logged_in), titles of
 * 3-200 characters on one line, bodies counted in UTF-16 units (50,000 for a
 * post, 10,000 for a comment), communities that must exist
 * (couldnt_find_community), pict-rs uploads in the multipart field `images[]`,
 * and the per-IP post limit answered with {"error":"rate_limit_error"}. Its
 * create endpoint is POST /api/v3/post (`storeThenFail`).
 */
import { STATUS_CODES } from 'node:http';
import crypto from 'node:crypto';
import { startNetworkFake, type FakeAnswer, type NetworkFake, type RecordedRequest } from './network-fake.ts';

export interface FakePerson {
  id: number;
  name: string;
  display_name: string;
  password: string;
  /** Needs a second factor at login. */
  totp?: boolean;
}

export interface FakePost {
  id: number;
  name: string;
  community_id: number;
  creator_id: number;
  body?: string;
  url?: string;
  alt_text?: string;
  published: string;
  counts: { score: number; upvotes: number; downvotes: number; comments: number };
}

export interface FakeComment {
  id: number;
  post_id: number;
  parent_id?: number;
  content: string;
  creator_id: number;
}

export interface LemmyFake extends NetworkFake {
  people: FakePerson[];
  communities: { id: number; name: string; title: string }[];
  posts: FakePost[];
  comments: FakeComment[];
  images: { file: string; data: Buffer; type: string }[];
  /** JWTs the instance honours (logging out or a restart of sessions clears them). */
  sessions: Map<string, number>;
  /** Posts allowed per window per client IP when set (Lemmy's default is 6 per 600 s). */
  postLimit?: { count: number; windowMs: number };
  /** The next post to this community meets the post limit (rate_limit_error, nothing stored). */
  limitedOnce?: number;
}

const error = (code: string, status = 400): FakeAnswer => ({ status, body: { error: code } });

export async function startLemmyFake(): Promise<LemmyFake> {
  const fake = (await startNetworkFake()) as LemmyFake;
  fake.people = [{ id: 31, name: 'herald', display_name: 'Herald Bot', password: 'correct horse battery' }];
  fake.communities = [
    { id: 5, name: 'technology', title: 'Technology' },
    { id: 9, name: 'selfhosted', title: 'Self-hosted' },
  ];
  fake.posts = [];
  fake.comments = [];
  fake.images = [];
  fake.sessions = new Map();
  let nextPost = 500;
  let nextComment = 9000;
  const postTimes: number[] = [];

  const host = () => new URL(fake.url).host;
  /** The logged-in person, from `Authorization: Bearer <jwt>`. */
  const personOf = (req: RecordedRequest) => {
    const jwt = /^Bearer (.+)$/.exec(String(req.headers.authorization ?? ''))?.[1];
    const id = jwt ? fake.sessions.get(jwt) : undefined;
    return fake.people.find((p) => p.id === id);
  };
  const personJson = (p: FakePerson) => ({
    id: p.id,
    name: p.name,
    display_name: p.display_name,
    avatar: `${fake.url}/pictrs/image/avatar.png`,
    actor_id: `${fake.url}/u/${p.name}`,
    local: true,
  });
  const postJson = (p: FakePost) => ({
    post: {
      id: p.id,
      name: p.name,
      url: p.url ?? null,
      body: p.body ?? null,
      ap_id: `${fake.url}/post/${p.id}`,
      creator_id: p.creator_id,
      community_id: p.community_id,
      published: p.published,
    },
    creator: personJson(fake.people.find((x) => x.id === p.creator_id)!),
    community: fake.communities.find((c) => c.id === p.community_id),
    counts: { post_id: p.id, ...p.counts },
  });

  fake.route({
    'POST /api/v3/user/login': (req) => {
      const { username_or_email: who, password, totp_2fa_token: totp } = req.json ?? {};
      const person = fake.people.find((p) => p.name === who || `${p.name}@example.com` === who);
      if (!person || person.password !== password) return error('incorrect_login', 401);
      if (person.totp && !totp) return error('missing_totp_token');
      const jwt = `eyJ${crypto.randomBytes(12).toString('hex')}`;
      fake.sessions.set(jwt, person.id);
      return { body: { jwt, registration_created: false, verify_email_sent: false } };
    },
    'GET /api/v3/site': (req) => {
      const person = personOf(req);
      return { body: { site_view: { site: { name: 'Fake Lemmy' } }, ...(person ? { my_user: { local_user_view: { person: personJson(person) } } } : {}) } };
    },
    'GET /api/v3/community': (req) => {
      const c = fake.communities.find((x) => x.name === req.query.name || `${x.name}@${host()}` === req.query.name);
      return c ? { body: { community_view: { community: c } } } : error('couldnt_find_community', 404);
    },
    'GET /api/v3/search': (req) => {
      const word = String(req.query.q ?? '').toLowerCase();
      const found = fake.communities.filter((c) => c.name.includes(word) || c.title.toLowerCase().includes(word));
      return {
        body: { type_: 'Communities', communities: found.map((c) => ({ community: { ...c, actor_id: `${fake.url}/c/${c.name}` } })), posts: [], users: [] },
      };
    },
    'POST /pictrs/image': (req) => {
      if (!personOf(req)) return error('not_logged_in');
      const files = req.multipart?.files.filter((f) => f.name === 'images[]') ?? [];
      if (files.length === 0) return { status: 400, body: { msg: 'no images[] field' } };
      const stored = files.map((f) => ({
        file: `${crypto.randomBytes(6).toString('hex')}.${f.type.split('/')[1]}`,
        delete_token: crypto.randomUUID(),
        data: f.data,
        type: f.type,
      }));
      fake.images.push(...stored);
      return { status: 201, body: { msg: 'ok', files: stored.map(({ file, delete_token }) => ({ file, delete_token })) } };
    },
    'POST /api/v3/post': (req) => {
      const person = personOf(req);
      if (!person) return error('not_logged_in');
      if (fake.postLimit) {
        const since = Date.now() - fake.postLimit.windowMs;
        if (postTimes.filter((t) => t > since).length >= fake.postLimit.count) return error('rate_limit_error');
        postTimes.push(Date.now());
      }
      const input = req.json ?? {};
      if (fake.limitedOnce !== undefined && input.community_id === fake.limitedOnce) {
        fake.limitedOnce = undefined;
        return error('rate_limit_error');
      }
      if ('honeypot' in input) return error('honeypot_failed');
      const name = String(input.name ?? '');
      if (name.trim().length < 3 || name.trim().length > 200 || /[\r\n]/.test(name)) return error('invalid_post_title');
      if (input.body !== undefined && String(input.body).length > 50_000) return error('invalid_body_field');
      if (input.url !== undefined) {
        if (String(input.url).length > 2000) return error('url_length_overflow');
        if (!/^(https?:\/\/|magnet:)/.test(String(input.url))) return error('invalid_url_scheme');
      }
      if (!fake.communities.some((c) => c.id === input.community_id)) return error('couldnt_find_community', 404);
      const post: FakePost = {
        id: nextPost++,
        name,
        community_id: input.community_id,
        creator_id: person.id,
        body: input.body,
        url: input.url,
        alt_text: input.alt_text,
        published: new Date().toISOString(),
        counts: { score: 1, upvotes: 1, downvotes: 0, comments: 0 },
      };
      fake.posts.push(post);
      return { body: { post_view: postJson(post) } };
    },
    'GET /api/v3/post': (req) => {
      const post = fake.posts.find((p) => p.id === Number(req.query.id));
      return post ? { body: { post_view: postJson(post) } } : error('couldnt_find_post', 404);
    },
    'GET /api/v3/post/list': (req) => {
      const limit = Number(req.query.limit ?? 10);
      const list = fake.posts.filter((p) => req.query.community_id === undefined || p.community_id === Number(req.query.community_id)).reverse();
      return { body: { posts: list.slice(0, limit).map(postJson) } };
    },
    'POST /api/v3/comment': (req) => {
      const person = personOf(req);
      if (!person) return error('not_logged_in');
      const { content, post_id: postId, parent_id: parentId } = req.json ?? {};
      const text = String(content ?? '');
      if (text.trim() === '' || text.length > 10_000) return error('invalid_body_field');
      const post = fake.posts.find((p) => p.id === postId);
      if (!post) return error('couldnt_find_post', 404);
      if (parentId !== undefined && !fake.comments.some((c) => c.id === parentId && c.post_id === postId)) return error('couldnt_find_comment', 404);
      const c: FakeComment = { id: nextComment++, post_id: postId, parent_id: parentId, content: text, creator_id: person.id };
      fake.comments.push(c);
      post.counts.comments++;
      return {
        body: {
          comment_view: { comment: { id: c.id, ap_id: `${fake.url}/comment/${c.id}`, content: text, path: `0.${parentId ? `${parentId}.` : ''}${c.id}` } },
        },
      };
    },
    'GET /api/v3/user': (req) => {
      const person = fake.people.find((p) => p.name === req.query.username);
      if (!person) return error('couldnt_find_person', 404);
      const mine = fake.posts.filter((p) => p.creator_id === person.id).reverse();
      return {
        body: {
          person_view: {
            person: personJson(person),
            counts: { person_id: person.id, post_count: mine.length, comment_count: fake.comments.filter((c) => c.creator_id === person.id).length },
          },
          posts: mine.slice(0, Number(req.query.limit ?? 10)).map(postJson),
          comments: [],
        },
      };
    },
  });
  // Store, then answer a 5xx (`storeThenFail`) on post creation: Lemmy's own errors are 400s, a 5xx is its proxy's page.
  fake.create = {
    route: 'POST /api/v3/post',
    serverError: (status) => ({
      status,
      body: `<html><head><title>${status} ${STATUS_CODES[status]}</title></head><body><center><h1>${status} ${STATUS_CODES[status]}</h1></center><hr><center>nginx</center></body></html>`,
      headers: { 'content-type': 'text/html' },
    }),
  };
  return fake;
}
