/**
 * A local Mastodon instance as docs.joinmastodon.org describes its API: app
 * registration (POST /api/v1/apps), OAuth authorize (with PKCE S256) and token,
 * verify_credentials, media v2 (200 when processed at once, 202 while a video
 * processes; GET /api/v1/media/:id answers 206 until done), statuses with
 * Idempotency-Key (a repeated key returns the status already made), replies,
 * an account's statuses, and errors as {"error": "..."}. Its create endpoint is
 * POST /api/v1/statuses (`storeThenFail`).
 */
import { STATUS_CODES } from 'node:http';
import crypto from 'node:crypto';
import { startNetworkFake, type FakeAnswer, type NetworkFake, type RecordedRequest } from './network-fake.ts';

export interface FakeStatus {
  id: string;
  url: string;
  content: string;
  text: string;
  in_reply_to_id: string | null;
  media_ids: string[];
  /** The content warning shown in place of the text ('' when none). */
  spoiler_text: string;
  created_at: string;
  idempotencyKey?: string;
}

export interface MastodonFake extends NetworkFake {
  host: string;
  apps: { client_id: string; client_secret: string; redirect_uris: string; scopes: string }[];
  validTokens: Set<string>;
  statuses: FakeStatus[];
  media: Map<string, { type: string; bytes: Buffer; filename: string; readyAt: number; description: string | null }>;
  /** How long the instance takes to process a video (wall-clock; images are ready at once). */
  videoProcessingMs: number;
  account: {
    id: string;
    username: string;
    acct: string;
    display_name: string;
    avatar: string;
    url: string;
    followers_count: number;
    following_count: number;
    statuses_count: number;
  };
  /** What people did with a status (0 when not set), as the Status entity reports it. */
  reactions: Map<string, { favourites_count: number; reblogs_count: number; replies_count: number; quotes_count: number }>;
  /** The next status is created, but the answer is not JSON (the outcome looks unknown to the client). */
  garbleNextStatusAnswer?: boolean;
}

function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

/** Roughly how Mastodon renders plain text: paragraphs, line breaks, and links wrapped in spans. */
function render(text: string): string {
  const linked = (line: string) =>
    escapeHtml(line).replace(/https?:\/\/[^\s<]+/g, (url) => {
      const [, scheme, rest] = /^(https?:\/\/)(.*)$/.exec(url)!;
      return (
        `<a href="${url}" rel="nofollow noopener" target="_blank"><span class="invisible">${scheme}</span>` +
        `<span class="ellipsis">${rest.slice(0, 30)}</span><span class="invisible">${rest.slice(30)}</span></a>`
      );
    });
  return text
    .split(/\n{2,}/)
    .map((p) => `<p>${p.split('\n').map(linked).join('<br />')}</p>`)
    .join('');
}

const unauthorized: FakeAnswer = { status: 401, body: { error: 'The access token is invalid' } };

export async function startMastodonFake(): Promise<MastodonFake> {
  let ids = 110000000000000000n;
  const nextId = () => String(++ids);
  const fake = (await startNetworkFake()) as MastodonFake;
  fake.host = new URL(fake.url).host;
  fake.apps = [];
  fake.validTokens = new Set();
  fake.statuses = [];
  fake.media = new Map();
  fake.videoProcessingMs = 300;
  fake.account = {
    id: '109876',
    username: 'herald',
    acct: 'herald',
    display_name: 'Herald Test',
    avatar: `${fake.url}/avatars/herald.png`,
    url: `${fake.url}/@herald`,
    followers_count: 0,
    following_count: 0,
    statuses_count: 0,
  };
  fake.reactions = new Map();
  const codes = new Map<string, { client_id: string; redirect_uri: string; challenge?: string }>();

  const authed = (request: RecordedRequest) => {
    const token = /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1];
    return token !== undefined && fake.validTokens.has(token);
  };
  const params = (request: RecordedRequest): Record<string, any> => request.json ?? request.form ?? {};

  fake.route({
    'POST /api/v1/apps': (request) => {
      const p = params(request);
      if (!p.client_name) return { status: 422, body: { error: "Validation failed: Application name can't be blank" } };
      if (!p.redirect_uris) return { status: 422, body: { error: "Validation failed: Redirect URI can't be blank" } };
      const app = {
        client_id: crypto.randomBytes(16).toString('hex'),
        client_secret: crypto.randomBytes(16).toString('hex'),
        redirect_uris: p.redirect_uris,
        scopes: p.scopes ?? 'read',
      };
      fake.apps.push(app);
      return {
        body: {
          id: String(fake.apps.length),
          name: p.client_name,
          website: p.website ?? null,
          scopes: app.scopes.split(' '),
          redirect_uris: [app.redirect_uris],
          redirect_uri: app.redirect_uris,
          client_id: app.client_id,
          client_secret: app.client_secret,
          client_secret_expires_at: 0,
        },
      };
    },

    // The consent screen, where the user clicks "Authorize".
    'GET /oauth/authorize': (request) => {
      const q = request.query;
      const app = fake.apps.find((a) => a.client_id === q.client_id);
      if (!app) return { status: 401, body: { error: 'invalid_client', error_description: 'Client authentication failed due to unknown client.' } };
      if (q.redirect_uri !== app.redirect_uris) return { status: 400, body: { error: 'invalid_redirect_uri' } };
      if (!q.scope.split(' ').every((s: string) => app.scopes.split(' ').includes(s))) return { status: 400, body: { error: 'invalid_scope' } };
      if (q.code_challenge && q.code_challenge_method !== 'S256') return { status: 400, body: { error: 'invalid_request' } };
      fake.state.authorize = q;
      const code = crypto.randomBytes(8).toString('hex');
      codes.set(code, { client_id: q.client_id, redirect_uri: q.redirect_uri, challenge: q.code_challenge });
      const target = new URL(q.redirect_uri);
      target.searchParams.set('code', code);
      target.searchParams.set('state', q.state);
      return { status: 302, headers: { location: target.toString() } };
    },

    'POST /oauth/token': (request) => {
      const p = params(request);
      const app = fake.apps.find((a) => a.client_id === p.client_id && a.client_secret === p.client_secret);
      if (!app) return { status: 401, body: { error: 'invalid_client', error_description: 'Client authentication failed due to unknown client.' } };
      const grant = codes.get(p.code);
      const verified = grant?.challenge
        ? crypto
            .createHash('sha256')
            .update(p.code_verifier ?? '')
            .digest('base64url') === grant.challenge
        : true;
      if (!grant || grant.client_id !== p.client_id || grant.redirect_uri !== p.redirect_uri || !verified) {
        return {
          status: 400,
          body: {
            error: 'invalid_grant',
            error_description:
              'The provided authorization grant is invalid, expired, revoked, does not match the redirection URI used in the authorization request, ' +
              'or was issued to another client.',
          },
        };
      }
      codes.delete(p.code);
      const token = crypto.randomBytes(16).toString('base64url');
      fake.validTokens.add(token);
      return { body: { access_token: token, token_type: 'Bearer', scope: p.scope ?? 'read', created_at: Math.floor(Date.now() / 1000) } };
    },

    'GET /api/v1/accounts/verify_credentials': (request) =>
      authed(request) ? { body: { ...fake.account, statuses_count: fake.statuses.length } } : unauthorized,

    'POST /api/v2/media': (request) => {
      if (!authed(request)) return unauthorized;
      const file = request.multipart?.files.find((f) => f.name === 'file');
      if (!file) return { status: 422, body: { error: 'Validation failed: File is missing' } };
      if (!/^(image|video)\//.test(file.type)) return { status: 422, body: { error: 'Validation failed: File content type is invalid' } };
      const id = nextId();
      const video = file.type.startsWith('video/');
      // Mastodon keeps the optional description (alt text), at most 1,500 characters.
      const description = request.multipart?.fields.description ?? null;
      if (description !== null && [...description].length > 1500)
        return { status: 422, body: { error: 'Validation failed: Description is too long (maximum is 1500 characters)' } };
      fake.media.set(id, {
        type: file.type,
        bytes: file.data,
        filename: file.filename,
        readyAt: Date.now() + (video ? fake.videoProcessingMs : 0),
        description,
      });
      const attachment = { id, type: video ? 'video' : 'image', url: video ? null : `${fake.url}/media/${id}`, preview_url: null, description };
      return { status: video ? 202 : 200, body: attachment };
    },

    'GET /api/v1/media/:id': (request) => {
      if (!authed(request)) return unauthorized;
      const media = fake.media.get(request.params.id);
      if (!media) return { status: 404, body: { error: 'Record not found' } };
      const attachment = { id: request.params.id, type: media.type.split('/')[0], url: `${fake.url}/media/${request.params.id}` };
      if (Date.now() < media.readyAt) return { status: 206, body: { ...attachment, url: null } };
      return { status: 200, body: attachment };
    },

    'POST /api/v1/statuses': (request) => {
      if (!authed(request)) return unauthorized;
      const key = request.headers['idempotency-key'] as string | undefined;
      const existing = key ? fake.statuses.find((s) => s.idempotencyKey === key) : undefined;
      const view = (s: FakeStatus) => ({
        id: s.id,
        uri: `${fake.url}/users/herald/statuses/${s.id}`,
        url: s.url,
        created_at: s.created_at,
        content: s.content,
        in_reply_to_id: s.in_reply_to_id,
        spoiler_text: s.spoiler_text,
        visibility: 'public',
        media_attachments: s.media_ids.map((id) => ({ id })),
        account: fake.account,
      });
      if (existing) return { body: view(existing) };
      const p = params(request);
      const text: string = p.status ?? '';
      const mediaIds: string[] = p.media_ids ?? p['media_ids[]'] ?? [];
      if (!text && mediaIds.length === 0) return { status: 422, body: { error: "Validation failed: Text can't be blank" } };
      const spoiler: string = p.spoiler_text ?? '';
      // Mastodon counts the content warning and the text together against the limit.
      if ([...text].length + [...spoiler].length > 500) return { status: 422, body: { error: 'Validation failed: Text character limit of 500 exceeded' } };
      for (const id of mediaIds) {
        const media = fake.media.get(id);
        if (!media) return { status: 422, body: { error: 'Validation failed: Media not found' } };
        if (Date.now() < media.readyAt)
          return { status: 422, body: { error: 'Cannot attach files that have not finished processing. Try again in a moment!' } };
      }
      if (p.in_reply_to_id && !fake.statuses.some((s) => s.id === p.in_reply_to_id)) return { status: 404, body: { error: 'Record not found' } };
      const id = nextId();
      const status: FakeStatus = {
        id,
        url: `${fake.url}/@herald/${id}`,
        content: render(text),
        text,
        in_reply_to_id: p.in_reply_to_id ?? null,
        media_ids: mediaIds,
        spoiler_text: spoiler,
        created_at: new Date().toISOString(),
        idempotencyKey: key,
      };
      fake.statuses.push(status);
      if (fake.garbleNextStatusAnswer) {
        fake.garbleNextStatusAnswer = false;
        return { status: 200, body: '<html><body>Bad gateway page from a proxy</body></html>', headers: { 'content-type': 'text/html' } };
      }
      return { body: view(status) };
    },

    'GET /api/v1/statuses/:id': (request) => {
      if (!authed(request)) return unauthorized;
      const status = fake.statuses.find((s) => s.id === request.params.id);
      if (!status) return { status: 404, body: { error: 'Record not found' } };
      const counts = fake.reactions.get(status.id) ?? { favourites_count: 0, reblogs_count: 0, replies_count: 0, quotes_count: 0 };
      return {
        body: {
          id: status.id,
          url: status.url,
          created_at: status.created_at,
          content: status.content,
          in_reply_to_id: status.in_reply_to_id,
          account: fake.account,
          ...counts,
        },
      };
    },

    'GET /api/v1/accounts/:id/statuses': (request) => {
      if (!authed(request)) return unauthorized;
      if (request.params.id !== fake.account.id) return { status: 404, body: { error: 'Record not found' } };
      const limit = Math.min(Number(request.query.limit ?? 20), 40);
      const list = [...fake.statuses].reverse().slice(0, limit);
      return {
        body: list.map((s) => ({
          id: s.id,
          url: s.url,
          created_at: s.created_at,
          content: s.content,
          in_reply_to_id: s.in_reply_to_id,
          media_attachments: s.media_ids.map((id) => ({ id })),
        })),
      };
    },
  });
  // Store, then answer a 5xx (`storeThenFail`) on statuses, as {"error": "..."}.
  fake.create = { route: 'POST /api/v1/statuses', serverError: (status) => ({ status, body: { error: STATUS_CODES[status] ?? 'Internal Server Error' } }) };
  return fake;
}
