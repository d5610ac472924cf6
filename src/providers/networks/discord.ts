/**
 * Discord server channels. The server runs one Discord app whose bot posts;
 * connecting a channel is the OAuth 2 bot install flow (the user adds the bot to
 * their server, the code grant tells Herald which server). Each post names the
 * text channel in its `channel` setting; the `channels` tool lists them.
 *
 * The bot is shared by every account of this Herald, so a post's channel is
 * checked to belong to the connected server before anything is sent.
 */
import crypto from 'node:crypto';
import { z } from 'zod';
import type { NetworkAnswer, Verdict } from '../adapter-kit/http-failures.ts';
import { checkMediaSize, mediaBlob, mediaFilename } from '../adapter-kit/media-bytes.ts';
import type { NetworkContext, Provider, PublishContext } from '../types.ts';
import { PublishError } from '../errors.ts';
import { authorizationUrl } from '../adapter-kit/oauth2-tokens.ts';

const NETWORK = 'Discord';
/** Per-file limit without server boosts, and the whole request's limit. */
const MAX_FILE_BYTES = 10 * 1024 * 1024;
const MAX_REQUEST_BYTES = 25 * 1024 * 1024;
/** VIEW_CHANNEL, SEND_MESSAGES, EMBED_LINKS, ATTACH_FILES, READ_MESSAGE_HISTORY (replies). */
const PERMISSIONS = (1n << 10n) | (1n << 11n) | (1n << 14n) | (1n << 15n) | (1n << 16n);
/** Channel types a message can be posted to directly: GUILD_TEXT, GUILD_ANNOUNCEMENT. */
const TEXT_CHANNEL_TYPES = new Set([0, 5]);
/** Error codes meaning the bot is no longer in the server, or cannot see one channel (the server itself tells which). */
const NO_ACCESS = new Set([50001, 10004]);

interface DiscordConfig {
  guildId: string;
}

interface DiscordError {
  code?: number;
  message?: string;
  retry_after?: number;
  errors?: unknown;
}

/** The first leaf message of Discord's nested `errors` object ("content: Must be 2000 or fewer in length."). */
function firstFieldError(errors: unknown, path: string[] = []): string | undefined {
  if (!errors || typeof errors !== 'object') return undefined;
  const e = errors as Record<string, any>;
  if (Array.isArray(e._errors) && e._errors[0]?.message) return `${path.join('.') || 'body'}: ${e._errors[0].message}`;
  for (const [key, value] of Object.entries(e)) {
    const found = firstFieldError(value, [...path, key]);
    if (found) return found;
  }
  return undefined;
}

/** Discord's error body: a code, a message, per-field errors, and a precise retry_after on 429. */
function readAnswer({ body, ok, status }: NetworkAnswer): Verdict | undefined {
  if (ok) return undefined;
  const error: DiscordError = typeof body === 'object' && body !== null ? body : { message: String(body).slice(0, 300) };
  const text = [error.message, firstFieldError(error.errors)].filter(Boolean).join(' — ');
  // Without Discord's own fields (an OAuth error), the common rules find the message.
  const detail = text ? `${error.code !== undefined ? `(code ${error.code}) ` : ''}${text}` : undefined;
  // The body's retry_after (seconds, with decimals) is the precise one; the header is rounded.
  const retryAfterMs = status === 429 && typeof error.retry_after === 'number' ? Math.ceil(error.retry_after * 1000) : undefined;
  // Missing Access or Unknown Guild: reconnect, unless the server still answers (see channelAccess).
  if (status === 403 && error.code !== undefined && NO_ACCESS.has(error.code))
    return { kind: 'auth', detail: `${detail}. Add the Herald bot to the server again.`, code: error.code };
  return { detail, code: error.code, retryAfterMs };
}

function noAccess(err: unknown): boolean {
  return err instanceof PublishError && err.kind === 'auth' && NO_ACCESS.has(err.code as number);
}

/** A bot call; JSON answer, failures classified by Discord's error body. */
async function bot<T = any>(ctx: NetworkContext, path: string, request: { method?: string; json?: unknown; body?: FormData } = {}): Promise<T> {
  return ctx.http.json<T>(`${ctx.urls.api}${path}`, {
    method: request.method ?? (request.json !== undefined || request.body ? 'POST' : 'GET'),
    headers: { authorization: `Bot ${ctx.app.BOT_TOKEN}`, 'user-agent': 'DiscordBot (https://github.com/herald-social/herald, 1)' },
    ...(request.json !== undefined ? { json: request.json } : {}),
    ...(request.body ? { body: request.body, timeoutMs: 120_000 } : {}),
  });
}

/** Discord keeps a nonce for a few minutes and, with enforce_nonce, returns the first message for a repeat. */
function nonce(key: string): string {
  return crypto.createHash('sha256').update(key).digest('base64url').slice(0, 25);
}

/**
 * Runs a call on one channel. Discord answers 50001 Missing Access both when the
 * bot left the server (reconnect) and when a channel's permissions hide it from
 * the bot (only this channel is wrong): a look at the server tells them apart.
 */
async function channelAccess<T>(ctx: NetworkContext, config: DiscordConfig, channelId: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (!noAccess(err)) throw err;
    try {
      await bot(ctx, `/guilds/${config.guildId}`);
    } catch (probe) {
      throw noAccess(probe) ? err : probe;
    }
    throw new PublishError(
      'refused',
      `The Herald bot is in the server but cannot use the channel ${channelId} (Discord: Missing Access): ` +
        'give it View Channel and Send Messages there, or pick another channel',
    );
  }
}

async function checkChannel(ctx: PublishContext<DiscordConfig>, config: DiscordConfig, channelId: string): Promise<void> {
  const channel = await bot<{ id: string; guild_id?: string; type: number; name?: string }>(ctx, `/channels/${channelId}`);
  if (channel.guild_id !== config.guildId) throw new PublishError('refused', `channel ${channelId} is not in the connected Discord server`);
  if (!TEXT_CHANNEL_TYPES.has(channel.type)) throw new PublishError('refused', `#${channel.name ?? channelId} is not a text or announcement channel`);
}

const settings = z.object({
  channel: z
    .string()
    .regex(/^\d{15,25}$/, 'must be a Discord channel id (the "channels" tool lists them)')
    .describe('The text channel to post in'),
  mentionEveryone: z.boolean().optional().describe('Let @everyone and @here in the text notify the whole channel (off: they show as text)'),
});

export const discord: Provider<DiscordConfig> = {
  identifier: 'discord',
  name: NETWORK,
  auth: 'oauth2',
  urls: { api: 'https://discord.com/api/v10', authorize: 'https://discord.com/oauth2/authorize' },
  readAnswer,
  appSettings: ['CLIENT_ID', 'CLIENT_SECRET', 'BOT_TOKEN'],
  settings,
  rules: {
    maxLength: 2000,
    maxMedia: 10,
    mediaKinds: ['image', 'video'],
    threads: true,
    media: { imageTypes: ['image/jpeg', 'image/png', 'image/gif', 'image/webp'], maxImageBytes: MAX_FILE_BYTES },
  },
  // One bot for the whole server: Discord's global limit is 50 requests a second per bot (publishing makes two).
  pacing: { perWindow: { count: 25, windowMs: 1000 }, perChannel: { count: 5, windowMs: 5_000 } },

  oauth: {
    async start({ urls, app, state, redirectUri }) {
      return {
        url: authorizationUrl(urls.authorize, { clientId: app.CLIENT_ID, redirectUri, state, scopes: ['bot'], extra: { permissions: PERMISSIONS.toString() } }),
      };
    },

    async finish(ctx) {
      const { query, redirectUri, app, urls, http } = ctx;
      if (!query.code) throw new PublishError('refused', 'Discord sent no authorization code back');
      const basic = Buffer.from(`${app.CLIENT_ID}:${app.CLIENT_SECRET}`).toString('base64');
      const token = await http.json<{ guild?: { id: string; name: string } }>(`${urls.api}/oauth2/token`, {
        method: 'POST',
        headers: { authorization: `Basic ${basic}` },
        form: { grant_type: 'authorization_code', code: query.code, redirect_uri: redirectUri },
      });
      // The user's own token is not needed: the bot posts. Only the server it was added to matters.
      const guildId = token.guild?.id;
      if (!guildId) throw new PublishError('refused', 'Discord did not say which server the bot was added to; add it to a server');
      const guild = await bot<{ id: string; name: string; icon?: string | null }>(ctx, `/guilds/${guildId}`);
      const config: DiscordConfig = { guildId: guild.id };
      return [
        {
          externalId: guild.id,
          name: guild.name,
          picture: guild.icon ? `https://cdn.discordapp.com/icons/${guild.id}/${guild.icon}.png` : null,
          profile: guild.name,
          config: { ...config },
        },
      ];
    },
  },

  // With enforce_nonce Discord returns the first message for a repeated nonce, for "a few minutes": three are assumed.
  repeatDropped: { by: 'Discord returns the first message for a repeated nonce', withinMs: 3 * 60_000 },

  async publish(ctx) {
    const config = ctx.channel.config;
    const channelId = String(ctx.item.settings.channel ?? '');
    if (!settings.shape.channel.safeParse(channelId).success) throw new PublishError('refused', 'settings.channel must be a Discord channel id');
    await channelAccess(ctx, config, channelId, () => checkChannel(ctx, config, channelId));

    const { content, media } = ctx.item;
    const payload: Record<string, unknown> = {
      content,
      nonce: nonce(ctx.idempotencyKey),
      enforce_nonce: true,
      // A scheduled post pings people it names and roles, but the whole channel only when asked.
      allowed_mentions: { parse: ctx.item.settings.mentionEveryone === true ? ['users', 'roles', 'everyone'] : ['users', 'roles'] },
    };
    if (ctx.replyTo) payload.message_reference = { message_id: ctx.replyTo.releaseId, channel_id: channelId, fail_if_not_exists: true };

    let message: { id: string; channel_id: string };
    if (media.length === 0) {
      message = await channelAccess(ctx, config, channelId, () => bot(ctx, `/channels/${channelId}/messages`, { json: payload }));
    } else {
      for (const m of media) checkMediaSize(m, MAX_FILE_BYTES, NETWORK);
      const total = media.reduce((sum, m) => sum + m.size, 0);
      if (total > MAX_REQUEST_BYTES)
        throw new PublishError('refused', `${NETWORK} takes at most 25 MB of files per message; these are ${Math.ceil(total / 1024 / 1024)} MB`);
      payload.attachments = media.map((m, i) => ({ id: i, filename: mediaFilename(m) }));
      const form = new FormData();
      form.append('payload_json', new Blob([JSON.stringify(payload)], { type: 'application/json' }));
      for (const [i, m] of media.entries()) form.append(`files[${i}]`, await mediaBlob(m, MAX_FILE_BYTES, NETWORK), mediaFilename(m));
      message = await channelAccess(ctx, config, channelId, () => bot(ctx, `/channels/${channelId}/messages`, { body: form }));
    }
    return { releaseId: message.id, releaseUrl: `https://discord.com/channels/${config.guildId}/${message.channel_id ?? channelId}/${message.id}` };
  },

  tools: {
    channels: {
      description: "List the connected server's text and announcement channels (id and name) for the `channel` setting.",
      async run(ctx) {
        const { guildId } = ctx.channel.config;
        const channels = await bot<{ id: string; name: string; type: number; position?: number }[]>(ctx, `/guilds/${guildId}/channels`);
        return channels
          .filter((c) => TEXT_CHANNEL_TYPES.has(c.type))
          .sort((a, b) => (a.position ?? 0) - (b.position ?? 0))
          .map((c) => ({ id: c.id, name: c.name }));
      },
    },
  },
};
