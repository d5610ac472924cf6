/**
 * A local Telegram Bot API server: /bot<token>/<method>, answers in the
 * {ok, result} / {ok:false, error_code, description, parameters} envelope, with
 * the checks the Bot API documents (unknown token → 401, unknown chat, text and
 * caption lengths, replies to messages that exist, albums of 2-10 attached files).
 * Its create endpoint is sendMessage (`storeThenFail`).
 */
import { STATUS_CODES } from 'node:http';
import { startNetworkFake, type FakeAnswer, type NetworkFake, type RecordedRequest } from './network-fake.ts';

export interface FakeChat {
  id: number;
  type: 'channel' | 'supergroup' | 'group';
  title: string;
  username?: string;
  /** The bot's membership: status and the channel right to post. */
  bot: { status: string; can_post_messages?: boolean };
}

export interface StoredMessage {
  message_id: number;
  chatId: number;
  text?: string;
  caption?: string;
  kind: 'text' | 'photo' | 'video';
  replyTo?: number;
  media_group_id?: string;
  /** Uploaded bytes, for media. */
  data?: Buffer;
}

export interface TelegramFake extends NetworkFake {
  bot: { id: number; username: string; token: string };
  messages: StoredMessage[];
  addChat(chat: FakeChat): void;
  /** Revokes the bot token, as /revoke at @BotFather does. */
  revokeToken(): void;
}

export const ok = (result: unknown): FakeAnswer => ({ body: { ok: true, result } });
export const fail = (code: number, description: string, parameters?: Record<string, unknown>): FakeAnswer => ({
  status: code,
  body: { ok: false, error_code: code, description, ...(parameters ? { parameters } : {}) },
});

/** Bot API parameters arrive as query, JSON, form or multipart fields; nested ones as JSON strings in forms. */
function params(req: RecordedRequest): Record<string, any> {
  const raw: Record<string, any> = { ...req.query, ...(req.form ?? {}), ...(req.multipart?.fields ?? {}), ...(req.json ?? {}) };
  for (const key of ['reply_parameters', 'media']) if (typeof raw[key] === 'string') raw[key] = JSON.parse(raw[key]);
  return raw;
}

export async function startTelegramFake(): Promise<TelegramFake> {
  const bot = { id: 7000001, username: 'herald_test_bot', token: '7000001:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw' };
  const chats = new Map<string, FakeChat>();
  const messages: StoredMessage[] = [];
  let nextId = 100;
  let revoked = false;

  const authorized = (req: RecordedRequest) => !revoked && req.params.token === bot.token;
  const chatOf = (p: Record<string, any>) => chats.get(String(p.chat_id));
  const publicChat = (c: FakeChat) => ({ id: c.id, type: c.type, title: c.title, ...(c.username ? { username: c.username } : {}) });

  /** The checks every send method shares; an answer when one fails. */
  function refuse(req: RecordedRequest, p: Record<string, any>): FakeAnswer | undefined {
    if (!authorized(req)) return fail(401, 'Unauthorized');
    const chat = chatOf(p);
    if (!chat) return fail(400, 'Bad Request: chat not found');
    if (chat.type === 'channel' && !(chat.bot.status === 'administrator' && chat.bot.can_post_messages))
      return fail(400, 'Bad Request: need administrator rights in the channel chat');
    if (chat.bot.status === 'left' || chat.bot.status === 'kicked') return fail(403, `Forbidden: bot is not a member of the ${chat.type} chat`);
    const reply = p.reply_parameters?.message_id;
    if (reply !== undefined && !messages.some((m) => m.chatId === chat.id && m.message_id === Number(reply)))
      return fail(400, 'Bad Request: message to be replied not found');
    return undefined;
  }

  function store(m: Omit<StoredMessage, 'message_id'>) {
    const message = { ...m, message_id: nextId++ };
    messages.push(message);
    return message;
  }

  function view(m: StoredMessage) {
    const chat = [...chats.values()].find((c) => c.id === m.chatId)!;
    return {
      message_id: m.message_id,
      chat: publicChat(chat),
      date: Math.floor(Date.now() / 1000),
      ...(m.text !== undefined ? { text: m.text } : {}),
      ...(m.caption !== undefined ? { caption: m.caption } : {}),
      ...(m.kind === 'photo' ? { photo: [{ file_id: `photo-${m.message_id}`, file_unique_id: `u${m.message_id}`, width: 1, height: 1 }] } : {}),
      ...(m.kind === 'video' ? { video: { file_id: `video-${m.message_id}`, file_unique_id: `v${m.message_id}`, width: 1, height: 1, duration: 1 } } : {}),
      ...(m.media_group_id ? { media_group_id: m.media_group_id } : {}),
      ...(m.replyTo ? { reply_to_message: { message_id: m.replyTo, chat: publicChat(chat), date: 0 } } : {}),
    };
  }

  const sendOne = (kind: 'photo' | 'video') => (req: RecordedRequest) => {
    const p = params(req);
    const refused = refuse(req, p);
    if (refused) return refused;
    const file = req.multipart?.files.find((f) => f.name === kind);
    if (!file && typeof p[kind] !== 'string') return fail(400, `Bad Request: there is no ${kind} in the request`);
    if ((p.caption ?? '').length > 1024) return fail(400, 'Bad Request: message caption is too long');
    const message = store({ chatId: chatOf(p)!.id, caption: p.caption, kind, replyTo: p.reply_parameters?.message_id, data: file?.data });
    return ok(view(message));
  };

  const fake = (await startNetworkFake({
    'POST /bot:token/getMe': (req) =>
      authorized(req) ? ok({ id: bot.id, is_bot: true, first_name: 'Herald test', username: bot.username, can_join_groups: true }) : fail(401, 'Unauthorized'),
    'POST /bot:token/getChat': (req) => {
      if (!authorized(req)) return fail(401, 'Unauthorized');
      const chat = chatOf(params(req));
      return chat ? ok(publicChat(chat)) : fail(400, 'Bad Request: chat not found');
    },
    'POST /bot:token/getChatMember': (req) => {
      if (!authorized(req)) return fail(401, 'Unauthorized');
      const p = params(req);
      const chat = chatOf(p);
      if (!chat) return fail(400, 'Bad Request: chat not found');
      if (Number(p.user_id) !== bot.id) return fail(400, 'Bad Request: user not found');
      return ok({ user: { id: bot.id, is_bot: true, first_name: 'Herald test' }, ...chat.bot });
    },
    'POST /bot:token/sendMessage': (req) => {
      const p = params(req);
      const refused = refuse(req, p);
      if (refused) return refused;
      const text = String(p.text ?? '');
      if (text.length === 0) return fail(400, 'Bad Request: message text is empty');
      if (text.length > 4096) return fail(400, 'Bad Request: message is too long');
      return ok(view(store({ chatId: chatOf(p)!.id, text, kind: 'text', replyTo: p.reply_parameters?.message_id })));
    },
    'POST /bot:token/sendPhoto': sendOne('photo'),
    'POST /bot:token/sendVideo': sendOne('video'),
    'POST /bot:token/sendMediaGroup': (req) => {
      const p = params(req);
      const refused = refuse(req, p);
      if (refused) return refused;
      const items = p.media as { type: string; media: string; caption?: string }[];
      if (!Array.isArray(items) || items.length < 2 || items.length > 10) return fail(400, 'Bad Request: wrong number of media in the album: must be 2-10');
      const group = `group-${nextId}`;
      const stored: StoredMessage[] = [];
      for (const item of items) {
        const name = /^attach:\/\/(.+)$/.exec(item.media)?.[1];
        const file = name ? req.multipart?.files.find((f) => f.name === name) : undefined;
        if (name && !file) return fail(400, `Bad Request: file "${name}" must be uploaded`);
        if ((item.caption ?? '').length > 1024) return fail(400, 'Bad Request: message caption is too long');
        stored.push({
          message_id: 0,
          chatId: chatOf(p)!.id,
          caption: item.caption,
          kind: item.type === 'video' ? 'video' : 'photo',
          replyTo: p.reply_parameters?.message_id,
          media_group_id: group,
          data: file?.data,
        });
      }
      return ok(stored.map((m) => view(store(m))));
    },
  })) as TelegramFake;

  fake.bot = bot;
  fake.messages = messages;
  // Store, then answer a 5xx (`storeThenFail`): the Bot API's envelope with the status's own words.
  fake.create = { route: 'POST /bot:token/sendMessage', serverError: (status) => fail(status, STATUS_CODES[status] ?? 'Internal Server Error') };
  fake.addChat = (chat) => {
    chats.set(String(chat.id), chat);
    if (chat.username) chats.set(`@${chat.username}`, chat);
  };
  fake.revokeToken = () => {
    revoked = true;
  };
  return fake;
}
