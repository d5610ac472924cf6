/**
 * A local Pinterest API v5: the consent screen, /v5/oauth/token (client in HTTP
 * Basic, rotating refresh tokens), user_account, boards with bookmark paging,
 * media registration with an upload URL taking a multipart form (as S3 does),
 * media status, pins (created and listed), and the user account's and a pin's
 * analytics (daily_metrics over at most the last 90 days), with Pinterest's
 * {code, message} errors. Its create endpoint is POST /v5/pins (`storeThenFail`).
 */
import { STATUS_CODES } from 'node:http';
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
  pins: { id: string; body: any; created_at: string }[];
  /** The account's figures of one UTC day (YYYY-MM-DD) by metric type (0 when not set). */
  accountMetrics: Map<string, Record<string, number>>;
  /** A pin's figures of one UTC day, keyed "<pin id> <YYYY-MM-DD>" (0 when not set). */
  pinMetrics: Map<string, Record<string, number>>;
}

const DAY_MS = 86_400_000;
const ACCOUNT_METRIC_TYPES = [
  'IMPRESSION',
  'SAVE',
  'PIN_CLICK',
  'OUTBOUND_CLICK',
  'ENGAGEMENT',
  'SAVE_RATE',
  'PIN_CLICK_RATE',
  'OUTBOUND_CLICK_RATE',
  'ENGAGEMENT_RATE',
];
const PIN_METRIC_TYPES = ['IMPRESSION', 'SAVE', 'PIN_CLICK', 'OUTBOUND_CLICK', 'TOTAL_COMMENTS', 'TOTAL_REACTIONS'];

/** "2020-01-01T20:10:40-00:00", as Pinterest writes date-times. */
const pinterestTime = (at: number) => new Date(at).toISOString().replace(/\.\d{3}Z$/, '-00:00');
const dayOf = (at: number) => new Date(at).toISOString().slice(0, 10);

/**
 * start_date/end_date as the analytics endpoints check them (UTC days): the start
 * at most 90 days back, the end not before it nor more than 90 days after it.
 * The days asked, or Pinterest's 400.
 */
function analyticsDays(query: Record<string, string>): string[] | FakeAnswer {
  const invalid = (message: string): FakeAnswer => ({ status: 400, body: { code: 1, message } });
  const valid = (d: string | undefined) => d !== undefined && /^\d{4}-\d{2}-\d{2}$/.test(d) && !Number.isNaN(Date.parse(`${d}T00:00:00Z`));
  if (!valid(query.start_date)) return invalid('start_date: is required and must be a date YYYY-MM-DD');
  if (!valid(query.end_date)) return invalid('end_date: is required and must be a date YYYY-MM-DD');
  const start = Date.parse(`${query.start_date}T00:00:00Z`);
  const end = Date.parse(`${query.end_date}T00:00:00Z`);
  const today = Date.parse(`${dayOf(Date.now())}T00:00:00Z`);
  if (start < today - 90 * DAY_MS) return invalid('You can only get data from the last 90 days.');
  if (end < start) return invalid('end_date must be on or after start_date.');
  if (end > start + 90 * DAY_MS) return invalid('end_date cannot be more than 90 days past start_date.');
  const days: string[] = [];
  for (let t = start; t <= Math.min(end, today); t += DAY_MS) days.push(dayOf(t));
  return days;
}

/** metric_types as a comma-separated list of known types; undefined when it names an unknown one. */
function metricTypes(value: string | undefined, known: string[]): string[] | undefined {
  const types = value === undefined || value === '' ? known : value.split(',');
  return types.every((t) => known.includes(t)) ? types : undefined;
}

/** One AnalyticsMetricsResponse: daily_metrics and summary_metrics of the types asked. */
function metricsResponse(days: string[], types: string[], figures: (day: string) => Record<string, number> | undefined) {
  const summary: Record<string, number> = Object.fromEntries(types.map((t) => [t, 0]));
  const daily = days.map((date) => {
    const known = figures(date);
    if (!known) return { date, data_status: 'BEFORE_PIN_CREATED', metrics: {} };
    const metrics = Object.fromEntries(types.map((t) => [t, known[t] ?? 0]));
    for (const t of types) summary[t] += metrics[t];
    return { date, data_status: 'READY', metrics };
  });
  return { daily_metrics: daily, summary_metrics: summary };
}

/** A continuous-refresh token lives 60 days (refresh_token_expires_in). */
const REFRESH_TOKEN_LIFE_MS = 5_184_000 * 1000;

export async function startPinterestFake(): Promise<PinterestFake> {
  let next = 10;
  const fake = (await startNetworkFake()) as PinterestFake;
  Object.assign(fake, { tokens: new Set(), refreshTokens: new Map(), clock: Date.now, pins: [], accountMetrics: new Map(), pinMetrics: new Map() });
  const media = new Map<string, { uploaded: boolean; looks: number }>();

  const issue = (): FakeAnswer => {
    const access = `pina_${next++}`;
    const refresh = `pinr_${next++}`;
    fake.tokens.add(access);
    fake.refreshTokens.set(refresh, fake.clock());
    return {
      status: 200,
      body: {
        access_token: access,
        refresh_token: refresh,
        response_type: 'authorization_code',
        token_type: 'bearer',
        expires_in: 2_592_000,
        refresh_token_expires_in: 5_184_000,
        scope: 'boards:read,pins:write',
      },
    };
  };
  const authed =
    (handler: (request: RecordedRequest) => FakeAnswer) =>
    (request: RecordedRequest): FakeAnswer =>
      fake.tokens.has(String(request.headers.authorization ?? '').replace(/^Bearer /, ''))
        ? handler(request)
        : { status: 401, body: { code: 2, message: 'Authentication failed.' } };

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
    'GET /v5/user_account': authed(() => ({
      status: 200,
      body: {
        id: PINTEREST_USER.id,
        username: PINTEREST_USER.username,
        account_type: 'BUSINESS',
        business_name: 'Herald Pins',
        profile_image: 'https://i.pinimg.com/p.jpg',
      },
    })),
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
        body: {
          media_id: id,
          media_type: 'video',
          upload_url: `${fake.url}/s3-upload/`,
          upload_parameters: { key: `uploads/${id}.mp4`, 'x-amz-signature': `sig-${id}`, policy: 'cG9saWN5' },
        },
      };
    }),
    'POST /s3-upload/': (request) => {
      const id = /uploads\/(\d+)\.mp4/.exec(request.multipart?.fields.key ?? '')?.[1];
      const file = request.multipart?.files.find((f) => f.name === 'file');
      if (!id || !media.has(id) || !file || request.multipart?.fields['x-amz-signature'] !== `sig-${id}`)
        return { status: 403, body: '<Error><Code>AccessDenied</Code></Error>' };
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
      if (source.source_type === 'multiple_image_urls' && (source.items?.length ?? 0) > 5)
        return { status: 400, body: { code: 1, message: 'constraint: maxItems=5' } };
      const id = String(8_000_000_000_000 + next++);
      const created_at = pinterestTime(Date.now());
      fake.pins.push({ id, body, created_at });
      return { status: 201, body: { id, created_at, board_id: body.board_id, title: body.title ?? '', description: body.description ?? '' } };
    }),
    // The user's pins, newest first, with bookmark paging.
    'GET /v5/pins': authed((request) => {
      const size = request.query.page_size === undefined ? 25 : Number(request.query.page_size);
      if (!Number.isInteger(size) || size < 1 || size > 250) return { status: 400, body: { code: 1, message: 'page_size: must be between 1 and 250' } };
      const start = request.query.bookmark ? Number(request.query.bookmark) : 0;
      const newest = [...fake.pins].reverse();
      const items = newest.slice(start, start + size).map((p) => ({
        id: p.id,
        created_at: p.created_at,
        board_id: p.body.board_id,
        board_owner: { username: PINTEREST_USER.username },
        title: p.body.title ?? null,
        description: p.body.description ?? null,
        link: p.body.link ?? null,
        dominant_color: p.body.dominant_color ?? null,
        media: { media_type: p.body.media_source?.source_type === 'video_id' ? 'video' : 'image' },
      }));
      return { status: 200, body: { items, bookmark: start + size < newest.length ? String(start + size) : null } };
    }),
    'GET /v5/user_account/analytics': authed((request) => {
      const days = analyticsDays(request.query);
      if (!Array.isArray(days)) return days;
      const types = metricTypes(request.query.metric_types, ACCOUNT_METRIC_TYPES);
      if (!types) return { status: 400, body: { code: 1, message: `metric_types: unknown value in ${request.query.metric_types}` } };
      return { status: 200, body: { all: metricsResponse(days, types, (d) => fake.accountMetrics.get(d) ?? {}) } };
    }),
    'GET /v5/pins/:id/analytics': authed((request) => {
      const pin = fake.pins.find((p) => p.id === request.params.id);
      if (!pin) return { status: 404, body: { code: 50, message: 'Pin not found.' } };
      const days = analyticsDays(request.query);
      if (!Array.isArray(days)) return days;
      // metric_types is required here.
      const types = request.query.metric_types ? metricTypes(request.query.metric_types, PIN_METRIC_TYPES) : undefined;
      if (!types)
        return {
          status: 400,
          body: { code: 1, message: 'metric_types: is required and takes IMPRESSION, SAVE, PIN_CLICK, OUTBOUND_CLICK, TOTAL_COMMENTS, TOTAL_REACTIONS' },
        };
      const created = pin.created_at.slice(0, 10);
      const all = metricsResponse(days, types, (d) => (d < created ? undefined : (fake.pinMetrics.get(`${pin.id} ${d}`) ?? {})));
      const lifetime = Object.fromEntries(
        types.map((t) => [t, [...fake.pinMetrics].filter(([k]) => k.startsWith(`${pin.id} `)).reduce((sum, [, m]) => sum + (m[t] ?? 0), 0)]),
      );
      return { status: 200, body: { all: { ...all, lifetime_metrics: lifetime } } };
    }),
  });
  // Store, then answer a 5xx (`storeThenFail`) on pin creation, in Pinterest's {code, message} shape.
  fake.create = { route: 'POST /v5/pins', serverError: (status) => ({ status, body: { code: status, message: STATUS_CODES[status] ?? 'Unexpected error' } }) };
  return fake;
}
