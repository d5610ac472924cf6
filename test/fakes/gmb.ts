/**
 * A local stand-in for Google Business Profile as its fact sheet describes it:
 * Google's consent screen and token endpoint (code with PKCE, refresh that keeps
 * the refresh token), the v1 accounts list, the v1 business-information
 * locations list (readMask required, paged), and v4 local posts: create with
 * Google's validation (topicType required, summary up to 1500, EVENT and OFFER
 * need an event with title and schedule, CALL takes no URL, one media item given
 * by sourceUrl) answered as a LocalPost, and list (newest first).
 * Errors use Google's envelope {error: {code, message, status, details}}. Its
 * create endpoint is local post creation (`storeThenFail`).
 */
import { consentAllows, redeemsConsent, startNetworkFake, type FakeAnswer, type NetworkFake, type RecordedRequest } from './network-fake.ts';

export const CLIENT_ID = 'gmb-client.apps.googleusercontent.com';
export const CLIENT_SECRET = 'gmb-secret';
export const MANAGE_SCOPE = 'https://www.googleapis.com/auth/business.manage';

export interface StoredPost {
  name: string;
  languageCode: string;
  summary: string;
  topicType: string;
  state: string;
  searchUrl: string;
  createTime: string;
  callToAction?: unknown;
  media?: unknown;
  event?: unknown;
  offer?: unknown;
}

export interface GmbFake extends NetworkFake {
  /** accounts/{id} → its locations. */
  accounts: Map<string, { name: string; title: string; storefrontAddress?: unknown; metadata?: { mapsUri?: string }; languageCode?: string }[]>;
  validTokens: Set<string>;
  refreshTokens: Set<string>;
  posts: Map<string, StoredPost[]>;
  /** The next created post comes back in state REJECTED (a policy violation). */
  rejectNext: boolean;
  /** Page size of the accounts and locations lists (to exercise paging). */
  pageSize: number;
}

export function googleError(code: number, status: string, message: string, details: unknown[] = []): FakeAnswer {
  return { status: code, body: { error: { code, message, status, ...(details.length > 0 ? { details } : {}) } } };
}

function validation(field: string, message: string): FakeAnswer {
  return googleError(400, 'INVALID_ARGUMENT', 'Request contains an invalid argument.', [
    { '@type': 'type.googleapis.com/google.mybusiness.v4.ValidationError', errorDetails: [{ code: 2, field, message }] },
  ]);
}

/** The per-minute quota answer; `limit` 0 is a project Google has not approved. */
export function quotaExceeded(limit: number): FakeAnswer {
  return googleError(
    429,
    'RESOURCE_EXHAUSTED',
    "Quota exceeded for quota metric 'Requests per minute' and limit 'Requests per minute per project' of service 'mybusiness.googleapis.com' for " +
      "consumer 'project_number:1234'.",
    [
      {
        '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
        reason: 'RATE_LIMIT_EXCEEDED',
        domain: 'googleapis.com',
        metadata: { quota_limit_value: String(limit), quota_metric: 'mybusiness.googleapis.com/default_requests', service: 'mybusiness.googleapis.com' },
      },
    ],
  );
}

export const PERMISSION_DENIED = googleError(403, 'PERMISSION_DENIED', 'The caller does not have permission');

const ACTIONS = new Set(['BOOK', 'ORDER', 'SHOP', 'LEARN_MORE', 'SIGN_UP', 'CALL', 'GET_OFFER']);

function validDate(d: any): boolean {
  return d && Number.isInteger(d.year) && Number.isInteger(d.month) && Number.isInteger(d.day) && d.month >= 1 && d.month <= 12 && d.day >= 1 && d.day <= 31;
}

export async function startGmbFake(): Promise<GmbFake> {
  let issued = 0;
  let postCount = 0;
  const fake = (await startNetworkFake()) as GmbFake;
  fake.accounts = new Map();
  fake.validTokens = new Set();
  fake.refreshTokens = new Set();
  fake.posts = new Map();
  fake.rejectNext = false;
  fake.pageSize = 100;

  const denied = (request: RecordedRequest): FakeAnswer | undefined => {
    const token = /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1];
    if (token && fake.validTokens.has(token)) return undefined;
    return googleError(
      401,
      'UNAUTHENTICATED',
      'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.',
    );
  };
  const page = <T>(items: T[], request: RecordedRequest): { slice: T[]; next?: string } => {
    const size = Math.min(Number(request.query.pageSize) || fake.pageSize, fake.pageSize);
    const from = Number(request.query.pageToken ?? 0);
    const slice = items.slice(from, from + size);
    return { slice, ...(from + size < items.length ? { next: String(from + size) } : {}) };
  };
  const location = (account: string, locationId: string) => fake.accounts.get(`accounts/${account}`)?.find((l) => l.name === `locations/${locationId}`);

  fake.route({
    'GET /o/oauth2/v2/auth': consentAllows('gmb-code'),

    'POST /token': (request) => {
      const form = request.form ?? {};
      if (form.client_id !== CLIENT_ID || form.client_secret !== CLIENT_SECRET)
        return { status: 401, body: { error: 'invalid_client', error_description: 'The OAuth client was not found.' } };
      if (form.grant_type === 'authorization_code') {
        const pending = fake.state.authorize;
        if (!redeemsConsent(fake, form, 'gmb-code')) {
          return { status: 400, body: { error: 'invalid_grant', error_description: 'Bad Request' } };
        }
        issued++;
        const access = `ya29.gmb-${issued}`;
        const refresh = `1//gmb-refresh-${issued}`;
        fake.validTokens.add(access);
        fake.refreshTokens.add(refresh);
        return { body: { access_token: access, refresh_token: refresh, expires_in: 3599, token_type: 'Bearer', scope: pending.scope } };
      }
      if (form.grant_type === 'refresh_token') {
        if (!fake.refreshTokens.has(form.refresh_token))
          return { status: 400, body: { error: 'invalid_grant', error_description: 'Token has been expired or revoked.' } };
        issued++;
        const access = `ya29.gmb-${issued}`;
        fake.validTokens.add(access);
        // Google keeps the refresh token: none in the answer.
        return { body: { access_token: access, expires_in: 3599, token_type: 'Bearer', scope: MANAGE_SCOPE } };
      }
      return { status: 400, body: { error: 'unsupported_grant_type' } };
    },

    'GET /v1/accounts': (request) => {
      const no = denied(request);
      if (no) return no;
      const { slice, next } = page(
        [...fake.accounts.keys()].map((name) => ({ name, accountName: name, type: 'PERSONAL' })),
        request,
      );
      return { body: { accounts: slice, ...(next ? { nextPageToken: next } : {}) } };
    },

    'GET /v1/accounts/:account/locations': (request) => {
      const no = denied(request);
      if (no) return no;
      if (!request.query.readMask) return googleError(400, 'INVALID_ARGUMENT', "Request contains an invalid argument. 'read_mask' is required.");
      const locations = fake.accounts.get(`accounts/${request.params.account}`);
      if (!locations) return googleError(404, 'NOT_FOUND', 'Requested entity was not found.');
      // Only the fields of the read mask come back (name always).
      const mask = new Set(['name', ...String(request.query.readMask).split(',')]);
      const masked = locations.map((l) => Object.fromEntries(Object.entries(l).filter(([field]) => mask.has(field))));
      const { slice, next } = page(masked, request);
      return { body: { locations: slice, ...(next ? { nextPageToken: next } : {}) } };
    },

    'POST /v4/accounts/:account/locations/:location/localPosts': (request) => {
      const no = denied(request);
      if (no) return no;
      if (!location(request.params.account, request.params.location)) return googleError(404, 'NOT_FOUND', 'Requested entity was not found.');
      const body = request.json ?? {};
      if (!body.topicType) return validation('topic_type', 'Topic type is required for post creation.');
      if (!['STANDARD', 'EVENT', 'OFFER', 'ALERT'].includes(body.topicType)) return validation('topic_type', 'Invalid topic type.');
      if (typeof body.summary === 'string' && [...body.summary].length > 1500) return validation('summary', 'Summary is too long.');
      if (body.topicType === 'EVENT' || body.topicType === 'OFFER') {
        const event = body.event;
        if (!event?.title) return validation('event.title', 'Event title is required.');
        if (!validDate(event.schedule?.startDate) || !validDate(event.schedule?.endDate)) return validation('event.schedule', 'Event schedule is required.');
      }
      if (body.offer && body.topicType !== 'OFFER') return validation('offer', 'Offer is only allowed for OFFER posts.');
      if (body.callToAction) {
        const { actionType, url } = body.callToAction;
        if (!ACTIONS.has(actionType)) return validation('call_to_action.action_type', 'Invalid action type.');
        if (actionType === 'CALL' && url !== undefined) return validation('call_to_action.url', 'Url must be empty for action type CALL.');
        if (actionType !== 'CALL' && !url) return validation('call_to_action.url', 'Url is required.');
      }
      if (body.media !== undefined) {
        if (!Array.isArray(body.media) || body.media.length > 1) return validation('media', 'Only one media item is allowed per post.');
        const [item] = body.media;
        if (item.mediaFormat !== 'PHOTO') return validation('media.media_format', 'Only PHOTO is supported.');
        if (!item.sourceUrl || item.dataRef) return validation('media.source_url', 'Media must be given by source_url.');
      }
      postCount++;
      const parent = `accounts/${request.params.account}/locations/${request.params.location}`;
      const id = `${1000 + postCount}`;
      const post: StoredPost = {
        ...body,
        name: `${parent}/localPosts/${id}`,
        state: fake.rejectNext ? 'REJECTED' : 'LIVE',
        searchUrl: `https://local.google.com/place?id=${request.params.location}&use=posts&lpsid=${id}`,
        createTime: new Date().toISOString(),
      };
      fake.rejectNext = false;
      fake.posts.set(parent, [...(fake.posts.get(parent) ?? []), post]);
      return { body: post };
    },

    'GET /v4/accounts/:account/locations/:location/localPosts': (request) => {
      const no = denied(request);
      if (no) return no;
      if (!location(request.params.account, request.params.location)) return googleError(404, 'NOT_FOUND', 'Requested entity was not found.');
      const all = [...(fake.posts.get(`accounts/${request.params.account}/locations/${request.params.location}`) ?? [])].reverse();
      const { slice, next } = page(all, request);
      return { body: { localPosts: slice, ...(next ? { nextPageToken: next } : {}) } };
    },
  });
  // Store, then answer a 5xx (`storeThenFail`) on local post creation, in Google's envelope (INTERNAL, UNAVAILABLE).
  fake.create = {
    route: 'POST /v4/accounts/:account/locations/:location/localPosts',
    serverError: (status) =>
      status === 503
        ? googleError(503, 'UNAVAILABLE', 'The service is currently unavailable.')
        : googleError(status, 'INTERNAL', 'Internal error encountered.'),
  };
  return fake;
}
