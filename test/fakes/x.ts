/**
 * A local X API: the OAuth 1.0a token endpoints and consent screen, users/me,
 * the v2 media upload (one-shot and chunked) and POST /2/tweets, as docs.x.com
 * describes them. Every request must carry a valid HMAC-SHA1 signature, which
 * the fake recomputes from what it received (RFC 5849); a bad one gets X's 401.
 */
import crypto from 'node:crypto';
import { startNetworkFake, type FakeAnswer, type NetworkFake, type RecordedRequest } from './network-fake.ts';

export const X_CONSUMER = { key: 'x-consumer-key', secret: 'x-consumer-secret' };
export const X_USER = { id: '1460000000000000001', name: 'Herald Tester', username: 'heraldtester' };

const UNAUTHORIZED: FakeAnswer = { status: 401, body: { title: 'Unauthorized', type: 'about:blank', status: 401, detail: 'Unauthorized' } };

export interface XFake extends NetworkFake {
  /** Token secrets the fake issued, by token. */
  secrets: Map<string, string>;
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
  const pairs: [string, string][] = [...Object.entries(oauth), ...Object.entries(request.query as Record<string, string>), ...Object.entries((request.form ?? {}) as Record<string, string>)];
  const normalized = pairs
    .map(([name, value]) => [rfc3986(name), rfc3986(value)])
    .sort(([an, av], [bn, bv]) => (an === bn ? (av! < bv! ? -1 : av! > bv! ? 1 : 0) : an! < bn! ? -1 : 1))
    .map(([name, value]) => `${name}=${value}`)
    .join('&');
  const base = [request.method.toUpperCase(), rfc3986(baseStringUri('http', String(request.headers.host), request.path)), rfc3986(normalized)].join('&');
  return crypto.createHmac('sha1', `${rfc3986(X_CONSUMER.secret)}&${rfc3986(tokenSecret)}`).update(base).digest('base64');
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

export async function startXFake(): Promise<XFake> {
  let next = 1_000;
  const fake = (await startNetworkFake()) as XFake;
  fake.secrets = new Map();
  fake.state.tweets = [] as { id: string; text: string; body: any }[];
  fake.state.media = new Map<string, { type: string; bytes: number; segments: number; state: string }>();
  fake.state.revoked = new Set<string>();

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
      return { status: 200, headers: { 'content-type': 'text/html' }, body: `oauth_token=${token}&oauth_token_secret=${fake.secrets.get(token)}&oauth_callback_confirmed=true` };
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
      return { status: 200, headers: { 'content-type': 'text/html' }, body: `oauth_token=${access}&oauth_token_secret=${fake.secrets.get(access)}&user_id=${X_USER.id}&screen_name=${X_USER.username}` };
    }),
    'GET /2/users/me': signed(() => ({
      status: 200,
      body: { data: { id: X_USER.id, name: X_USER.name, username: X_USER.username, profile_image_url: 'https://pbs.twimg.com/profile_images/1/normal.jpg' } },
    })),
    'POST /2/media/upload': signed((request) => {
      const file = request.multipart?.files.find((f) => f.name === 'media');
      if (!file || !request.multipart?.fields.media_category) return { status: 400, body: { title: 'Invalid Request', detail: 'media and media_category are required', status: 400 } };
      const id = String(next++);
      fake.state.media.set(id, { type: request.multipart.fields.media_type, bytes: file.data.length, segments: 1, state: 'succeeded' });
      return { status: 200, body: { data: { id, media_key: `3_${id}`, size: file.data.length, expires_after_secs: 86400 } } };
    }),
    'POST /2/media/upload/initialize': signed((request) => {
      const { media_type, total_bytes, media_category } = request.json ?? {};
      if (!media_type || !total_bytes || !media_category) return { status: 400, body: { title: 'Invalid Request', detail: 'media_type, total_bytes and media_category are required', status: 400 } };
      const id = String(next++);
      fake.state.media.set(id, { type: media_type, bytes: 0, total: total_bytes, segments: 0, state: 'uploading' });
      return { status: 200, body: { data: { id, media_key: `7_${id}`, expires_after_secs: 86400 } } };
    }),
    'POST /2/media/upload/:id/append': signed((request) => {
      const media = fake.state.media.get(request.params.id);
      const file = request.multipart?.files.find((f) => f.name === 'media');
      if (!media || !file || Number(request.multipart?.fields.segment_index) !== media.segments) return { status: 400, body: { title: 'Invalid Request', detail: 'bad segment', status: 400 } };
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
      if (typeof text !== 'string' || [...text].length > 1000) return { status: 400, body: { title: 'Invalid Request', detail: 'alt_text.text must be a string of at most 1000 characters', status: 400 } };
      if (media.type?.startsWith('video/')) return { status: 400, body: { title: 'Invalid Request', detail: 'alt text is supported on images and GIFs', status: 400 } };
      media.alt = text;
      return { status: 200, body: { data: { id: String(id), associated_metadata: { alt_text: { text } } } } };
    }),
    'POST /2/tweets': signed((request) => {
      const body = request.json ?? {};
      if (typeof body.text !== 'string' && !body.media) return { status: 400, body: { title: 'Invalid Request', detail: 'text or media required', status: 400 } };
      if (fake.state.tweets.some((t: { text: string }) => t.text === body.text)) {
        return { status: 403, body: { detail: 'You are not allowed to create a Tweet with duplicate content.', type: 'about:blank', title: 'Forbidden', status: 403 } };
      }
      for (const id of body.media?.media_ids ?? []) {
        if (fake.state.media.get(id)?.state !== 'succeeded') return { status: 400, body: { title: 'Invalid Request', detail: `media ${id} is not ready`, status: 400 } };
      }
      const reply = body.reply?.in_reply_to_tweet_id;
      if (reply && !fake.state.tweets.some((t: { id: string }) => t.id === reply)) return { status: 400, body: { title: 'Invalid Request', detail: 'reply target not found', status: 400 } };
      const id = String(1_800_000_000_000_000_000n + BigInt(next++));
      fake.state.tweets.push({ id, text: body.text, body });
      return { status: 201, body: { data: { id, text: body.text, edit_history_tweet_ids: [id] } } };
    }),
  });
  return fake;
}
