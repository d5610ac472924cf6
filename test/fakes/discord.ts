/**
 * A local Discord: the OAuth 2 bot install (authorize → redirect with code and
 * guild_id; POST /api/v10/oauth2/token with HTTP Basic, form only) and the bot
 * REST API under /api/v10 (Authorization: Bot <token>): guilds, channels and
 * Create Message with JSON or multipart payload_json + files[n], nonces,
 * replies, and Discord's error bodies {code, message, errors}. Its create
 * endpoint is Create Message (`storeThenFail`).
 */
import { STATUS_CODES } from 'node:http';
import { startNetworkFake, type FakeAnswer, type NetworkFake, type RecordedRequest } from './network-fake.ts';

export interface FakeGuild {
  id: string;
  name: string;
  icon: string | null;
  channels: { id: string; name: string; type: number; position: number /** The channel's permissions hide it from the bot. */; hidden?: boolean }[];
  /** The bot was removed from the server (kicked, or the server owner took it out). */
  botRemoved?: boolean;
}

export interface StoredDiscordMessage {
  id: string;
  channel_id: string;
  content: string;
  nonce?: string;
  reference?: string;
  /** Whether @everyone or @here notified the channel (Discord's mention_everyone). */
  mentionEveryone: boolean;
  attachments: { id: string; filename: string; data: Buffer; content_type: string }[];
}

export interface DiscordFake extends NetworkFake {
  app: { clientId: string; clientSecret: string; botToken: string };
  guilds: FakeGuild[];
  messages: StoredDiscordMessage[];
  /** The guild the user picks on the consent screen. */
  installInto: string;
  /** A new bot token (the old one now gets 401), as "Reset Token" in the developer portal. */
  resetBotToken(): string;
}

const error = (status: number, code: number, message: string, errors?: unknown): FakeAnswer => ({
  status,
  body: { code, message, ...(errors ? { errors } : {}) },
});

let snowflake = 1_200_000_000_000_000_000n;
const nextId = () => String(snowflake++);

export async function startDiscordFake(): Promise<DiscordFake> {
  const app = { clientId: '1100000000000000001', clientSecret: 'discord-secret', botToken: 'MTEwMDAwMDAwMDAwMDAwMDAwMQ.bot.token' };
  const guilds: FakeGuild[] = [];
  const messages: StoredDiscordMessage[] = [];
  const codes = new Map<string, { guildId: string; redirectUri: string }>();

  const isBot = (req: RecordedRequest) => req.headers.authorization === `Bot ${app.botToken}`;
  const unauthorized = error(401, 0, '401: Unauthorized');
  const channelById = (id: string) => {
    for (const g of guilds) {
      const c = g.channels.find((ch) => ch.id === id);
      if (c) return { ...c, guild_id: g.id, botRemoved: g.botRemoved };
    }
    return undefined;
  };
  // What Discord answers a bot for a server it left, or a channel it may not view.
  const missingAccess = error(403, 50001, 'Missing Access');
  const cannotSee = (channel: { hidden?: boolean; botRemoved?: boolean }) => channel.hidden || channel.botRemoved;

  const fake = (await startNetworkFake({
    // The consent screen: the user picks a server and clicks "Authorize".
    'GET /oauth2/authorize': (req, f) => {
      f.state.authorize = req.query;
      const code = `code-${nextId()}`;
      codes.set(code, { guildId: (f as DiscordFake).installInto, redirectUri: req.query.redirect_uri });
      const target = new URL(req.query.redirect_uri);
      target.search = new URLSearchParams({
        code,
        state: req.query.state,
        guild_id: (f as DiscordFake).installInto,
        permissions: req.query.permissions,
      }).toString();
      return { status: 302, headers: { location: target.toString() } };
    },
    'POST /api/v10/oauth2/token': (req) => {
      const basic = Buffer.from(`${app.clientId}:${app.clientSecret}`).toString('base64');
      if (req.headers.authorization !== `Basic ${basic}`) return { status: 401, body: { error: 'invalid_client' } };
      if (!req.form) return { status: 400, body: { error: 'unsupported_grant_type', error_description: 'form-urlencoded only' } };
      const grant = codes.get(req.form.code);
      if (req.form.grant_type !== 'authorization_code' || !grant || grant.redirectUri !== req.form.redirect_uri) {
        return { status: 400, body: { error: 'invalid_grant', error_description: 'Invalid "code" in request.' } };
      }
      codes.delete(req.form.code);
      const guild = guilds.find((g) => g.id === grant.guildId)!;
      return {
        body: {
          access_token: 'user-access',
          token_type: 'Bearer',
          expires_in: 604800,
          refresh_token: 'user-refresh',
          scope: 'bot',
          guild: { id: guild.id, name: guild.name, icon: guild.icon },
        },
      };
    },
    'GET /api/v10/guilds/:id': (req) => {
      if (!isBot(req)) return unauthorized;
      const guild = guilds.find((g) => g.id === req.params.id);
      if (!guild) return error(404, 10004, 'Unknown Guild');
      return guild.botRemoved ? missingAccess : { body: { id: guild.id, name: guild.name, icon: guild.icon } };
    },
    'GET /api/v10/guilds/:id/channels': (req) => {
      if (!isBot(req)) return unauthorized;
      const guild = guilds.find((g) => g.id === req.params.id);
      if (!guild) return error(404, 10004, 'Unknown Guild');
      if (guild.botRemoved) return missingAccess;
      return { body: guild.channels.filter((c) => !c.hidden).map(({ hidden: _, ...c }) => ({ ...c, guild_id: guild.id })) };
    },
    'GET /api/v10/channels/:id': (req) => {
      if (!isBot(req)) return unauthorized;
      const channel = channelById(req.params.id);
      if (!channel) return error(404, 10003, 'Unknown Channel');
      if (cannotSee(channel)) return missingAccess;
      const { hidden: _hidden, botRemoved: _removed, ...shown } = channel;
      return { body: shown };
    },
    'POST /api/v10/channels/:id/messages': (req) => {
      if (!isBot(req)) return unauthorized;
      const channel = channelById(req.params.id);
      if (!channel) return error(404, 10003, 'Unknown Channel');
      if (cannotSee(channel)) return missingAccess;
      const files = req.multipart?.files.filter((f) => /^files\[\d+\]$/.test(f.name)) ?? [];
      const payloadPart = req.multipart?.files.find((f) => f.name === 'payload_json')?.data.toString('utf8') ?? req.multipart?.fields.payload_json;
      const payload = req.multipart ? JSON.parse(payloadPart ?? '{}') : req.json;
      if (!payload) return error(400, 50109, 'The request body contains invalid JSON.');
      const content = String(payload.content ?? '');
      if (content.length > 2000)
        return error(400, 50035, 'Invalid Form Body', {
          content: { _errors: [{ code: 'BASE_TYPE_MAX_LENGTH', message: 'Must be 2000 or fewer in length.' }] },
        });
      if (!content && files.length === 0) return error(400, 50006, 'Cannot send an empty message');
      const reference = payload.message_reference?.message_id;
      if (reference && !messages.some((m) => m.id === reference && m.channel_id === channel.id)) {
        return error(400, 50035, 'Invalid Form Body', {
          message_reference: { _errors: [{ code: 'MESSAGE_REFERENCE_UNKNOWN_MESSAGE', message: 'Unknown message' }] },
        });
      }
      if (payload.enforce_nonce && payload.nonce) {
        const repeat = messages.find((m) => m.nonce === payload.nonce);
        if (repeat) return { body: view(repeat) };
      }
      const attachments = (payload.attachments ?? []).map((a: { id: number; filename: string }) => {
        const file = files.find((f) => f.name === `files[${a.id}]`);
        return file && { id: nextId(), filename: a.filename, data: file.data, content_type: file.type };
      });
      if (attachments.some((a: unknown) => !a) || attachments.length !== files.length)
        return error(400, 50035, 'Invalid Form Body', { attachments: { _errors: [{ code: 'ATTACHMENT_NOT_FOUND', message: 'Attachment not found' }] } });
      // Without allowed_mentions Discord notifies whoever the text names, @everyone included; with it, only the kinds in parse.
      const everyoneAllowed = payload.allowed_mentions === undefined || (payload.allowed_mentions.parse ?? []).includes('everyone');
      const mentionEveryone = /@(everyone|here)\b/.test(content) && everyoneAllowed;
      const message: StoredDiscordMessage = { id: nextId(), channel_id: channel.id, content, nonce: payload.nonce, reference, attachments, mentionEveryone };
      messages.push(message);
      return { body: view(message) };
    },
  })) as DiscordFake;

  function view(m: StoredDiscordMessage) {
    return {
      id: m.id,
      channel_id: m.channel_id,
      content: m.content,
      type: m.reference ? 19 : 0,
      mention_everyone: m.mentionEveryone,
      timestamp: new Date().toISOString(),
      attachments: m.attachments.map((a) => ({
        id: a.id,
        filename: a.filename,
        size: a.data.length,
        content_type: a.content_type,
        url: `https://cdn.discordapp.com/attachments/${m.channel_id}/${a.id}/${a.filename}`,
      })),
      ...(m.reference ? { message_reference: { message_id: m.reference, channel_id: m.channel_id } } : {}),
      ...(m.nonce ? { nonce: m.nonce } : {}),
    };
  }

  fake.app = app;
  // Store, then answer a 5xx (`storeThenFail`) on Create Message, as Discord words one: {"message": "500: Internal Server Error", "code": 0}.
  fake.create = {
    route: 'POST /api/v10/channels/:id/messages',
    serverError: (status) => error(status, 0, `${status}: ${STATUS_CODES[status] ?? 'Internal Server Error'}`),
  };
  fake.guilds = guilds;
  fake.messages = messages;
  fake.installInto = '';
  fake.resetBotToken = () => {
    app.botToken = `${app.botToken}-reset`;
    return app.botToken;
  };
  return fake;
}
