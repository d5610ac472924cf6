/**
 * A local Reddit: the consent screen, /api/v1/access_token (HTTP Basic, form),
 * /api/v1/me, /api/submit and /api/comment answering 200 with json.errors when
 * they refuse, the media asset lease with a storage upload answering XML, the
 * user's submitted listing (newest first, `limit`, the history scope; media posts
 * appear in it asynchronously), subreddit search, about, post requirements and
 * flairs, as reddit.com/dev/api describes. Its create endpoint is /api/submit
 * (`storeThenFail`).
 */
import { STATUS_CODES } from 'node:http';
import { consentAllows, startNetworkFake, type FakeAnswer, type NetworkFake, type RecordedRequest } from './network-fake.ts';

export const REDDIT_APP = { id: 'rd-client', secret: 'rd-secret' };
export const REDDIT_USER = { id: 'abc12', name: 'herald_bot' };

export interface RedditFake extends NetworkFake {
  tokens: Set<string>;
  refreshTokens: Set<string>;
  /** The scopes granted to each access and refresh token (those of the consent). */
  scopes: Map<string, string[]>;
  submissions: { id: string; sr: string; title: string; form: Record<string, string>; created: number }[];
  comments: { id: string; parent: string; text: string }[];
  /** How long a media post takes to appear in the user's submitted listing (Reddit creates it asynchronously). */
  listingDelayMs: number;
}

const KNOWN = ['herald', 'test', 'pics'];

/** The User-Agent form Reddit's API rules ask for, e.g. "android:com.example.myredditapp:v1.2.3 (by /u/kemitche)". */
export const REDDIT_USER_AGENT = /^[a-z0-9]+:[A-Za-z0-9._-]+:v?[0-9][A-Za-z0-9._-]* \(by \/u\/[A-Za-z0-9_-]{3,20}\)$/;

export async function startRedditFake(): Promise<RedditFake> {
  let next = 1000;
  const fake = (await startNetworkFake()) as RedditFake;
  Object.assign(fake, { tokens: new Set(), refreshTokens: new Set(), scopes: new Map(), submissions: [], comments: [], listingDelayMs: 0 });
  const uploaded = new Map<string, string>();
  const base36 = () => (next++).toString(36);

  const issue = (withRefresh: boolean, scopes: string[]): FakeAnswer => {
    const access = `rd-access-${next++}`;
    const refresh = `rd-refresh-${next++}`;
    fake.tokens.add(access);
    fake.refreshTokens.add(refresh);
    fake.scopes.set(access, scopes);
    fake.scopes.set(refresh, scopes);
    return {
      status: 200,
      body: { access_token: access, token_type: 'bearer', expires_in: 3600, scope: scopes.join(' '), ...(withRefresh ? { refresh_token: refresh } : {}) },
    };
  };
  /** Reddit's answer to a token without the scope an endpoint needs. */
  const scoped =
    (scope: string, handler: (request: RecordedRequest) => FakeAnswer) =>
    (request: RecordedRequest): FakeAnswer => {
      const token = String(request.headers.authorization ?? '').replace(/^bearer /, '');
      if (fake.tokens.has(token) && !fake.scopes.get(token)?.includes(scope)) {
        return {
          status: 403,
          headers: { 'www-authenticate': 'Bearer realm="reddit", error="insufficient_scope"' },
          body: { message: 'Forbidden', error: 403 },
        };
      }
      return handler(request);
    };
  const authed =
    (handler: (request: RecordedRequest) => FakeAnswer) =>
    (request: RecordedRequest): FakeAnswer => {
      // Reddit's rule: "<platform>:<app ID>:<version string> (by /u/<reddit username>)"; generic agents are throttled.
      if (!REDDIT_USER_AGENT.test(String(request.headers['user-agent']))) return { status: 429, body: { message: 'Too Many Requests', error: 429 } };
      return fake.tokens.has(String(request.headers.authorization ?? '').replace(/^bearer /, ''))
        ? handler(request)
        : { status: 401, body: { message: 'Unauthorized', error: 401 } };
    };
  const errors = (...list: [string, string, string][]): FakeAnswer => ({ status: 200, body: { json: { errors: list } } });

  fake.route({
    'GET /api/v1/authorize': consentAllows('rd-code-1'),
    'POST /api/v1/access_token': (request) => {
      if (request.headers.authorization !== `Basic ${Buffer.from(`${REDDIT_APP.id}:${REDDIT_APP.secret}`).toString('base64')}`)
        return { status: 401, body: { message: 'Unauthorized', error: 401 } };
      const f = request.form ?? {};
      if (f.grant_type === 'authorization_code') {
        // Reddit says 200 with an error field for a bad code.
        if (f.code !== 'rd-code-1' || f.redirect_uri !== fake.state.authorize?.redirect_uri) return { status: 200, body: { error: 'invalid_grant' } };
        return issue(
          fake.state.authorize?.duration === 'permanent',
          String(fake.state.authorize?.scope ?? '')
            .split(' ')
            .filter(Boolean),
        );
      }
      if (f.grant_type === 'refresh_token' && fake.refreshTokens.has(f.refresh_token)) return issue(true, fake.scopes.get(f.refresh_token) ?? []);
      return { status: 400, body: { error: 'invalid_grant' } };
    },
    'GET /api/v1/me': authed(() => ({
      status: 200,
      body: { id: REDDIT_USER.id, name: REDDIT_USER.name, icon_img: 'https://styles.redditmedia.com/a.png?width=256&amp;s=abc' },
    })),
    'POST /api/submit': authed((request) => {
      const f = request.form ?? {};
      if (f.api_type !== 'json') return { status: 400, body: { message: 'api_type=json expected' } };
      if (!KNOWN.includes(f.sr)) return errors(['SUBREDDIT_NOEXIST', "that subreddit doesn't exist", 'sr']);
      if ((f.title ?? '').length > 300) return errors(['TOO_LONG', 'this is too long (max: 300)', 'title']);
      if (fake.submissions.some((s) => s.sr === f.sr && s.title === f.title && s.form.text === f.text))
        return errors(['ALREADY_SUB', 'that link has already been submitted', 'url']);
      const id = base36();
      fake.submissions.push({ id, sr: f.sr, title: f.title, form: f, created: Math.floor(Date.now() / 1000) });
      if (f.kind === 'image' || f.kind === 'video') {
        if (!uploaded.has(f.url)) return errors(['BAD_URL', 'media was not uploaded', 'url']);
        return {
          status: 200,
          body: {
            json: {
              errors: [],
              data: { user_submitted_page: `https://www.reddit.com/user/${REDDIT_USER.name}/submitted/`, websocket_url: 'wss://ws.example/rte' },
            },
          },
        };
      }
      return {
        status: 200,
        body: { json: { errors: [], data: { url: `https://www.reddit.com/r/${f.sr}/comments/${id}/slug/`, drafts_count: 0, id, name: `t3_${id}` } } },
      };
    }),
    'GET /user/:name/submitted': authed(
      scoped('history', (request) => {
        const limit = Math.min(Math.max(Number(request.query.limit ?? 25) || 25, 1), 100);
        const listed = fake.submissions
          .filter(
            (s) =>
              request.params.name === REDDIT_USER.name &&
              (s.form.kind !== 'image' && s.form.kind !== 'video' ? true : Date.now() >= s.created * 1000 + fake.listingDelayMs),
          )
          .slice()
          .reverse();
        const children = listed.slice(0, limit).map((s) => ({
          kind: 't3',
          data: {
            id: s.id,
            name: `t3_${s.id}`,
            author: REDDIT_USER.name,
            subreddit: s.sr,
            title: s.title,
            selftext: s.form.kind === 'self' ? (s.form.text ?? '') : '',
            is_self: s.form.kind === 'self',
            url: s.form.kind === 'link' ? s.form.url : `https://www.reddit.com/r/${s.sr}/comments/${s.id}/slug/`,
            created_utc: s.created,
            permalink: `/r/${s.sr}/comments/${s.id}/slug/`,
          },
        }));
        return {
          status: 200,
          body: { kind: 'Listing', data: { after: listed.length > limit ? children.at(-1)!.data.name : null, before: null, dist: children.length, children } },
        };
      }),
    ),
    'POST /api/comment': authed((request) => {
      const f = request.form ?? {};
      const parent = f.thing_id ?? '';
      const exists = parent.startsWith('t3_') ? fake.submissions.some((s) => `t3_${s.id}` === parent) : fake.comments.some((c) => `t1_${c.id}` === parent);
      if (!exists) return errors(['NO_THING_ID', 'id not specified', 'parent']);
      const id = base36();
      fake.comments.push({ id, parent, text: f.text });
      return {
        status: 200,
        body: {
          json: {
            errors: [],
            data: { things: [{ kind: 't1', data: { id, name: `t1_${id}`, parent_id: parent, permalink: `/r/herald/comments/x/slug/${id}/` } }] },
          },
        },
      };
    }),
    'POST /api/media/asset.json': authed((request) => {
      const f = request.form ?? {};
      if (!f.filepath || !f.mimetype) return { status: 400, body: { message: 'filepath and mimetype are required' } };
      const key = `rte_images/${base36()}`;
      return {
        status: 200,
        body: {
          args: {
            action: `//${new URL(fake.url).host}/media-bucket`,
            fields: [
              { name: 'acl', value: 'public-read' },
              { name: 'key', value: key },
              { name: 'Content-Type', value: f.mimetype },
            ],
          },
          asset: { asset_id: key.split('/')[1], websocket_url: 'wss://ws.example/asset' },
        },
      };
    }),
    'POST /media-bucket': (request) => {
      const key = request.multipart?.fields.key;
      const file = request.multipart?.files.find((f) => f.name === 'file');
      if (!key || !file) return { status: 400, body: '<Error><Code>InvalidArgument</Code></Error>' };
      const location = `${fake.url}/media-bucket/${key}`;
      uploaded.set(location, key);
      return {
        status: 201,
        headers: { 'content-type': 'application/xml' },
        body:
          '<?xml version="1.0" encoding="UTF-8"?><PostResponse>' +
          `<Location>${encodeURIComponent(location).replace(/%2F/g, '/').replace(/%3A/g, ':')}</Location><Key>${key}</Key></PostResponse>`,
      };
    },
    'GET /subreddits/search': authed((request) => ({
      status: 200,
      body: {
        kind: 'Listing',
        data: {
          children: KNOWN.filter((n) => n.includes(request.query.q ?? '')).map((n) => ({
            kind: 't5',
            data: { display_name: n, title: `About ${n}`, subscribers: 10, submission_type: 'any' },
          })),
        },
      },
    })),
    'GET /r/:sr/about': authed((request) => ({
      status: 200,
      body: { kind: 't5', data: { display_name: request.params.sr, submission_type: 'any', allow_images: true, allow_videos: false } },
    })),
    'GET /api/v1/:sr/post_requirements': authed(() => ({ status: 200, body: { is_flair_required: true, title_text_max_length: 300 } })),
    'GET /r/:sr/api/link_flair_v2': authed(() => ({ status: 200, body: [{ id: 'f1a2', text: 'News', text_editable: false }] })),
  });
  // Store, then answer a 5xx (`storeThenFail`) on submit, as Reddit words one: {"message": "Internal Server Error", "error": 500}.
  fake.create = {
    route: 'POST /api/submit',
    serverError: (status) => ({ status, body: { message: STATUS_CODES[status] ?? 'Internal Server Error', error: status } }),
  };
  return fake;
}
