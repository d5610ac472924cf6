/**
 * A local X API: the OAuth 1.0a token endpoints and consent screen, users/me,
 * the v2 media upload (one-shot and chunked), POST /2/tweets, post lookup and
 * the user's posts timeline, as docs.x.com describes them. Every request must
 * carry a valid HMAC-SHA1 signature, which the fake recomputes from what it
 * received (RFC 5849); a bad one gets X's 401. Reads answer the default fields
 * (id, text, edit_history_tweet_ids; id, name, username) plus those asked for
 * in tweet.fields / user.fields; a post or user that does not exist is a 200
 * with `errors` and no `data` (X's partial errors). Its create endpoint is
 * POST /2/tweets (`storeThenFail`).
 */
import { STATUS_CODES } from 'node:http';
import crypto from 'node:crypto';
import { startNetworkFake, type FakeAnswer, type NetworkFake, type RecordedRequest } from './network-fake.ts';

export const X_CONSUMER = { key: 'x-consumer-key', secret: 'x-consumer-secret' };
export const X_USER = { id: '1460000000000000001', name: 'Herald Tester', username: 'heraldtester' };

const UNAUTHORIZED: FakeAnswer = { status: 401, body: { title: 'Unauthorized', type: 'about:blank', status: 401, detail: 'Unauthorized' } };

/** A post's public_metrics (tweet.fields=public_metrics). */
export interface XPostMetrics {
  retweet_count: number;
  reply_count: number;
  like_count: number;
  quote_count: number;
  bookmark_count: number;
  impression_count: number;
}

export interface XFake extends NetworkFake {
  /** Token secrets the fake issued, by token. */
  secrets: Map<string, string>;
  /** The user's public_metrics besides tweet_count, which counts the stored posts. */
  userMetrics: { followers_count: number; following_count: number; listed_count: number; like_count: number; media_count: number };
  /** What people did with a post (0 when not set). */
  postMetrics: Map<string, Partial<XPostMetrics>>;
  /** Why the last signature check failed, if it did. */
  lastSignatureProblem?: string;
}

/** Recomputes the signature of a received request; undefined when it is valid. */
// RFC 5849 written out here, independently of the adapter's signing code.

/** RFC 5849 3.6: every byte but the unreserved characters (RFC 3986) as %XX, uppercase. */
function rfc3986(value: string): string {
  return encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** RFC 5849 3.5.1: `OAuth name="value", ...`, values percent-encoded. */
function authorizationParams(header: string): Record<string, string> {
  const params: Record<string, string> = {};
  for (const match of header.replace(/^OAuth\s+/i, '').matchAll(/([\w.-]+)="([^"]*)"/g)) params[decodeURIComponent(match[1]!)] = decodeURIComponent(match[2]!);
  return params;
}

/** RFC 5849 3.4.1.2: scheme and host in lower case, the port unless it is the scheme's default, the path; no query. */
function baseStringUri(scheme: string, hostHeader: string, path: string): string {
  const [host, port] = hostHeader.toLowerCase().split(':');
  const defaultPort = scheme === 'https' ? '443' : '80';
  return `${scheme}://${host}${port && port !== defaultPort ? `:${port}` : ''}${path.split('?')[0]}`;
}

/** RFC 5849 3.4.1 and 3.4.2: the base string of what was received, signed with HMAC-SHA1. */
function expectedSignature(request: RecordedRequest, oauth: Record<string, string>, tokenSecret: string): string {
  const pairs: [string, string][] = [
    ...Object.entries(oauth),
    ...Object.entries(request.query as Record<string, string>),
    ...Object.entries((request.form ?? {}) as Record<string, string>),
  ];
  const normalized = pairs
    .map(([name, value]) => [rfc3986(name), rfc3986(value)])
    .sort(([an, av], [bn, bv]) => (an === bn ? (av! < bv! ? -1 : av! > bv! ? 1 : 0) : an! < bn! ? -1 : 1))
    .map(([name, value]) => `${name}=${value}`)
    .join('&');
  const base = [request.method.toUpperCase(), rfc3986(baseStringUri('http', String(request.headers.host), request.path)), rfc3986(normalized)].join('&');
  return crypto
    .createHmac('sha1', `${rfc3986(X_CONSUMER.secret)}&${rfc3986(tokenSecret)}`)
    .update(base)
    .digest('base64');
}

function signatureProblem(fake: XFake, request: RecordedRequest): string | undefined {
  const header = String(request.headers.authorization ?? '');
  if (!header.startsWith('OAuth ')) return 'no OAuth Authorization header';
  const params = authorizationParams(header);
  if (params.oauth_consumer_key !== X_CONSUMER.key) return 'unknown consumer key';
  if (params.oauth_signature_method !== 'HMAC-SHA1') return 'signature method is not HMAC-SHA1';
  if (Math.abs(Number(params.oauth_timestamp) * 1000 - Date.now()) > 300_000) return 'timestamp too far from now';
  const tokenSecret = params.oauth_token ? fake.secrets.get(params.oauth_token) : '';
  if (tokenSecret === undefined) return 'unknown token';
  const { oauth_signature: signature, realm: _realm, ...signed } = params;
  const expected = expectedSignature(request, signed, tokenSecret);
  return expected === signature ? undefined : `signature mismatch (expected ${expected}, got ${signature})`;
}

/** X's 400 for a malformed query parameter. */
function invalidParameter(name: string, value: string, message: string): FakeAnswer {
  return {
    status: 400,
    body: {
      errors: [{ parameters: { [name]: [value] }, message }],
      title: 'Invalid Request',
      detail: 'One or more parameters to your request was invalid.',
      type: 'https://api.twitter.com/2/problems/invalid-request',
    },
  };
}

/** The fields asked for in `name` (tweet.fields, user.fields), or the 400 for one X does not know. */
function requestedFields(request: RecordedRequest, name: string, known: string[]): string[] | FakeAnswer {
  const asked = (request.query[name] ?? '').split(',').filter(Boolean);
  const unknown = asked.find((f) => !known.includes(f));
  return unknown ? invalidParameter(name, unknown, `The \`${name}\` query parameter value [${unknown}] is not one of [${known.join(',')}]`) : asked;
}

/** X's partial error for a resource that is not there (answered with 200). */
function notFound(type: 'tweet' | 'user', parameter: string, id: string): FakeAnswer {
  return {
    status: 200,
    body: {
      errors: [
        {
          value: id,
          detail: `Could not find ${type} with ${parameter}: [${id}].`,
          title: 'Not Found Error',
          resource_type: type,
          parameter,
          resource_id: id,
          type: 'https://api.twitter.com/2/problems/resource-not-found',
        },
      ],
    },
  };
}

const TWEET_FIELDS = [
  'attachments',
  'author_id',
  'conversation_id',
  'created_at',
  'edit_history_tweet_ids',
  'entities',
  'id',
  'in_reply_to_user_id',
  'lang',
  'public_metrics',
  'non_public_metrics',
  'referenced_tweets',
  'reply_settings',
  'text',
];
const USER_FIELDS = ['created_at', 'description', 'id', 'name', 'profile_image_url', 'protected', 'public_metrics', 'username', 'verified', 'verified_type'];

export async function startXFake(): Promise<XFake> {
  let next = 1_000;
  const fake = (await startNetworkFake()) as XFake;
  fake.secrets = new Map();
  fake.userMetrics = { followers_count: 0, following_count: 0, listed_count: 0, like_count: 0, media_count: 0 };
  fake.postMetrics = new Map();
  fake.state.tweets = [] as { id: string; text: string; body: any; created_at: string }[];
  fake.state.media = new Map<string, { type: string; bytes: number; segments: number; state: string }>();
  fake.state.revoked = new Set<string>();

  /** A stored post as lookups answer it: the default fields and those asked for. */
  const view = (tweet: { id: string; text: string; created_at: string; body: any }, fields: string[]): Record<string, unknown> => {
    const out: Record<string, unknown> = { id: tweet.id, text: tweet.text, edit_history_tweet_ids: [tweet.id] };
    if (fields.includes('created_at')) out.created_at = tweet.created_at;
    if (fields.includes('author_id')) out.author_id = X_USER.id;
    if (fields.includes('public_metrics')) {
      out.public_metrics = {
        retweet_count: 0,
        reply_count: 0,
        like_count: 0,
        quote_count: 0,
        bookmark_count: 0,
        impression_count: 0,
        ...fake.postMetrics.get(tweet.id),
      };
    }
    return out;
  };

  /** Wraps a handler: the request must be signed, and with a user token unless `consumerOnly`. */
  const signed =
    (handler: (request: RecordedRequest, token: string) => FakeAnswer | Promise<FakeAnswer>, consumerOnly = false) =>
    async (request: RecordedRequest): Promise<FakeAnswer> => {
      const problem = signatureProblem(fake, request);
      fake.lastSignatureProblem = problem;
      if (problem) return { status: 401, body: { errors: [{ code: 32, message: 'Could not authenticate you.' }] } };
      const token = authorizationParams(String(request.headers.authorization)).oauth_token ?? '';
      if (!consumerOnly && (!token || fake.state.revoked.has(token))) return UNAUTHORIZED;
      return handler(request, token);
    };

  fake.route({
    'POST /oauth/request_token': signed((request) => {
      const params = authorizationParams(String(request.headers.authorization));
      if (!params.oauth_callback) return { status: 400, body: 'oauth_callback required' };
      const token = `req-${next++}`;
      fake.secrets.set(token, `req-secret-${next}`);
      fake.state.requestTokens = { ...fake.state.requestTokens, [token]: params.oauth_callback };
      return {
        status: 200,
        headers: { 'content-type': 'text/html' },
        body: `oauth_token=${token}&oauth_token_secret=${fake.secrets.get(token)}&oauth_callback_confirmed=true`,
      };
    }, true),
    // The consent screen: the user clicks "Authorize app".
    'GET /oauth/authorize': (request) => {
      const callback = fake.state.requestTokens?.[request.query.oauth_token];
      if (!callback) return { status: 400, body: 'unknown request token' };
      const target = new URL(callback);
      target.searchParams.set('oauth_token', request.query.oauth_token);
      target.searchParams.set('oauth_verifier', `verifier-for-${request.query.oauth_token}`);
      return { status: 302, headers: { location: target.toString() } };
    },
    'POST /oauth/access_token': signed((request, token) => {
      const params = authorizationParams(String(request.headers.authorization));
      if (!token.startsWith('req-') || params.oauth_verifier !== `verifier-for-${token}`) return { status: 401, body: 'Invalid request token.' };
      fake.secrets.delete(token);
      const access = `${X_USER.id}-access${next++}`;
      fake.secrets.set(access, `access-secret-${next}`);
      return {
        status: 200,
        headers: { 'content-type': 'text/html' },
        body: `oauth_token=${access}&oauth_token_secret=${fake.secrets.get(access)}&user_id=${X_USER.id}&screen_name=${X_USER.username}`,
      };
    }),
    'GET /2/users/me': signed((request) => {
      const fields = requestedFields(request, 'user.fields', USER_FIELDS);
      if (!Array.isArray(fields)) return fields;
      const user: Record<string, unknown> = { id: X_USER.id, name: X_USER.name, username: X_USER.username };
      if (fields.includes('profile_image_url')) user.profile_image_url = 'https://pbs.twimg.com/profile_images/1/normal.jpg';
      if (fields.includes('verified')) user.verified = false;
      if (fields.includes('public_metrics')) user.public_metrics = { ...fake.userMetrics, tweet_count: fake.state.tweets.length };
      return { status: 200, body: { data: user } };
    }),
    'GET /2/tweets/:id': signed((request) => {
      const id = request.params.id;
      if (!/^[0-9]{1,19}$/.test(id)) return invalidParameter('id', id, `The \`id\` query parameter value [${id}] is not valid`);
      const fields = requestedFields(request, 'tweet.fields', TWEET_FIELDS);
      if (!Array.isArray(fields)) return fields;
      const tweet = fake.state.tweets.find((t: { id: string }) => t.id === id);
      if (!tweet) return notFound('tweet', 'id', id);
      return { status: 200, body: { data: view(tweet, fields) } };
    }),
    // The user's posts, newest first: max_results 5-100 (10 by default), exclude=retweets,replies, pagination_token.
    'GET /2/users/:id/tweets': signed((request) => {
      const fields = requestedFields(request, 'tweet.fields', TWEET_FIELDS);
      if (!Array.isArray(fields)) return fields;
      const max = request.query.max_results === undefined ? 10 : Number(request.query.max_results);
      if (!Number.isInteger(max) || max < 5 || max > 100) {
        return invalidParameter(
          'max_results',
          String(request.query.max_results),
          `The \`max_results\` query parameter value [${request.query.max_results}] is not between 5 and 100`,
        );
      }
      const exclude = (request.query.exclude ?? '').split(',').filter(Boolean);
      const odd = exclude.find((e) => e !== 'retweets' && e !== 'replies');
      if (odd) return invalidParameter('exclude', odd, `The \`exclude\` query parameter value [${odd}] is not one of [replies,retweets]`);
      if (request.params.id !== X_USER.id) return notFound('user', 'id', request.params.id);
      const all = [...fake.state.tweets]
        .filter((t: { body: any }) => !(exclude.includes('replies') && t.body.reply))
        .sort((a: { id: string }, b: { id: string }) => (BigInt(b.id) > BigInt(a.id) ? 1 : -1));
      const from = request.query.pagination_token ? Number(Buffer.from(request.query.pagination_token, 'base64url').toString()) : 0;
      const page = all.slice(from, from + max);
      const meta: Record<string, unknown> = { result_count: page.length };
      if (page.length === 0) return { status: 200, body: { meta } };
      meta.newest_id = page[0].id;
      meta.oldest_id = page.at(-1).id;
      if (from + max < all.length) meta.next_token = Buffer.from(String(from + max)).toString('base64url');
      return { status: 200, body: { data: page.map((t) => view(t, fields)), meta } };
    }),
    'POST /2/media/upload': signed((request) => {
      const file = request.multipart?.files.find((f) => f.name === 'media');
      if (!file || !request.multipart?.fields.media_category)
        return { status: 400, body: { title: 'Invalid Request', detail: 'media and media_category are required', status: 400 } };
      const id = String(next++);
      fake.state.media.set(id, { type: request.multipart.fields.media_type, bytes: file.data.length, segments: 1, state: 'succeeded' });
      return { status: 200, body: { data: { id, media_key: `3_${id}`, size: file.data.length, expires_after_secs: 86400 } } };
    }),
    'POST /2/media/upload/initialize': signed((request) => {
      const { media_type, total_bytes, media_category } = request.json ?? {};
      if (!media_type || !total_bytes || !media_category)
        return { status: 400, body: { title: 'Invalid Request', detail: 'media_type, total_bytes and media_category are required', status: 400 } };
      const id = String(next++);
      fake.state.media.set(id, { type: media_type, bytes: 0, total: total_bytes, segments: 0, state: 'uploading' });
      return { status: 200, body: { data: { id, media_key: `7_${id}`, expires_after_secs: 86400 } } };
    }),
    'POST /2/media/upload/:id/append': signed((request) => {
      const media = fake.state.media.get(request.params.id);
      const file = request.multipart?.files.find((f) => f.name === 'media');
      if (!media || !file || Number(request.multipart?.fields.segment_index) !== media.segments)
        return { status: 400, body: { title: 'Invalid Request', detail: 'bad segment', status: 400 } };
      media.segments++;
      media.bytes += file.data.length;
      return { status: 200, body: { data: { expires_at: 1_900_000_000 } } };
    }),
    'POST /2/media/upload/:id/finalize': signed((request) => {
      const media = fake.state.media.get(request.params.id);
      if (!media || media.bytes !== media.total) return { status: 400, body: { title: 'Invalid Request', detail: 'size mismatch', status: 400 } };
      media.state = 'pending';
      return { status: 200, body: { data: { id: request.params.id, processing_info: { state: 'pending', check_after_secs: 0 } } } };
    }),
    'GET /2/media/upload': signed((request) => {
      const media = fake.state.media.get(request.query.media_id);
      if (request.query.command !== 'STATUS' || !media) return { status: 400, body: { title: 'Invalid Request', detail: 'unknown media', status: 400 } };
      // Processing takes one more look: pending, then succeeded.
      media.state = media.state === 'pending' ? 'in_progress' : 'succeeded';
      return { status: 200, body: { data: { id: request.query.media_id, processing_info: { state: media.state, check_after_secs: 0 } } } };
    }),
    // Alt text on an uploaded image or GIF: at most 1,000 characters.
    'POST /2/media/metadata': signed((request) => {
      const { id, metadata } = request.json ?? {};
      const media = fake.state.media.get(String(id));
      const text = metadata?.alt_text?.text;
      if (!media) return { status: 400, body: { title: 'Invalid Request', detail: `media ${id} not found`, status: 400 } };
      if (typeof text !== 'string' || [...text].length > 1000)
        return { status: 400, body: { title: 'Invalid Request', detail: 'alt_text.text must be a string of at most 1000 characters', status: 400 } };
      if (media.type?.startsWith('video/'))
        return { status: 400, body: { title: 'Invalid Request', detail: 'alt text is supported on images and GIFs', status: 400 } };
      media.alt = text;
      return { status: 200, body: { data: { id: String(id), associated_metadata: { alt_text: { text } } } } };
    }),
    'POST /2/tweets': signed((request) => {
      const body = request.json ?? {};
      if (typeof body.text !== 'string' && !body.media)
        return { status: 400, body: { title: 'Invalid Request', detail: 'text or media required', status: 400 } };
      if (fake.state.tweets.some((t: { text: string }) => t.text === body.text)) {
        return {
          status: 403,
          body: { detail: 'You are not allowed to create a Tweet with duplicate content.', type: 'about:blank', title: 'Forbidden', status: 403 },
        };
      }
      for (const id of body.media?.media_ids ?? []) {
        if (fake.state.media.get(id)?.state !== 'succeeded')
          return { status: 400, body: { title: 'Invalid Request', detail: `media ${id} is not ready`, status: 400 } };
      }
      const reply = body.reply?.in_reply_to_tweet_id;
      if (reply && !fake.state.tweets.some((t: { id: string }) => t.id === reply))
        return { status: 400, body: { title: 'Invalid Request', detail: 'reply target not found', status: 400 } };
      const id = String(1_800_000_000_000_000_000n + BigInt(next++));
      fake.state.tweets.push({ id, text: body.text, body, created_at: new Date().toISOString() });
      return { status: 201, body: { data: { id, text: body.text, edit_history_tweet_ids: [id] } } };
    }),
  });
  // Store, then answer a 5xx (`storeThenFail`) on POST /2/tweets, as an X problem (title, detail, type, status).
  fake.create = {
    route: 'POST /2/tweets',
    serverError: (status) => ({
      status,
      body: { title: STATUS_CODES[status] ?? 'Internal Server Error', detail: 'Something went wrong', type: 'about:blank', status },
    }),
  };
  return fake;
}
