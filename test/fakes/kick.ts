/**
 * A local Kick as its developer docs describe it: id.kick.com's
 * /oauth/authorize (requires state, code_challenge and S256) and /oauth/token
 * (form body; checks client_secret and the PKCE code_verifier; rotates refresh
 * tokens; 400 {"error":"Invalid request"} otherwise), and api.kick.com's
 * GET /public/v1/users, GET /public/v1/channels and POST /public/v1/chat
 * (Bearer token with chat:write, type user|bot, broadcaster_user_id for
 * type user, content of at most 500 characters, replies to known messages),
 * answering {data, message}. `dropNext` makes chat drop a message (is_sent false).
 * Its create endpoint is chat (`storeThenFail`).
 */
import { STATUS_CODES } from 'node:http';
import crypto from 'node:crypto';
import { startNetworkFake, type FakeAnswer, type NetworkFake, type RecordedRequest } from './network-fake.ts';

export const KICK_APP = { clientId: '01KICKCLIENT0000000000000', clientSecret: 'kick-client-secret-abc' };
export const KICK_USER = { user_id: 4377088, name: 'HeraldLive', email: 'herald@example.com', profile_picture: 'https://files.kick.example/herald.webp' };
export const KICK_SLUG = 'heraldlive';

export interface KickChatMessage {
  message_id: string;
  content: string;
  type: 'user' | 'bot';
  reply_to_message_id?: string;
  at: number;
}

export interface KickFake extends NetworkFake {
  messages: KickChatMessage[];
  accessToken(): string;
  refreshToken(): string;
  /** The access token stops working; the refresh token still works. */
  expireAccessToken(): void;
  /** Every token stops working (access revoked). */
  revokeAll(): void;
  /** Chat drops the next message (200 with is_sent false). */
  dropNext(): void;
}

const invalidRequest: FakeAnswer = { status: 400, body: { error: 'Invalid request' } };
const unauthorized: FakeAnswer = { status: 401, body: { message: 'Unauthorized', data: null } };

function s256(verifier: string): string {
  return crypto.createHash('sha256').update(verifier).digest('base64url');
}

export async function startKickFake(): Promise<KickFake> {
  let generation = 0;
  let access = '';
  let refresh = '';
  let scopes: string[] = [];
  let expired = false;
  let revoked = false;
  let drop = false;
  const codes = new Map<string, { redirectUri: string; challenge: string; scopes: string[] }>();

  const issue = () => {
    generation++;
    access = `kick-access-${generation}-${crypto.randomBytes(6).toString('hex')}`;
    refresh = `kick-refresh-${generation}-${crypto.randomBytes(6).toString('hex')}`;
    expired = false;
    return { access_token: access, token_type: 'Bearer', refresh_token: refresh, expires_in: 7200, scope: scopes.join(' ') };
  };
  const caller = (req: RecordedRequest, scope: string): FakeAnswer | undefined => {
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (!bearer || bearer !== access || expired || revoked) return unauthorized;
    if (!scopes.includes(scope)) return { status: 403, body: { message: `Forbidden: missing scope ${scope}`, data: null } };
    return undefined;
  };

  const fake = (await startNetworkFake({
    'GET /oauth/authorize': (req, f) => {
      f.state.authorize = req.query;
      const q = req.query;
      if (q.response_type !== 'code' || q.client_id !== KICK_APP.clientId || !q.redirect_uri || !q.state) return invalidRequest;
      if (!q.code_challenge || q.code_challenge_method !== 'S256') return invalidRequest;
      const code = `kick-code-${crypto.randomBytes(4).toString('hex')}`;
      codes.set(code, { redirectUri: q.redirect_uri, challenge: q.code_challenge, scopes: (q.scope ?? '').split(' ').filter(Boolean) });
      const target = new URL(q.redirect_uri);
      target.searchParams.set('code', code);
      target.searchParams.set('state', q.state);
      return { status: 302, headers: { location: target.toString() } };
    },
    'POST /oauth/token': (req) => {
      const form = req.form;
      if (!form || form.client_id !== KICK_APP.clientId || form.client_secret !== KICK_APP.clientSecret) return invalidRequest;
      if (form.grant_type === 'authorization_code') {
        const grant = codes.get(form.code ?? '');
        if (!grant || grant.redirectUri !== form.redirect_uri || !form.code_verifier || s256(form.code_verifier) !== grant.challenge) return invalidRequest;
        codes.delete(form.code!);
        scopes = grant.scopes;
        revoked = false;
        return { body: issue() };
      }
      if (form.grant_type === 'refresh_token') {
        if (revoked || form.refresh_token !== refresh) return invalidRequest;
        return { body: issue() };
      }
      return invalidRequest;
    },
    'GET /public/v1/users': (req) => caller(req, 'user:read') ?? { body: { data: [KICK_USER], message: 'OK' } },
    'GET /public/v1/channels': (req) =>
      caller(req, 'channel:read') ?? {
        body: { data: [{ broadcaster_user_id: KICK_USER.user_id, slug: KICK_SLUG, channel_description: '', stream_title: '' }], message: 'OK' },
      },
    'POST /public/v1/chat': (req, f) => {
      const denied = caller(req, 'chat:write');
      if (denied) return denied;
      const body = req.json ?? {};
      if (body.type !== 'user' && body.type !== 'bot') return { status: 422, body: { message: 'The type field must be user or bot.', data: null } };
      if (body.type === 'user' && typeof body.broadcaster_user_id !== 'number') {
        return { status: 422, body: { message: 'The broadcaster user id field is required when type is user.', data: null } };
      }
      if (typeof body.content !== 'string' || body.content === '') return { status: 422, body: { message: 'The content field is required.', data: null } };
      if ([...body.content].length > 500) return { status: 422, body: { message: 'The content field must not be greater than 500 characters.', data: null } };
      if (body.type === 'user' && body.broadcaster_user_id !== KICK_USER.user_id) {
        return { status: 403, body: { message: 'You are not allowed to send messages in this chat.', data: null } };
      }
      const messages = (f as KickFake).messages;
      if (body.reply_to_message_id && !messages.some((m) => m.message_id === body.reply_to_message_id)) {
        return { status: 400, body: { message: 'The message to reply to was not found.', data: null } };
      }
      const message_id = crypto.randomUUID();
      if (drop) {
        drop = false;
        return { body: { data: { is_sent: false, message_id }, message: 'OK' } };
      }
      messages.push({ message_id, content: body.content, type: body.type, reply_to_message_id: body.reply_to_message_id, at: Date.now() });
      return { body: { data: { is_sent: true, message_id }, message: 'OK' } };
    },
  })) as KickFake;

  fake.messages = [];
  fake.accessToken = () => access;
  fake.refreshToken = () => refresh;
  fake.expireAccessToken = () => {
    expired = true;
  };
  fake.revokeAll = () => {
    revoked = true;
  };
  fake.dropNext = () => {
    drop = true;
  };
  // Store, then answer a 5xx (`storeThenFail`) on chat, in Kick's {data, message} shape.
  fake.create = {
    route: 'POST /public/v1/chat',
    serverError: (status) => ({ status, body: { message: STATUS_CODES[status] ?? 'Internal Server Error', data: null } }),
  };
  return fake;
}
