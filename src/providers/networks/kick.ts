/**
 * Kick (public API v1): a post is a chat message in the connected user's own
 * channel. OAuth 2.1 on id.kick.com with PKCE (mandatory) and the client
 * secret; the access token expires and a refresh returns a new refresh token
 * too, which replaces the old.
 *
 * Chat has no permalinks and no way to read a message back, so an unknown
 * outcome cannot be looked up: the user checks the chat. A message the API took
 * but chat dropped (`is_sent: false`: slow mode, followers-only, banned words)
 * failed for good.
 */
import { z } from 'zod';
import type { NetworkAnswer, Verdict } from '../adapter-kit/http-failures.ts';
import type { NetworkRequest } from '../adapter-kit/network-http.ts';
import { authorizationUrl, refreshTokens, requestToken, tokenFields } from '../adapter-kit/oauth2-tokens.ts';
import type { NetworkContext, Provider, PublishContext } from '../types.ts';
import { PublishError } from '../errors.ts';

const NETWORK = 'Kick';
/** Sending chat as the user, reading who they are and their channel's slug (for the link). */
const SCOPES = ['user:read', 'channel:read', 'chat:write'];
const MAX_MESSAGE = 500;

interface KickConfig {
  accessToken: string;
  refreshToken?: string;
  expiresAt?: number;
  userId: number;
  slug: string;
}

/** A message chat dropped comes back 200 with data.is_sent false. */
function readAnswer({ status, url, body }: NetworkAnswer): Verdict | undefined {
  if (status !== 200 || !url.endsWith('/public/v1/chat')) return undefined;
  if (body?.data?.is_sent === false) {
    return {
      kind: 'refused',
      detail:
        'the chat did not deliver the message' +
        (body.message && body.message !== 'OK' ? `: ${body.message}` : ' (slow mode, followers-only or a blocked word)'),
    };
  }
  return undefined;
}

function api<T = any>(ctx: NetworkContext, accessToken: string, path: string, request: NetworkRequest = {}): Promise<T> {
  return ctx.http.json<T>(`${ctx.urls.api}${path}`, {
    ...request,
    headers: { authorization: `Bearer ${accessToken}`, accept: 'application/json', ...request.headers },
  });
}

export const kick: Provider<KickConfig> = {
  identifier: 'kick',
  name: NETWORK,
  auth: 'oauth2',
  urls: { api: 'https://api.kick.com', auth: 'https://id.kick.com' },
  appSettings: ['CLIENT_ID', 'CLIENT_SECRET'],
  readAnswer,
  settings: z.object({}),
  rules: {
    maxLength: MAX_MESSAGE,
    maxMedia: 0,
    mediaKinds: [],
    // Later items reply to the previous message (reply_to_message_id).
    threads: true,
  },
  pacing: { concurrent: 3 },

  oauth: {
    pkce: true,
    async start({ urls, app, state, redirectUri, codeChallenge }) {
      return { url: authorizationUrl(`${urls.auth}/oauth/authorize`, { clientId: app.CLIENT_ID, redirectUri, state, scopes: SCOPES, codeChallenge }) };
    },

    async finish(ctx) {
      const { query, urls, app, redirectUri, codeVerifier } = ctx;
      if (!query.code)
        throw new PublishError('refused', `Kick sent no authorization code back${query.error ? ` (${query.error_description ?? query.error})` : ''}`);
      const token = await requestToken(ctx, `${urls.auth}/oauth/token`, {
        grant_type: 'authorization_code',
        code: query.code,
        client_id: app.CLIENT_ID,
        client_secret: app.CLIENT_SECRET,
        redirect_uri: redirectUri,
        code_verifier: codeVerifier,
      });
      const fields = tokenFields(token);
      const accessToken = fields.accessToken!;
      const users = await api<{ data: { user_id: number; name: string; profile_picture?: string }[] }>(ctx, accessToken, '/public/v1/users');
      const me = users?.data?.[0];
      if (!me?.user_id) throw new PublishError('refused', 'Kick did not say which account was connected');
      const channels = await api<{ data: { broadcaster_user_id: number; slug: string }[] }>(ctx, accessToken, '/public/v1/channels');
      const own = channels?.data?.find((c) => c.broadcaster_user_id === me.user_id) ?? channels?.data?.[0];
      const slug = own?.slug ?? me.name;
      const config = { ...fields, accessToken, userId: me.user_id, slug } satisfies KickConfig;
      return [{ externalId: String(me.user_id), name: me.name, picture: me.profile_picture || null, profile: slug, config: { ...config } }];
    },
  },

  /** Kick returns a new refresh token with every refresh; a 400 "Invalid request" means connecting again. */
  refresh: (ctx) => refreshTokens(ctx, `${ctx.urls.auth}/oauth/token`, NETWORK),

  async publish(ctx: PublishContext<KickConfig>) {
    const config = ctx.channel.config;
    const answer = await api<{ data: { is_sent: boolean; message_id: string } }>(ctx, config.accessToken, '/public/v1/chat', {
      method: 'POST',
      json: {
        type: 'user',
        broadcaster_user_id: Number(config.userId),
        content: ctx.item.content,
        ...(ctx.replyTo ? { reply_to_message_id: ctx.replyTo.releaseId } : {}),
      },
    });
    const messageId = answer?.data?.message_id;
    if (!messageId) throw new PublishError('unknown', 'Kick took the message but did not say its id. Check the chat before retrying.');
    return { releaseId: messageId, releaseUrl: `https://kick.com/${config.slug}` };
  },
};
