/**
 * Telegram channels and groups through the Bot API. The user brings their own
 * bot (token from @BotFather) and names the chat; the bot must be allowed to
 * post there. A bot token proves control of the bot, so nobody can post into a
 * chat through a bot that is not theirs.
 *
 * Content is sent as plain text (no parse_mode), so it is counted and shown
 * exactly as written. Media is uploaded as multipart from Herald's storage.
 */
import { z } from 'zod';
import type { NetworkAnswer, Verdict } from '../adapter-kit/http-failures.ts';
import { checkMediaSize, mediaBlob, mediaFilename } from '../adapter-kit/media-bytes.ts';
import { TEXT_COUNTINGS } from '../text-counting.ts';
import type { MediaRef, NetworkContext, Provider, PublishContext } from '../types.ts';
import { PublishError } from '../errors.ts';

const NETWORK = 'Telegram';
const MAX_TEXT = 4096;
const MAX_CAPTION = 1024;
/** Multipart upload limits of the public Bot API server. */
const MAX_PHOTO_BYTES = 10 * 1024 * 1024;
const MAX_FILE_BYTES = 50 * 1024 * 1024;

/** Telegram counts text in UTF-16 code units. */
const utf16Length = TEXT_COUNTINGS.utf16;

const credentials = z.object({
  botToken: z
    .string()
    .trim()
    .regex(/^\d+:[A-Za-z0-9_-]{20,}$/, 'must be a bot token from @BotFather, like 123456789:AA…')
    .describe('The bot token from @BotFather'),
  chat: z
    .string()
    .trim()
    .regex(/^(@[A-Za-z][A-Za-z0-9_]{3,31}|-?\d{1,20})$/, 'must be a public @username or a numeric chat id such as -1001234567890')
    .describe('The channel or group: @username, or its numeric id'),
});

interface TelegramConfig {
  botToken: string;
  chatId: string;
  /** Public chats have a username; their messages have t.me links. */
  username?: string | null;
  chatType: string;
}

interface TelegramAnswer {
  ok: boolean;
  result?: any;
  error_code?: number;
  description?: string;
  parameters?: { retry_after?: number; migrate_to_chat_id?: number };
}

interface Message {
  message_id: number;
}

/** One Bot API call. Reads (get*) are safe to repeat; anything else may have been sent. */
async function call<T = any>(ctx: NetworkContext, token: string, method: string, body: { json?: unknown; form?: FormData } = {}): Promise<T> {
  const answer = await ctx.http.json<TelegramAnswer>(`${ctx.urls.api}/bot${token}/${method}`, {
    method: 'POST',
    ...(body.form ? { body: body.form } : { json: body.json ?? {} }),
    timeoutMs: body.form ? 120_000 : 30_000,
    repeatable: method.startsWith('get'),
  });
  return answer.result as T;
}

/** Telegram's error fields: `error_code`, `description`, and `parameters` for flood waits and migrated groups. */
function readAnswer({ body, ok }: NetworkAnswer): Verdict | undefined {
  const answer = body as TelegramAnswer;
  if (ok && answer?.ok !== false) return undefined;
  if (typeof answer !== 'object' || answer === null) return {};
  const verdict: Verdict = { detail: answer.description ?? 'no description', code: answer.error_code };
  const seconds = answer.parameters?.retry_after;
  if (seconds !== undefined) verdict.retryAfterMs = seconds * 1000;
  const migrated = answer.parameters?.migrate_to_chat_id;
  if (migrated !== undefined) {
    return {
      ...verdict,
      kind: 'refused',
      detail: `${verdict.detail}. The group became a supergroup with id ${migrated}: connect the channel again with that id.`,
    };
  }
  return verdict;
}

/** A t.me link where the chat has one: public chats by username, private supergroups and channels for their members. */
function messageUrl(config: TelegramConfig, messageId: number): string | null {
  if (config.username) return `https://t.me/${config.username}/${messageId}`;
  if (config.chatId.startsWith('-100')) return `https://t.me/c/${config.chatId.slice(4)}/${messageId}`;
  return null;
}

function canPost(member: { status: string; can_post_messages?: boolean; can_send_messages?: boolean }, chatType: string): boolean {
  if (member.status === 'creator') return true;
  if (chatType === 'channel') return member.status === 'administrator' && member.can_post_messages === true;
  if (member.status === 'administrator' || member.status === 'member') return true;
  return member.status === 'restricted' && member.can_send_messages === true;
}

function mediaKind(media: MediaRef): 'photo' | 'video' {
  return media.mimeType.startsWith('video/') ? 'video' : 'photo';
}

function checkSizes(media: MediaRef[]): void {
  for (const m of media) checkMediaSize(m, mediaKind(m) === 'photo' ? MAX_PHOTO_BYTES : MAX_FILE_BYTES, NETWORK);
}

/** Adds the file part named `name` for `media`. */
async function attach(form: FormData, name: string, media: MediaRef): Promise<void> {
  const blob = await mediaBlob(media, mediaKind(media) === 'photo' ? MAX_PHOTO_BYTES : MAX_FILE_BYTES, NETWORK);
  form.append(name, blob, mediaFilename(media));
}

/** Video fields Telegram shows before it has processed the file. */
function videoFields(media: MediaRef): Record<string, string> {
  const fields: Record<string, string> = { supports_streaming: 'true' };
  if (media.width) fields.width = String(media.width);
  if (media.height) fields.height = String(media.height);
  if (media.duration) fields.duration = String(Math.round(media.duration));
  return fields;
}

function replyParameters(messageId: number | undefined): Record<string, unknown> | undefined {
  return messageId === undefined ? undefined : { message_id: messageId };
}

/** Sends the media (one message or an album) and returns the first message. */
async function sendMedia(
  ctx: PublishContext<TelegramConfig>,
  config: TelegramConfig,
  media: MediaRef[],
  caption: string | undefined,
  replyTo: number | undefined,
): Promise<Message> {
  const form = new FormData();
  form.append('chat_id', config.chatId);
  const reply = replyParameters(replyTo);
  if (reply) form.append('reply_parameters', JSON.stringify(reply));
  if (media.length === 1) {
    const [only] = media;
    const kind = mediaKind(only);
    if (caption) form.append('caption', caption);
    if (kind === 'video') for (const [k, v] of Object.entries(videoFields(only))) form.append(k, v);
    await attach(form, kind, only);
    return call<Message>(ctx, config.botToken, kind === 'video' ? 'sendVideo' : 'sendPhoto', { form });
  }
  const items = media.map((m, i) => ({
    type: mediaKind(m),
    media: `attach://file${i}`,
    ...(i === 0 && caption ? { caption } : {}),
    ...(mediaKind(m) === 'video' ? { supports_streaming: true } : {}),
  }));
  form.append('media', JSON.stringify(items));
  for (const [i, m] of media.entries()) await attach(form, `file${i}`, m);
  const messages = await call<Message[]>(ctx, config.botToken, 'sendMediaGroup', { form });
  return messages[0];
}

/**
 * The text after media that could not carry it. The media is already out, so a
 * failure here must not send the whole item again: one short wait on a flood
 * limit, then the post fails saying what was published.
 */
async function sendFollowUp(ctx: PublishContext<TelegramConfig>, config: TelegramConfig, text: string, mediaMessageId: number): Promise<void> {
  const send = () =>
    call<Message>(ctx, config.botToken, 'sendMessage', { json: { chat_id: config.chatId, text, reply_parameters: replyParameters(mediaMessageId) } });
  try {
    await send();
  } catch (err) {
    const failure = err instanceof PublishError ? err : new PublishError('unknown', String(err));
    try {
      if (failure.kind !== 'retryable' || (failure.retryAfterMs ?? 0) > 10_000) throw failure;
      await new Promise((resolve) => setTimeout(resolve, failure.retryAfterMs ?? 1000));
      await send();
    } catch (again) {
      throw new PublishError('refused', `the media was published (message ${mediaMessageId}) but the text after it was not: ${(again as Error).message}`);
    }
  }
}

export const telegram: Provider<TelegramConfig> = {
  identifier: 'telegram',
  name: NETWORK,
  auth: 'credentials',
  urls: { api: 'https://api.telegram.org' },
  readAnswer,
  credentials,
  settings: z.object({}),
  rules: {
    maxLength: MAX_TEXT,
    counting: 'utf16',
    // An album holds 2-10 photos and videos.
    maxMedia: 10,
    mediaKinds: ['image', 'video'],
    threads: true,
    media: { imageTypes: ['image/jpeg', 'image/png', 'image/webp'], maxImageBytes: MAX_PHOTO_BYTES, maxImageSide: 5000 },
  },
  // Telegram's FAQ: about 30 messages a second per bot overall (and about one a second per chat).
  // A bot sends at most 30 messages a second overall and 20 a minute to one group.
  pacing: { perWindow: { count: 30, windowMs: 1000 }, perChannel: { count: 20, windowMs: 60_000 } },

  async connect(input, ctx) {
    const { botToken, chat } = credentials.parse(input);
    const bot = await call<{ id: number; username?: string }>(ctx, botToken, 'getMe');
    const info = await call<{ id: number; type: string; title?: string; username?: string }>(ctx, botToken, 'getChat', { json: { chat_id: chat } });
    if (info.type === 'private') throw new PublishError('refused', `${chat} is a private conversation; connect a channel or a group`);
    const member = await call<{ status: string; can_post_messages?: boolean; can_send_messages?: boolean }>(ctx, botToken, 'getChatMember', {
      json: { chat_id: info.id, user_id: bot.id },
    });
    if (!canPost(member, info.type)) {
      const need = info.type === 'channel' ? 'an administrator allowed to post messages' : 'a member allowed to send messages';
      throw new PublishError('refused', `the bot @${bot.username ?? bot.id} is ${member.status} in "${info.title ?? chat}" but must be ${need}`);
    }
    const config: TelegramConfig = { botToken, chatId: String(info.id), username: info.username ?? null, chatType: info.type };
    return {
      externalId: String(info.id),
      name: info.title ?? info.username ?? String(info.id),
      profile: info.username ?? null,
      config: { ...config },
    };
  },

  async publish(ctx) {
    const config = ctx.channel.config;
    const { content, media } = ctx.item;
    const replyTo = ctx.replyTo ? Number(ctx.replyTo.releaseId) : undefined;
    if (replyTo !== undefined && !Number.isSafeInteger(replyTo))
      throw new PublishError('refused', `cannot reply to "${ctx.replyTo!.releaseId}": not a Telegram message id`);

    let first: Message;
    if (media.length === 0) {
      first = await call<Message>(ctx, config.botToken, 'sendMessage', {
        json: { chat_id: config.chatId, text: content, reply_parameters: replyParameters(replyTo) },
      });
    } else {
      checkSizes(media);
      const fits = utf16Length(content) <= MAX_CAPTION;
      first = await sendMedia(ctx, config, media, fits && content ? content : undefined, replyTo);
      // Too long for a caption: the text follows as a reply to the media.
      if (!fits) await sendFollowUp(ctx, config, content, first.message_id);
    }
    return { releaseId: String(first.message_id), releaseUrl: messageUrl(config, first.message_id) };
  },
};
