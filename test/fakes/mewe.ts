/**
 * A local stand-in for MeWe's Open API (developer preview) following the
 * documented header rules: X-App-Id on every request (401 without, 403 for an
 * unknown app), X-Api-Key on /api/dev/token; the login page sending the user
 * back with a loginRequestToken in the query or in the URL fragment (`answerIn`); the token exchange answering {expiresAt,
 * apiToken} or {pending:true}; Bearer tokens refused (401) after expiresAt;
 * /api/dev/me; /api/dev/groups in pages linked by nextPage; photo upload
 * answering {id}; timeline and group posts answering 204 No Content; and HTTP
 * 420 "Enhance Your Calm" on demand (`calmNext`). Its create endpoint is a
 * timeline post (`storeThenFail`).
 */
import { STATUS_CODES } from 'node:http';
import { startNetworkFake, type FakeAnswer, type NetworkFake, type RecordedRequest } from './network-fake.ts';

export const MEWE_APP = { appId: 'mewe-app-id-1', apiKey: 'mewe-api-key-secret' };
export const MEWE_USER = { userId: '5f1e2d3c4b5a', firstName: 'Mia', lastName: 'Weber', handle: 'mia.weber' };

export interface MeWePost {
  where: 'timeline' | string;
  text: string;
  photos: string[];
}

export interface MeWeFake extends NetworkFake {
  /** apiToken → expiry (epoch ms). */
  tokens: Map<string, number>;
  /** How long new tokens last. */
  lifetimeMs: number;
  /** Where the login page puts loginRequestToken and state when it sends the user back (MeWe's docs leave it open). */
  answerIn: 'query' | 'fragment';
  /** The next token exchange answers {pending:true}. */
  pendingNext: boolean;
  /** The next `calmNext` requests to a post route answer 420. */
  calmNext: number;
  posts: MeWePost[];
  photos: Map<string, { type: string; data: Buffer }>;
  /** Groups the user is a member of. */
  groups: { groupId: string; name: string }[];
}

const error = (status: number, message: string): FakeAnswer => ({ status, body: { message, errorCode: status } });

export async function startMeWeFake(): Promise<MeWeFake> {
  let issued = 0;
  let photoCount = 0;
  const fake = (await startNetworkFake()) as MeWeFake;
  fake.tokens = new Map();
  fake.lifetimeMs = 30 * 86_400_000;
  fake.pendingNext = false;
  fake.answerIn = 'query';
  fake.calmNext = 0;
  fake.posts = [];
  fake.photos = new Map();
  fake.groups = Array.from({ length: 5 }, (_, i) => ({ groupId: `g${i + 1}`, name: `Group ${i + 1}` }));
  const loginTokens = new Set<string>();

  const app = (request: RecordedRequest): FakeAnswer | undefined => {
    const id = request.headers['x-app-id'];
    if (!id) return error(401, 'Unauthorized: X-App-Id header is required');
    if (id !== MEWE_APP.appId) return error(403, 'Forbidden: unknown application');
    return undefined;
  };
  const user = (request: RecordedRequest): FakeAnswer | undefined => {
    const no = app(request);
    if (no) return no;
    const token = /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1];
    const expires = token ? fake.tokens.get(token) : undefined;
    if (expires === undefined || expires <= Date.now()) return error(401, 'Unauthorized');
    return undefined;
  };
  const post =
    (where: (request: RecordedRequest) => string | FakeAnswer) =>
    (request: RecordedRequest): FakeAnswer => {
      const no = user(request);
      if (no) return no;
      if (fake.calmNext > 0) {
        fake.calmNext--;
        return error(420, 'Enhance Your Calm');
      }
      const target = where(request);
      if (typeof target !== 'string') return target;
      const body = request.json;
      if (!body || typeof body.text !== 'string' || (body.text === '' && !body.uploadedPhotoIds?.length)) return error(400, 'text is required');
      const photos: string[] = body.uploadedPhotoIds ?? [];
      const unknown = photos.find((id) => !fake.photos.has(id));
      if (unknown) return error(400, `unknown photo id ${unknown}`);
      fake.posts.push({ where: target, text: body.text, photos });
      return { status: 204 };
    };

  fake.route({
    // The sign-in page: the user signs in and allows the app.
    'GET /login': (request) => {
      fake.state.login = request.query;
      if (request.query.client_id !== MEWE_APP.appId) return { status: 400, body: 'unknown client_id' };
      const token = `lrt-${loginTokens.size + 1}`;
      loginTokens.add(token);
      const target = new URL(request.query.redirect_uri);
      const back = fake.answerIn === 'fragment' ? new URLSearchParams() : target.searchParams;
      back.set('loginRequestToken', token);
      if (request.query.state) back.set('state', request.query.state);
      if (fake.answerIn === 'fragment') target.hash = back.toString();
      return { status: 302, headers: { location: target.toString() } };
    },

    'GET /api/dev/token': (request) => {
      const no = app(request);
      if (no) return no;
      if (request.headers['x-api-key'] !== MEWE_APP.apiKey) return error(401, 'Unauthorized: X-Api-Key is missing or wrong');
      if (!loginTokens.has(request.query.loginRequestToken)) return error(400, 'loginRequestToken is invalid');
      if (fake.pendingNext) {
        fake.pendingNext = false;
        return { body: { pending: true } };
      }
      loginTokens.delete(request.query.loginRequestToken);
      issued++;
      const apiToken = `mewe-token-${issued}`;
      const expiresAt = Date.now() + fake.lifetimeMs;
      fake.tokens.set(apiToken, expiresAt);
      return { body: { expiresAt: new Date(expiresAt).toISOString(), apiToken } };
    },

    'GET /api/dev/me': (request) => user(request) ?? { body: { ...MEWE_USER } },

    'GET /api/dev/groups': (request) => {
      const no = user(request);
      if (no) return no;
      const page = Number(request.query.page ?? 0);
      const size = 2;
      const groups = fake.groups.slice(page * size, page * size + size);
      const more = (page + 1) * size < fake.groups.length;
      return { body: { groups, ...(more ? { nextPage: `/api/dev/groups?page=${page + 1}` } : {}) } };
    },

    'POST /api/dev/photo/upload': (request) => {
      const no = user(request);
      if (no) return no;
      const file = request.multipart?.files.find((f) => f.name === 'file');
      if (!file) return error(400, 'file is required');
      if (!file.type.startsWith('image/')) return error(400, 'only images are accepted');
      photoCount++;
      const id = `photo-${photoCount}`;
      fake.photos.set(id, { type: file.type, data: file.data });
      return { body: { id } };
    },

    'POST /api/dev/me/post': post(() => 'timeline'),

    'POST /api/dev/group/:groupId/post': post((request) =>
      fake.groups.some((g) => g.groupId === request.params.groupId) ? request.params.groupId : error(403, 'Forbidden'),
    ),
  });
  // Store, then answer a 5xx (`storeThenFail`) on a timeline post, in MeWe's {message, errorCode} shape.
  fake.create = { route: 'POST /api/dev/me/post', serverError: (status) => error(status, STATUS_CODES[status] ?? 'Internal Server Error') };
  return fake;
}
