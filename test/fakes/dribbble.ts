/**
 * A local stand-in for Dribbble's OAuth and API v2 as its fact sheet describes
 * them: the authorize page, the token endpoint (code and client secret, in the
 * form or the query string; a token that never expires with its `scope`
 * string), GET /v2/user, and POST /v2/shots: Bearer with the `upload` scope
 * (403 otherwise), multipart `image` and `title` checked (422 with `errors[]`
 * for a missing title, over 8 MB, a type other than GIF/JPEG/PNG, or dimensions
 * other than 400×300, 800×600 or larger 4:3 multiples), a member's team only,
 * answered 202 with Location and no body. The new shot reads 404 for a short,
 * real processing window. Every answer carries the rate-limit headers. Its
 * create endpoint is POST /v2/shots (`storeThenFail`).
 */
import { STATUS_CODES } from 'node:http';
import sharp from 'sharp';
import { startNetworkFake, type FakeAnswer, type NetworkFake, type RecordedRequest } from './network-fake.ts';

export const CLIENT_ID = 'dribbble-client';
export const CLIENT_SECRET = 'dribbble-secret';

export interface StoredShot {
  id: number;
  title: string;
  description: string | null;
  team_id: string | null;
  image: Buffer;
  type: string;
  width: number;
  height: number;
  html_url: string;
  published_at: string;
  /** Until when the shot reads 404 (processing). */
  readyAt: number;
}

export interface DribbbleFake extends NetworkFake {
  user: {
    id: number;
    name: string;
    login: string;
    avatar_url: string;
    html_url: string;
    can_upload_shot: boolean;
    teams: { id: number; name: string; login: string; html_url: string }[];
  };
  /** Token → scopes. */
  tokens: Map<string, string[]>;
  /** The scope the user grants at the consent screen. */
  grantedScope: string;
  shots: StoredShot[];
  processingMs: number;
}

const MAX_BYTES = 8 * 1024 * 1024;
const TYPES = new Set(['image/gif', 'image/jpeg', 'image/png']);

function rateHeaders(): Record<string, string> {
  return { 'x-ratelimit-limit': '60', 'x-ratelimit-remaining': '59', 'x-ratelimit-reset': String(Math.ceil(Date.now() / 1000) + 60) };
}

function invalid(attribute: string, message: string): FakeAnswer {
  return { status: 422, headers: rateHeaders(), body: { message: 'Validation failed.', errors: [{ attribute, message }] } };
}

export async function startDribbbleFake(): Promise<DribbbleFake> {
  let issued = 0;
  let shotIds = 470000;
  const fake = (await startNetworkFake()) as DribbbleFake;
  fake.user = {
    id: 9001,
    name: 'Ada Pixel',
    login: 'adapixel',
    avatar_url: 'https://cdn.dribbble.example/ada.png',
    html_url: 'https://dribbble.com/adapixel',
    can_upload_shot: true,
    teams: [{ id: 77, name: 'Studio North', login: 'studionorth', html_url: 'https://dribbble.com/studionorth' }],
  };
  fake.tokens = new Map();
  fake.grantedScope = 'public upload';
  fake.shots = [];
  fake.processingMs = 300;

  const scopesOf = (request: RecordedRequest): string[] | undefined => {
    const token = /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1];
    return token ? fake.tokens.get(token) : undefined;
  };
  const unauthorized: FakeAnswer = { status: 401, headers: rateHeaders(), body: { message: 'Bad credentials' } };
  const shotJson = (s: StoredShot) => ({
    id: s.id,
    title: s.title,
    description: s.description,
    html_url: s.html_url,
    published_at: s.published_at,
    images: { normal: `https://cdn.dribbble.example/${s.id}.png` },
  });

  fake.route({
    'GET /oauth/authorize': (request) => {
      fake.state.authorize = request.query;
      const target = new URL(request.query.redirect_uri);
      target.searchParams.set('code', 'dribbble-code');
      if (request.query.state) target.searchParams.set('state', request.query.state);
      return { status: 302, headers: { location: target.toString() } };
    },

    'POST /oauth/token': (request) => {
      const p = { ...request.query, ...(request.form ?? {}) };
      if (p.client_id !== CLIENT_ID || p.client_secret !== CLIENT_SECRET)
        return { status: 401, body: { error: 'invalid_client', error_description: 'Client authentication failed due to unknown client.' } };
      if (p.code !== 'dribbble-code' || p.redirect_uri !== fake.state.authorize?.redirect_uri)
        return { status: 400, body: { error: 'invalid_grant', error_description: 'The provided authorization grant is invalid.' } };
      issued++;
      const token = `dribbble-token-${issued}`;
      fake.tokens.set(token, fake.grantedScope.split(' '));
      return { body: { access_token: token, token_type: 'bearer', scope: fake.grantedScope, created_at: Math.floor(Date.now() / 1000) } };
    },

    'GET /v2/user': (request) => (scopesOf(request) ? { headers: rateHeaders(), body: fake.user } : unauthorized),

    'GET /v2/user/shots': (request) => {
      if (!scopesOf(request)) return unauthorized;
      const perPage = Math.min(Number(request.query.per_page) || 30, 100);
      const visible = fake.shots.filter((s) => s.readyAt <= Date.now()).reverse();
      return { headers: rateHeaders(), body: visible.slice(0, perPage).map(shotJson) };
    },

    'GET /v2/shots/:id': (request) => {
      if (!scopesOf(request)) return unauthorized;
      const shot = fake.shots.find((s) => String(s.id) === request.params.id);
      if (!shot || shot.readyAt > Date.now()) return { status: 404, headers: rateHeaders(), body: { message: 'Not found' } };
      return { headers: rateHeaders(), body: shotJson(shot) };
    },

    'POST /v2/shots': async (request) => {
      const scopes = scopesOf(request);
      if (!scopes) return unauthorized;
      if (!scopes.includes('upload')) return { status: 403, headers: rateHeaders(), body: { message: 'You do not have access to this resource.' } };
      if (!fake.user.can_upload_shot) return { status: 403, headers: rateHeaders(), body: { message: 'You are not allowed to upload shots.' } };
      const form = request.multipart;
      if (!form) return { status: 400, headers: rateHeaders(), body: { message: 'Problems parsing multipart body' } };
      const image = form.files.find((f) => f.name === 'image');
      const title = form.fields.title?.trim();
      if (!title) return invalid('title', "can't be blank");
      if (!image) return invalid('image', "can't be blank");
      if (image.data.length > MAX_BYTES) return invalid('image', 'must be less than 8 MB');
      if (!TYPES.has(image.type)) return invalid('image', 'must be a GIF, JPG or PNG');
      let width = 0;
      let height = 0;
      try {
        ({ width = 0, height = 0 } = await sharp(image.data).metadata());
      } catch {
        return invalid('image', 'could not be read');
      }
      if (width * 3 !== height * 4 || width % 400 !== 0) return invalid('image', `must be 400x300, 800x600 or a larger 4:3 multiple (was ${width}x${height})`);
      const team = form.fields.team_id ?? null;
      if (team && !fake.user.teams.some((t) => String(t.id) === team))
        return { status: 403, headers: rateHeaders(), body: { message: 'You are not a member of that team.' } };
      shotIds++;
      fake.shots.push({
        id: shotIds,
        title,
        description: form.fields.description ?? null,
        team_id: team,
        image: image.data,
        type: image.type,
        width,
        height,
        html_url: `https://dribbble.com/shots/${shotIds}-${title.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`,
        published_at: new Date().toISOString(),
        readyAt: Date.now() + fake.processingMs,
      });
      return { status: 202, headers: { ...rateHeaders(), location: `${fake.url}/v2/shots/${shotIds}` } };
    },
  });
  // Store, then answer a 5xx (`storeThenFail`) on the shot upload, in Dribbble's {message} shape.
  fake.create = {
    route: 'POST /v2/shots',
    serverError: (status) => ({ status, headers: rateHeaders(), body: { message: STATUS_CODES[status] ?? 'Server Error' } }),
  };
  return fake;
}
