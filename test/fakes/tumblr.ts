/**
 * A local stand-in for Tumblr's API v2 as its docs (api.md, npf-spec.md)
 * describe it: the OAuth 2 consent screen, /v2/oauth2/token (access tokens
 * for 2,520 s, refresh tokens rotated, 401 for a spent one), a User-Agent and a
 * Bearer token required on every call, /v2/user/info with the user's blogs,
 * NPF post creation as JSON or multipart (a `json` part plus one part per media
 * identifier: unknown or missing identifiers are 400 with subcode 8001), text
 * blocks of at most 4,096 code points, at most 30 images and 1 uploaded video,
 * 201 with the id as a string. Every answer is wrapped in {meta, response}.
 * Its create endpoint is NPF post creation (`storeThenFail`).
 */
import { STATUS_CODES } from 'node:http';
import { consentAllows, startNetworkFake, type FakeAnswer, type NetworkFake, type RecordedRequest } from './network-fake.ts';

export const TUMBLR_APP = { clientId: 'tumblr-consumer-key', clientSecret: 'tumblr-consumer-secret' };

export interface TumblrPost {
  /** 64-bit id, above what a JSON number keeps exactly. */
  id: string;
  blog: string;
  body: any;
  files: { name: string; type: string; data: Buffer }[];
  timestamp: number;
  notes: { total_notes: number; total_likes: number; total_reblogs: number };
}

export interface TumblrFake extends NetworkFake {
  accessTokens: Map<string, number>;
  refreshTokens: Set<string>;
  posts: TumblrPost[];
  blogs: { name: string; uuid: string; title: string; url: string; primary: boolean; followers: number; posts: number; type: string }[];
  /** Scopes the user allows (all asked for by default). */
  grantedScopes?: string[];
  expireTokens(): void;
}

export function tumblrError(status: number, msg: string, title?: string, code?: number, headers?: Record<string, string>): FakeAnswer {
  return { status, headers, body: { meta: { status, msg }, response: [], ...(title ? { errors: [{ title, code, detail: title }] } : {}) } };
}

const ok = (status: number, msg: string, response: unknown): FakeAnswer => ({ status, body: { meta: { status, msg }, response } });

export async function startTumblrFake(): Promise<TumblrFake> {
  let issued = 0;
  let postCount = 0;
  const fake = (await startNetworkFake()) as TumblrFake;
  fake.accessTokens = new Map();
  fake.refreshTokens = new Set();
  fake.posts = [];
  fake.blogs = [
    {
      name: 'heraldnotes',
      uuid: 't:hErAlDnOtEs1',
      title: 'Herald Notes',
      url: 'https://heraldnotes.tumblr.com/',
      primary: true,
      followers: 0,
      posts: 0,
      type: 'public',
    },
    {
      name: 'heraldsideblog',
      uuid: 't:sIdEbLoG22',
      title: 'Side Blog',
      url: 'https://heraldsideblog.tumblr.com/',
      primary: false,
      followers: 3,
      posts: 1,
      type: 'public',
    },
  ];
  fake.expireTokens = () => {
    for (const token of fake.accessTokens.keys()) fake.accessTokens.set(token, Date.now() - 1);
  };
  const tokens = (scope: string) => {
    issued++;
    const access = `tumblr-access-${issued}`;
    const refresh = `tumblr-refresh-${issued}`;
    fake.accessTokens.set(access, Date.now() + 2520_000);
    fake.refreshTokens.add(refresh);
    return { access_token: access, expires_in: 2520, id_token: false, refresh_token: refresh, scope, token_type: 'bearer' };
  };

  /** User-Agent and Bearer on every API call. */
  const gate = (request: RecordedRequest): FakeAnswer | undefined => {
    if (!request.headers['user-agent']) return tumblrError(400, 'Bad Request', 'A User-Agent header is required');
    const token = /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1];
    const expires = token ? fake.accessTokens.get(token) : undefined;
    if (expires === undefined || expires < Date.now()) return tumblrError(401, 'Unauthorized');
    return undefined;
  };
  const blogOf = (identifier: string) => fake.blogs.find((b) => b.name === identifier || b.uuid === identifier || `${b.name}.tumblr.com` === identifier);

  /** NPF checks (npf-spec "Post Content Limits") and the media parts the blocks reference. */
  const checkPost = (body: any, files: { name: string }[]): FakeAnswer | undefined => {
    const bad = (title: string) => tumblrError(400, 'Bad Request', title, 8001);
    if (!body || !Array.isArray(body.content)) return bad("'content' must be an array");
    if (body.content.length === 0 || body.content.length > 1000) return bad('a post has 1 to 1,000 content blocks');
    const referenced: string[] = [];
    let images = 0;
    let nativeVideos = 0;
    for (const block of body.content) {
      if (block.type === 'text') {
        if (typeof block.text !== 'string') return bad('text blocks need text');
        if ([...block.text].length > 4096) return bad('text blocks hold at most 4096 characters');
      } else if (block.type === 'image') {
        images++;
        if (!Array.isArray(block.media) || block.media.length === 0) return bad("image blocks need a 'media' array");
        for (const m of block.media) {
          if (!m.identifier && !m.url) return bad('image media need an identifier or url');
          if (!Number.isInteger(m.width) || !Number.isInteger(m.height)) return bad('image media need width and height');
          if (m.identifier) referenced.push(m.identifier);
        }
      } else if (block.type === 'video') {
        if (!block.media || Array.isArray(block.media)) return bad("video blocks take one 'media' object");
        if (block.media.identifier) {
          nativeVideos++;
          referenced.push(block.media.identifier);
        }
      } else if (block.type === 'link') {
        if (typeof block.url !== 'string') return bad('link blocks need a url');
      } else return bad(`unknown block type ${block.type}`);
    }
    if (images > 30) return bad('a post holds at most 30 image blocks');
    if (nativeVideos > 1) return bad('a post holds at most 1 uploaded video');
    const names = files.map((f) => f.name);
    const missing = referenced.find((id) => !names.includes(id));
    if (missing) return bad(`no media part named ${missing}`);
    const stray = names.find((n) => !referenced.includes(n));
    if (stray) return bad(`the media part ${stray} is not referenced by any block`);
    if (body.tags !== undefined && typeof body.tags !== 'string') return bad("'tags' must be a comma-separated string");
    return undefined;
  };

  fake.route({
    'GET /oauth2/authorize': consentAllows('tumblr-code'),

    'POST /v2/oauth2/token': (request) => {
      const form = request.form ?? request.json ?? {};
      if (form.client_id !== TUMBLR_APP.clientId || form.client_secret !== TUMBLR_APP.clientSecret)
        return { status: 401, body: { error: 'invalid_client', error_description: 'Client authentication failed' } };
      if (form.grant_type === 'authorization_code') {
        if (form.code !== 'tumblr-code') return { status: 400, body: { error: 'invalid_grant', error_description: 'The authorization code is invalid' } };
        if (form.redirect_uri && form.redirect_uri !== fake.state.authorize?.redirect_uri)
          return { status: 400, body: { error: 'invalid_grant', error_description: 'redirect_uri does not match' } };
        const scope = (fake.grantedScopes ?? String(fake.state.authorize?.scope ?? '').split(' ')).filter((s) => s !== 'basic').join(' ');
        return { body: tokens(scope) };
      }
      if (form.grant_type === 'refresh_token') {
        if (!fake.refreshTokens.delete(form.refresh_token))
          return { status: 401, body: { error: 'invalid_grant', error_description: 'The refresh token is invalid or expired' } };
        return { body: tokens('write offline_access') };
      }
      return { status: 400, body: { error: 'unsupported_grant_type', error_description: 'unsupported grant type' } };
    },

    'GET /v2/user/info': (request) =>
      gate(request) ??
      ok(200, 'OK', {
        user: { name: 'heralduser', likes: 0, following: 1, default_post_format: 'html', blogs: fake.blogs.map((b) => ({ ...b })) },
      }),

    'POST /v2/blog/:blog/posts': (request) => {
      const no = gate(request);
      if (no) return no;
      const blog = blogOf(request.params.blog);
      if (!blog) return tumblrError(404, 'Not Found');
      let body: any;
      let files: { name: string; type: string; data: Buffer }[] = [];
      if (request.multipart) {
        // The `json` part is the post, whether or not the client gave it a file name.
        const part = request.multipart.files.find((f) => f.name === 'json');
        if (part && !part.type.startsWith('application/json')) return tumblrError(400, 'Bad Request', "the 'json' part must be application/json", 8001);
        try {
          body = JSON.parse(part ? part.data.toString('utf8') : (request.multipart.fields.json ?? ''));
        } catch {
          return tumblrError(400, 'Bad Request', "the 'json' part must hold the post as JSON", 8001);
        }
        files = request.multipart.files.filter((f) => f.name !== 'json').map((f) => ({ name: f.name, type: f.type, data: f.data }));
      } else body = request.json;
      const refused = checkPost(body, files);
      if (refused) return refused;
      postCount++;
      const id = String(7_600_000_000_000_000_000n + BigInt(postCount));
      fake.posts.push({
        id,
        blog: blog.name,
        body,
        files,
        timestamp: Math.floor(Date.now() / 1000),
        notes: { total_notes: 0, total_likes: 0, total_reblogs: 0 },
      });
      blog.posts++;
      return { status: 201, headers: { 'content-type': 'application/json' }, body: `{"meta":{"status":201,"msg":"Created"},"response":{"id":${id}}}` };
    },

    'GET /v2/blog/:blog/posts': (request) => {
      const no = gate(request);
      if (no) return no;
      const blog = blogOf(request.params.blog);
      if (!blog) return tumblrError(404, 'Not Found');
      const limit = Math.min(20, Number(request.query.limit ?? 20));
      const posts = fake.posts
        .filter((p) => p.blog === blog.name)
        .reverse()
        .slice(0, limit);
      const items = posts.map(
        (p) =>
          `{"id":${p.id},"id_string":"${p.id}","blog_name":"${blog.name}","post_url":"${blog.url}post/${p.id}","timestamp":${p.timestamp},` +
          `"content":${JSON.stringify(p.body.content)},"tags":[]}`,
      );
      return {
        headers: { 'content-type': 'application/json' },
        body: `{"meta":{"status":200,"msg":"OK"},"response":{"posts":[${items.join(',')}],"total_posts":${posts.length}}}`,
      };
    },

    'GET /v2/blog/:blog/notes': (request) => {
      const no = gate(request);
      if (no) return no;
      const post = fake.posts.find((p) => p.id === request.query.id);
      if (!post) return tumblrError(404, 'Not Found');
      return ok(200, 'OK', { notes: [], ...post.notes });
    },
  });
  // Store, then answer a 5xx (`storeThenFail`) on post creation, wrapped in {meta, response} as every answer is.
  fake.create = { route: 'POST /v2/blog/:blog/posts', serverError: (status) => tumblrError(status, STATUS_CODES[status] ?? 'Internal Server Error') };
  return fake;
}
