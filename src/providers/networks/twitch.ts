/**
 * Twitch (Helix): a post is a line in the connected user's own chat, sent as a
 * chat message or as a highlighted announcement (`messageType`). OAuth 2
 * authorization code with the client secret (Twitch takes no PKCE); access
 * tokens last about four hours and the refresh token rotates, so both are kept.
 * Every Helix call carries the bearer token and the app's Client-Id.
 *
 * Chat has no permalinks and no way to read a message back: an outcome that is
 * unknown cannot be looked up, so the user checks the chat (a repeated line
 * would be visible to everyone). A message the API took but chat dropped
 * (`is_sent: false`: AutoMod, slow mode, followers-only...) failed for good.
 */
import { z } from 'zod';
import { postSettings } from '../adapter-kit/post-settings.ts';
import type { NetworkAnswer, Verdict } from '../adapter-kit/http-failures.ts';
import type { NetworkRequest } from '../adapter-kit/network-http.ts';
import { authorizationUrl, refreshTokens, requestToken, tokenFields } from '../adapter-kit/oauth2-tokens.ts';
import type { NetworkContext, Provider, PublishChannel, PublishContext } from '../types.ts';
import { PublishError } from '../errors.ts';

const NETWORK = 'Twitch';
/** Sending as the user, and announcements (the broadcaster is a moderator of their own chat). */
const SCOPES = ['user:write:chat', 'user:read:chat', 'moderator:manage:announcements'];
const MAX_MESSAGE = 500;
/** Release ids of announcements, which Twitch gives no id: they cannot be replied to. */
const ANNOUNCEMENT = 'announcement:';

interface TwitchConfig {
  accessToken: string;
  refreshToken?: string;
  expiresAt?: number;
  userId: string;
  login: string;
}

const settings = z.object({
  messageType: z
    .enum(['message', 'announcement'])
    .default('message')
    .describe('A chat message, or an announcement highlighted in the chat (later thread items are sent as chat messages)'),
  announcementColor: z
    .enum(['primary', 'blue', 'green', 'orange', 'purple'])
    .default('primary')
    .describe('The colour of an announcement (primary is the channel’s accent colour)'),
});

/**
 * Helix's 429 says when its bucket refills in Ratelimit-Reset (epoch seconds);
 * a message chat dropped comes back 200 with is_sent false and the reason.
 */
function readAnswer({ status, headers, body }: NetworkAnswer): Verdict | undefined {
  if (status === 429) {
    const reset = Number(headers.get('ratelimit-reset'));
    if (!headers.get('retry-after') && Number.isFinite(reset) && reset > 0) return { kind: 'retryable', retryAfterMs: Math.max(0, reset * 1000 - Date.now()) };
    return undefined;
  }
  const sent = body?.data?.[0];
  if (status === 200 && sent && sent.is_sent === false) {
    const reason = sent.drop_reason;
    const why = reason?.message ? `${reason.message}${reason.code ? ` (${reason.code})` : ''}` : 'no reason given';
    return { kind: 'refused', detail: `the chat did not deliver the message: ${why}`, code: reason?.code };
  }
  return undefined;
}

function helix<T = any>(
  ctx: NetworkContext,
  channel: PublishChannel<TwitchConfig> | { config: TwitchConfig },
  path: string,
  request: NetworkRequest = {},
): Promise<T> {
  const config = channel.config;
  return ctx.http.json<T>(`${ctx.urls.api}${path}`, {
    ...request,
    headers: { authorization: `Bearer ${config.accessToken}`, 'client-id': ctx.app.CLIENT_ID, ...request.headers },
  });
}

function channelUrl(login: string): string {
  return `https://www.twitch.tv/${login}`;
}

export const twitch: Provider<TwitchConfig> = {
  identifier: 'twitch',
  name: NETWORK,
  auth: 'oauth2',
  urls: { api: 'https://api.twitch.tv/helix', auth: 'https://id.twitch.tv/oauth2' },
  appSettings: ['CLIENT_ID', 'CLIENT_SECRET'],
  readAnswer,
  settings,
  rules: {
    // Twitch refuses a longer message and cuts a longer announcement: both are held to it before acceptance.
    maxLength: MAX_MESSAGE,
    maxMedia: 0,
    mediaKinds: [],
    // Later items reply to the previous chat message (after an announcement, they are plain chat messages).
    threads: true,
  },
  // Chat lets a broadcaster send 100 lines in 30 s, others 20: the lower figure is safe for everyone.
  pacing: { perChannel: { count: 20, windowMs: 30_000 } },

  oauth: {
    async start({ urls, app, state, redirectUri }) {
      return { url: authorizationUrl(`${urls.auth}/authorize`, { clientId: app.CLIENT_ID, redirectUri, state, scopes: SCOPES }) };
    },

    async finish(ctx) {
      const { query, urls, app, redirectUri } = ctx;
      if (!query.code)
        throw new PublishError('refused', `Twitch sent no authorization code back${query.error ? ` (${query.error_description ?? query.error})` : ''}`);
      const token = await requestToken(ctx, `${urls.auth}/token`, {
        client_id: app.CLIENT_ID,
        client_secret: app.CLIENT_SECRET,
        code: query.code,
        grant_type: 'authorization_code',
        redirect_uri: redirectUri,
      });
      const granted: string[] = Array.isArray(token.scope) ? (token.scope as string[]) : String(token.scope ?? '').split(' ');
      const missing = SCOPES.filter((s) => s !== 'user:read:chat' && !granted.includes(s));
      if (missing.length > 0) throw new PublishError('refused', `Twitch did not grant ${missing.join(', ')}; connect again and allow sending chat messages`);
      const fields = tokenFields(token);
      const users = await helix<{ data: { id: string; login: string; display_name?: string; profile_image_url?: string }[] }>(
        ctx,
        { config: { accessToken: fields.accessToken!, userId: '', login: '' } },
        '/users',
      );
      const me = users?.data?.[0];
      if (!me?.id) throw new PublishError('refused', 'Twitch did not say which account was connected');
      const config = { ...fields, accessToken: fields.accessToken!, userId: me.id, login: me.login } satisfies TwitchConfig;
      return [{ externalId: me.id, name: me.display_name || me.login, picture: me.profile_image_url ?? null, profile: me.login, config: { ...config } }];
    },
  },

  /**
   * Twitch's developer policy: an app that keeps sessions validates its tokens on
   * start and hourly (GET /oauth2/validate, `Authorization: OAuth`); a 401 there
   * means the token was revoked or has lapsed.
   */
  tokenCheck: {
    everyMs: 60 * 60_000,
    async check(ctx) {
      await ctx.http.json(`${ctx.urls.auth}/validate`, { headers: { authorization: `OAuth ${ctx.channel.config.accessToken}` }, repeatable: true });
    },
  },

  /** Twitch rotates the refresh token: the new one replaces the old. A 400 "Invalid refresh token" means connecting again. */
  refresh: (ctx) => refreshTokens(ctx, `${ctx.urls.auth}/token`, NETWORK),

  async publish(ctx: PublishContext<TwitchConfig>) {
    const config = ctx.channel.config;
    const { messageType, announcementColor } = postSettings(settings, ctx.item, NETWORK);
    const releaseUrl = channelUrl(config.login);

    if (messageType === 'announcement' && ctx.item.threadIndex === 0) {
      // 204 without a body: the announcement has no id of its own, so the item's id stands for it.
      await helix(ctx, ctx.channel, '/chat/announcements', {
        method: 'POST',
        query: { broadcaster_id: config.userId, moderator_id: config.userId },
        json: { message: ctx.item.content, color: announcementColor },
      });
      return { releaseId: `${ANNOUNCEMENT}${ctx.idempotencyKey}`, releaseUrl };
    }

    const parent = ctx.replyTo?.releaseId;
    const answer = await helix<{ data: { message_id: string; is_sent: boolean }[] }>(ctx, ctx.channel, '/chat/messages', {
      method: 'POST',
      json: {
        broadcaster_id: config.userId,
        sender_id: config.userId,
        message: ctx.item.content,
        ...(parent && !parent.startsWith(ANNOUNCEMENT) ? { reply_parent_message_id: parent } : {}),
      },
    });
    const messageId = answer?.data?.[0]?.message_id;
    if (!messageId) throw new PublishError('unknown', 'Twitch took the message but did not say its id. Check the chat before retrying.');
    return { releaseId: messageId, releaseUrl };
  },
};
