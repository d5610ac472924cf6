/**
 * A local Twitch as its reference describes it: id.twitch.tv's consent screen,
 * /oauth2/token (authorization code and rotating refresh tokens, with the client
 * secret; 400 "Invalid refresh token"), /oauth2/validate (`Authorization: OAuth`),
 * and Helix: GET /users, POST /chat/messages and POST /chat/announcements.
 *
 * Helix wants both `Authorization: Bearer` and the app's `Client-Id` (401 when
 * either is wrong), the scope each endpoint needs, `sender_id` /
 * `moderator_id` equal to the token's user, messages of at most 500 characters,
 * and lets one announcement through per 2 seconds (429 with Ratelimit-* headers).
 * `dropNext` makes chat drop the next message (200 with is_sent false). Its
 * create endpoint is POST /chat/messages (`storeThenFail`).
 */
import { STATUS_CODES } from 'node:http';
import crypto from 'node:crypto';
import { startNetworkFake, type FakeAnswer, type NetworkFake, type RecordedRequest } from './network-fake.ts';

export const TWITCH_APP = { clientId: 'twitch-client-id-0123', clientSecret: 'twitch-client-secret-4567' };
export const TWITCH_USER = { id: '141981764', login: 'heraldcast', display_name: 'HeraldCast', profile_image_url: 'https://static-cdn.example/herald.png' };

export interface TwitchChatLine {
  kind: 'message' | 'announcement';
  message_id?: string;
  text: string;
  color?: string;
  reply_parent_message_id?: string;
  at: number;
}

export interface TwitchFake extends NetworkFake {
  lines: TwitchChatLine[];
  /** The access token now in force. */
  accessToken(): string;
  refreshToken(): string;
  /** The access token stops working; the refresh token still works. */
  expireAccessToken(): void;
  /** The user disconnected the app: every token stops working. */
  revokeAll(): void;
  /** Chat drops the next message with this reason (is_sent false). */
  dropNext(reason: { code: string; message: string }): void;
  /** Scopes the next tokens carry (the consent screen grants what was asked by default). */
  grantOnly?: string[];
}

const helixError = (status: number, error: string, message: string): FakeAnswer => ({ status, body: { error, status, message } });

export async function startTwitchFake(): Promise<TwitchFake> {
  let generation = 0;
  let access = '';
  let refresh = '';
  let scopes: string[] = [];
  let expired = false;
  let revoked = false;
  let drop: { code: string; message: string } | undefined;
  let lastAnnouncement = 0;
  const codes = new Map<string, { redirectUri: string; scopes: string[] }>();

  const issue = () => {
    generation++;
    access = `twitch-access-${generation}-${crypto.randomBytes(6).toString('hex')}`;
    refresh = `twitch-refresh-${generation}-${crypto.randomBytes(6).toString('hex')}`;
    expired = false;
    return { access_token: access, expires_in: 14_400, refresh_token: refresh, scope: scopes, token_type: 'bearer' };
  };

  /** Helix's checks of the caller: the bearer token, the app's Client-Id, the scope. */
  const helixCaller = (req: RecordedRequest, scope?: string): FakeAnswer | undefined => {
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (req.headers['client-id'] !== TWITCH_APP.clientId) return helixError(401, 'Unauthorized', 'Client ID and OAuth token do not match');
    if (!bearer || bearer !== access || expired || revoked) return helixError(401, 'Unauthorized', 'Invalid OAuth token');
    if (scope && !scopes.includes(scope)) return helixError(401, 'Unauthorized', `Missing scope: ${scope}`);
    return undefined;
  };

  const fake = (await startNetworkFake({
    'GET /oauth2/authorize': (req, f) => {
      f.state.authorize = req.query;
      const q = req.query;
      if (q.response_type !== 'code' || q.client_id !== TWITCH_APP.clientId || !q.redirect_uri) {
        return { status: 400, body: { status: 400, message: 'invalid client or response_type' } };
      }
      const code = `twitch-code-${crypto.randomBytes(4).toString('hex')}`;
      const asked = (q.scope ?? '').split(' ').filter(Boolean);
      codes.set(code, { redirectUri: q.redirect_uri, scopes: (f as TwitchFake).grantOnly ?? asked });
      const target = new URL(q.redirect_uri);
      target.searchParams.set('code', code);
      target.searchParams.set('scope', asked.join(' '));
      if (q.state) target.searchParams.set('state', q.state);
      return { status: 302, headers: { location: target.toString() } };
    },
    'POST /oauth2/token': (req) => {
      const form = req.form ?? {};
      if (form.client_id !== TWITCH_APP.clientId || form.client_secret !== TWITCH_APP.clientSecret) {
        return { status: 403, body: { status: 403, message: 'invalid client secret' } };
      }
      if (form.grant_type === 'authorization_code') {
        const grant = codes.get(form.code ?? '');
        if (!grant || grant.redirectUri !== form.redirect_uri) return { status: 400, body: { status: 400, message: 'Invalid authorization code' } };
        codes.delete(form.code!);
        scopes = grant.scopes;
        revoked = false;
        return { body: issue() };
      }
      if (form.grant_type === 'refresh_token') {
        if (revoked || !form.refresh_token || form.refresh_token !== refresh) return { status: 400, body: { status: 400, message: 'Invalid refresh token' } };
        return { body: issue() };
      }
      return { status: 400, body: { status: 400, message: 'Invalid grant type' } };
    },
    'GET /oauth2/validate': (req) => {
      const token = /^OAuth (.+)$/.exec(req.headers.authorization ?? '')?.[1];
      if (!token || token !== access || expired || revoked) return { status: 401, body: { status: 401, message: 'invalid access token' } };
      return { body: { client_id: TWITCH_APP.clientId, login: TWITCH_USER.login, scopes, user_id: TWITCH_USER.id, expires_in: 14_000 } };
    },
    'GET /helix/users': (req) =>
      helixCaller(req) ?? { body: { data: [{ ...TWITCH_USER, type: '', broadcaster_type: 'affiliate', created_at: '2019-01-01T00:00:00Z' }] } },
    'POST /helix/chat/messages': (req, f) => {
      const denied = helixCaller(req, 'user:write:chat');
      if (denied) return denied;
      const body = req.json ?? {};
      if (!body.broadcaster_id || !body.sender_id || typeof body.message !== 'string' || body.message === '') {
        return helixError(400, 'Bad Request', 'Missing required parameter');
      }
      if (body.sender_id !== TWITCH_USER.id) return helixError(403, 'Forbidden', 'The sender must be the user of the token');
      if (body.broadcaster_id !== TWITCH_USER.id) return helixError(403, 'Forbidden', 'The sender is not permitted to send chat messages to this broadcaster');
      if ([...body.message].length > 500) return helixError(422, 'Unprocessable Entity', 'The message is too large');
      const lines = (f as TwitchFake).lines;
      if (body.reply_parent_message_id && !lines.some((l) => l.message_id === body.reply_parent_message_id)) {
        return helixError(400, 'Bad Request', 'The reply parent message was not found');
      }
      const message_id = crypto.randomUUID();
      if (drop) {
        const reason = drop;
        drop = undefined;
        return { body: { data: [{ message_id, is_sent: false, drop_reason: reason }] } };
      }
      lines.push({ kind: 'message', message_id, text: body.message, reply_parent_message_id: body.reply_parent_message_id, at: Date.now() });
      return { body: { data: [{ message_id, is_sent: true, drop_reason: null }] } };
    },
    'POST /helix/chat/announcements': (req, f) => {
      const denied = helixCaller(req, 'moderator:manage:announcements');
      if (denied) return denied;
      if (req.query.broadcaster_id !== TWITCH_USER.id || req.query.moderator_id !== TWITCH_USER.id) {
        return helixError(403, 'Forbidden', 'The user in moderator_id is not one of the broadcaster’s moderators');
      }
      const body = req.json ?? {};
      if (typeof body.message !== 'string' || body.message === '') return helixError(400, 'Bad Request', 'Missing required parameter message');
      if (body.color !== undefined && !['primary', 'blue', 'green', 'orange', 'purple'].includes(body.color)) {
        return helixError(400, 'Bad Request', 'The color is not valid');
      }
      const now = Date.now();
      if (now - lastAnnouncement < 2_000) {
        const reset = Math.ceil((lastAnnouncement + 2_000) / 1000);
        return {
          status: 429,
          headers: { 'ratelimit-limit': '1', 'ratelimit-remaining': '0', 'ratelimit-reset': String(reset) },
          body: { error: 'Too Many Requests', status: 429, message: 'Too Many Requests' },
        };
      }
      lastAnnouncement = now;
      // Twitch cuts an announcement longer than 500 characters.
      (f as TwitchFake).lines.push({ kind: 'announcement', text: [...body.message].slice(0, 500).join(''), color: body.color ?? 'primary', at: now });
      return { status: 204 };
    },
  })) as TwitchFake;

  fake.lines = [];
  fake.accessToken = () => access;
  fake.refreshToken = () => refresh;
  fake.expireAccessToken = () => {
    expired = true;
  };
  fake.revokeAll = () => {
    revoked = true;
  };
  fake.dropNext = (reason) => {
    drop = reason;
  };
  // Store, then answer a 5xx (`storeThenFail`) on chat messages, in Helix's {error, status, message} shape.
  fake.create = { route: 'POST /helix/chat/messages', serverError: (status) => helixError(status, STATUS_CODES[status] ?? 'Internal Server Error', '') };
  return fake;
}
