/**
 * A local Pinterest API v5: the consent screen, /v5/oauth/token (client in HTTP
 * Basic, rotating refresh tokens), user_account, boards with bookmark paging,
 * media registration with an upload URL taking a multipart form (as S3 does),
 * media status, and pins, with Pinterest's {code, message} errors.
 */
import { consentAllows, startNetworkFake, type FakeAnswer, type NetworkFake, type RecordedRequest } from './network-fake.ts';

export const PINTEREST_APP = { id: 'pin-client', secret: 'pin-secret' };
export const PINTEREST_USER = { id: '549755885175', username: 'heraldpins' };
/** 3 boards, served 2 per page so the bookmark is followed. */
export const PINTEREST_BOARDS = [
  { id: '1111', name: 'Recipes', privacy: 'PUBLIC' },
  { id: '2222', name: 'Travel', privacy: 'PUBLIC' },
  { id: '3333', name: 'Drafts', privacy: 'SECRET' },
];

export interface PinterestFake extends NetworkFake {
  tokens: Set<string>;
  /** Refresh tokens the fake accepts, with when each was issued (by `clock`). */
  refreshTokens: Map<string, number>;
  /** The fake's time: a refresh token unused for 60 days lapses, as Pinterest's continuous refresh documents. */
  clock: () => number;
  pins: { id: string; body: any }[];
}

/** A continuous-refresh token lives 60 days (refresh_token_expires_in). */
const REFRESH_TOKEN_LIFE_MS = 5_184_000 * 1000;

export async function startPinterestFake(): Promise<PinterestFake> {
  let next = 10;
  const fake = (await startNetworkFake()) as PinterestFake;
  Object.assign(fake, { tokens: new Set(), refreshTokens: new Map(), clock: Date.now, pins: [] });
  const media = new Map<string, { uploaded: boolean; looks: number }>();

  const issue = (): FakeAnswer => {
    const access = `pina_${next++}`;
    const refresh = `pinr_${next++}`;
    fake.tokens.add(access);
    fake.refreshTokens.set(refresh, fake.clock());
    return {
      status: 200,
      body: { access_token: access, refresh_token: refresh, response_type: 'authorization_code', token_type: 'bearer', expires_in: 2_592_000, refresh_token_expires_in: 5_184_000, scope: 'boards:read,pins:write' },
    };
  };
  const authed =
    (handler: (request: RecordedRequest) => FakeAnswer) =>
    (request: RecordedRequest): FakeAnswer =>
      fake.tokens.has(String(request.headers.authorization ?? '').replace(/^Bearer /, '')) ? handler(request) : { status: 401, body: { code: 2, message: 'Authentication failed.' } };

  fake.route({
    'GET /oauth/': consentAllows('pin-code-1'),
    'POST /v5/oauth/token': (request) => {
      const expected = `Basic ${Buffer.from(`${PINTEREST_APP.id}:${PINTEREST_APP.secret}`).toString('base64')}`;
      if (request.headers.authorization !== expected) return { status: 401, body: { code: 1, message: 'Invalid client credentials' } };
      const f = request.form ?? {};
      if (f.grant_type === 'authorization_code' && f.code === 'pin-code-1' && f.redirect_uri === fake.state.authorize?.redirect_uri) return issue();
      const issued = fake.refreshTokens.get(f.refresh_token);
      if (f.grant_type === 'refresh_token' && issued !== undefined && fake.clock() - issued <= REFRESH_TOKEN_LIFE_MS) {
        fake.refreshTokens.delete(f.refresh_token); // continuous refresh: the used token is spent
        return issue();
      }
      return { status: 400, body: { code: 1, message: 'Invalid grant' } };
    },
    'GET /v5/user_account': authed(() => ({ status: 200, body: { id: PINTEREST_USER.id, username: PINTEREST_USER.username, account_type: 'BUSINESS', business_name: 'Herald Pins', profile_image: 'https://i.pinimg.com/p.jpg' } })),
    'GET /v5/boards': authed((request) => {
      const start = request.query.bookmark ? Number(request.query.bookmark) : 0;
      const items = PINTEREST_BOARDS.slice(start, start + 2).map((b) => ({ ...b, owner: { username: PINTEREST_USER.username } }));
      return { status: 200, body: { items, bookmark: start + 2 < PINTEREST_BOARDS.length ? String(start + 2) : null } };
    }),
    'POST /v5/media': authed((request) => {
      if (request.json?.media_type !== 'video') return { status: 400, body: { code: 1, message: 'media_type must be video' } };
      const id = String(next++);
      media.set(id, { uploaded: false, looks: 0 });
      return {
        status: 201,
        body: { media_id: id, media_type: 'video', upload_url: `${fake.url}/s3-upload/`, upload_parameters: { key: `uploads/${id}.mp4`, 'x-amz-signature': `sig-${id}`, policy: 'cG9saWN5' } },
      };
    }),
    'POST /s3-upload/': (request) => {
      const id = /uploads\/(\d+)\.mp4/.exec(request.multipart?.fields.key ?? '')?.[1];
      const file = request.multipart?.files.find((f) => f.name === 'file');
      if (!id || !media.has(id) || !file || request.multipart?.fields['x-amz-signature'] !== `sig-${id}`) return { status: 403, body: '<Error><Code>AccessDenied</Code></Error>' };
      media.get(id)!.uploaded = true;
      return { status: 204 };
    },
    'GET /v5/media/:id': authed((request) => {
      const m = media.get(request.params.id);
      if (!m) return { status: 404, body: { code: 404, message: 'Media not found.' } };
      const status = !m.uploaded ? 'registered' : m.looks++ === 0 ? 'processing' : 'succeeded';
      return { status: 200, body: { media_id: request.params.id, media_type: 'video', status } };
    }),
    'POST /v5/pins': authed((request) => {
      const body = request.json ?? {};
      if (!/^\d+$/.test(String(body.board_id))) return { status: 400, body: { code: 1, message: 'board_id: does not match pattern ^\\d+$' } };
      if (!PINTEREST_BOARDS.some((b) => b.id === body.board_id)) return { status: 404, body: { code: 40, message: 'Board not found.' } };
      const source = body.media_source ?? {};
      if (source.source_type === 'video_id' && media.get(source.media_id)?.looks === 0) return { status: 400, body: { code: 1, message: 'media not ready' } };
      if (source.source_type === 'multiple_image_urls' && (source.items?.length ?? 0) > 5) return { status: 400, body: { code: 1, message: 'constraint: maxItems=5' } };
      const id = String(8_000_000_000_000 + next++);
      fake.pins.push({ id, body });
      return { status: 201, body: { id, created_at: new Date().toISOString(), board_id: body.board_id, title: body.title ?? '', description: body.description ?? '' } };
    }),
  });
  return fake;
}
