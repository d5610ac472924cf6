/**
 * Slack channels through a Slack app installed with OAuth v2 (a bot token per
 * workspace). Posts go to the channel in the `channel` setting (the `channels`
 * tool lists them); media is uploaded with the external upload flow
 * (files.getUploadURLExternal, the bytes, files.completeUploadExternal).
 *
 * Slack answers HTTP 200 with {ok:false, error} for most failures, so every
 * answer is read for `ok` and its error code classified (`readAnswer`).
 */
import { z } from 'zod';
import type { NetworkAnswer, Verdict } from '../adapter-kit/http-failures.ts';
import { mediaFilename, readMedia } from '../adapter-kit/media-bytes.ts';
import type { MediaRef, NetworkContext, Provider, PublishContext } from '../types.ts';
import { PublishError } from '../errors.ts';
import { authorizationUrl } from '../adapter-kit/oauth2-tokens.ts';

const NETWORK = 'Slack';
/** chat:write.public posts text to public channels the bot never joined; files need membership, so channels:join lets it join them first. */
const SCOPES = ['chat:write', 'chat:write.public', 'channels:join', 'files:write', 'files:read', 'channels:read', 'groups:read'];
/** Slack's product limit per file. */
const MAX_FILE_BYTES = 1024 * 1024 * 1024;
/** How long to look for the message a file share created (Slack shares files asynchronously). */
const SHARE_LOOKUPS = [250, 500, 1000, 1500, 2000, 3000];

const AUTH_ERRORS = new Set([
  'not_authed',
  'invalid_auth',
  'token_revoked',
  'token_expired',
  'account_inactive',
  'no_permission',
  'org_login_required',
  'ekm_access_denied',
]);
const RATE_LIMITED = new Set(['ratelimited', 'rate_limited']);
/** The request arrived cut short (its POST data missing or truncated): Slack did nothing with it. */
const UNAVAILABLE = new Set(['request_timeout']);
/** Slack failed while handling the request; `service_unavailable` (a 503) too: a message may have been posted all the same. */
const SERVER_ERRORS = new Set(['internal_error', 'fatal_error', 'service_unavailable']);

interface SlackConfig {
  accessToken: string;
  refreshToken?: string;
  expiresAt?: number;
  teamId: string;
  /** The workspace's base URL (https://team.slack.com/), for permalinks. */
  url: string;
}

interface SlackAnswer {
  ok: boolean;
  error?: string;
  needed?: string;
  [key: string]: any;
}

/** Slack answers 200 with {ok:false, error} for most failures: the error code decides the class. */
function readAnswer({ body, url }: NetworkAnswer): Verdict | undefined {
  const answer = body as SlackAnswer;
  if (typeof answer !== 'object' || answer === null || answer.ok !== false) return undefined;
  const code = answer.error ?? 'unknown_error';
  const method = new URL(url).pathname.split('/').pop();
  const detail = `${method} failed: ${code}${answer.needed ? ` (needs scope ${answer.needed})` : ''}`;
  if (RATE_LIMITED.has(code)) return { kind: 'retryable', detail, code };
  if (AUTH_ERRORS.has(code)) return { kind: 'auth', detail, code };
  if (UNAVAILABLE.has(code)) return { kind: 'retryable', detail, code };
  // "It's possible some aspect of the operation succeeded before the error was raised."
  if (SERVER_ERRORS.has(code)) return { kind: 'server', detail, code };
  return { kind: 'refused', detail, code };
}

/** Methods that read, or prepare without posting anything: safe to repeat after a server error. */
const REPEATABLE = new Set(['auth.test', 'files.info', 'conversations.list', 'conversations.join', 'files.getUploadURLExternal']);

/** Calls a Web API method with the channel's token; JSON bodies unless `form` (some methods only take forms). */
async function api<T extends SlackAnswer = SlackAnswer>(
  ctx: NetworkContext,
  token: string,
  method: string,
  args: { json?: Record<string, unknown>; form?: Record<string, string | undefined>; query?: Record<string, string | number | undefined> } = {},
): Promise<T> {
  return ctx.http.json<T>(`${ctx.urls.api}/${method}`, {
    method: args.query ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${token}`, ...(args.json ? { 'content-type': 'application/json; charset=utf-8' } : {}) },
    json: args.json,
    form: args.form,
    query: args.query,
    repeatable: REPEATABLE.has(method),
  });
}

/** Slack text is mrkdwn: &, < and > must be escaped or they start links and mentions. */
function escapeText(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/**
 * releaseId is the message's ts; a reply's is "<thread ts>/<ts>", because Slack
 * threads take the parent's ts, never a reply's.
 */
function threadOf(releaseId: string): string {
  return releaseId.split('/')[0];
}

function permalink(config: SlackConfig, channel: string, ts: string, threadTs?: string): string {
  const base = `${config.url.replace(/\/+$/, '')}/archives/${channel}/p${ts.replace('.', '')}`;
  return threadTs ? `${base}?thread_ts=${threadTs}&cid=${channel}` : base;
}

/** Uploads one file and returns its id (the file is not shared anywhere yet). */
async function uploadFile(ctx: PublishContext<SlackConfig>, token: string, media: MediaRef): Promise<string> {
  const bytes = await readMedia(media, MAX_FILE_BYTES, NETWORK);
  const filename = mediaFilename(media);
  const target = await api<SlackAnswer & { upload_url: string; file_id: string }>(ctx, token, 'files.getUploadURLExternal', {
    form: { filename, length: String(bytes.length) },
  });
  // The bytes go to a URL for this file only; nothing is posted until completeUploadExternal.
  await ctx.http.call(target.upload_url, {
    method: 'POST',
    headers: { 'content-type': media.mimeType },
    body: new Uint8Array(bytes),
    timeoutMs: 300_000,
    repeatable: true,
  });
  return target.file_id;
}

interface FileShares {
  shares?: Record<'public' | 'private', Record<string, { ts: string; thread_ts?: string }[]> | undefined>;
}

/** The message that shared a file: its channel, ts and thread, when Slack shows it. */
interface Share {
  channel: string;
  ts: string;
  threadTs?: string;
}

/** The share in `channel`, or, without one, the first share anywhere (Herald shares each file into one channel). */
function shareOf(file: FileShares | undefined, channel?: string): Share | undefined {
  for (const kind of ['public', 'private'] as const) {
    const byChannel = file?.shares?.[kind] ?? {};
    for (const [id, list] of Object.entries(byChannel)) {
      if (channel && id !== channel) continue;
      const first = list?.[0];
      if (first?.ts) return { channel: id, ts: first.ts, threadTs: first.thread_ts };
    }
  }
  return undefined;
}

async function fileShare(ctx: NetworkContext, token: string, fileId: string, channel?: string): Promise<Share | undefined> {
  const info = await api<SlackAnswer & { file: FileShares }>(ctx, token, 'files.info', { query: { file: fileId } });
  return shareOf(info.file, channel);
}

/** The message that shared the files: in the answer when Slack was quick, else from files.info. */
async function findShare(
  ctx: PublishContext<SlackConfig>,
  token: string,
  fileId: string,
  channel: string,
  completed: FileShares[],
): Promise<string | undefined> {
  const ts = shareOf(completed[0], channel)?.ts;
  if (ts) return ts;
  for (const wait of SHARE_LOOKUPS) {
    await new Promise((resolve) => setTimeout(resolve, wait));
    const found = await fileShare(ctx, token, fileId, channel);
    if (found) return found.ts;
  }
  return undefined;
}

/** A message sent with files whose ts Slack had not shown yet stands as "file:<file id>" until it does. */
const FILE_RELEASE = /^file:(F[A-Z0-9]+)$/;
/** When a file's share is looked for again after publishing (Slack usually shows it within seconds). */
const SHARE_FOLLOW_UP_MS = 5_000;

/** The release id and address of the message that shared a file, when Slack shows it. */
async function releaseOfFile(ctx: NetworkContext, config: SlackConfig, fileId: string): Promise<{ releaseId: string; releaseUrl: string } | undefined> {
  const share = await fileShare(ctx, config.accessToken, fileId);
  if (!share) return undefined;
  return {
    releaseId: share.threadTs ? `${share.threadTs}/${share.ts}` : share.ts,
    releaseUrl: permalink(config, share.channel, share.ts, share.threadTs),
  };
}

/** The ts a reply goes under: the first message's, read from its file share when it is still known by a file id. */
async function threadToReplyIn(ctx: PublishContext<SlackConfig>, parent: string): Promise<string> {
  const fileId = FILE_RELEASE.exec(parent)?.[1];
  const threadTs = fileId ? (await releaseOfFile(ctx, ctx.channel.config, fileId))?.releaseId : parent;
  if (!threadTs) throw new PublishError('retryable', `Slack has not shown the first message's timestamp yet (${parent}); the reply waits for it`);
  const ts = threadOf(threadTs);
  if (!/^\d+\.\d+$/.test(ts)) throw new PublishError('refused', `cannot reply in Slack: the first message's timestamp is unknown (${parent})`);
  return ts;
}

const settings = z.object({
  channel: z
    .string()
    .regex(/^[CGD][A-Z0-9]{6,}$/, 'must be a Slack channel id such as C0123456789 (the "channels" tool lists them)')
    .describe('The channel to post in'),
});

/**
 * Files are shared only into channels the bot is a member of (text is not: chat:write.public),
 * so the bot joins a public channel first; joining one it is in already is harmless. Private
 * channels cannot be joined: there the bot must have been invited, and sharing says so.
 */
async function joinChannel(ctx: PublishContext<SlackConfig>, token: string, channel: string): Promise<void> {
  try {
    await api(ctx, token, 'conversations.join', { json: { channel } });
  } catch (err) {
    // A private channel, or an install from before Herald asked for channels:join: sharing tells whether the bot is in.
    if (err instanceof PublishError && (err.code === 'method_not_supported_for_channel_type' || err.code === 'missing_scope')) return;
    throw err;
  }
}

export const slack: Provider<SlackConfig> = {
  identifier: 'slack',
  name: NETWORK,
  auth: 'oauth2',
  urls: { api: 'https://slack.com/api', authorize: 'https://slack.com/oauth/v2/authorize' },
  readAnswer,
  appSettings: ['CLIENT_ID', 'CLIENT_SECRET'],
  settings,
  rules: { maxLength: 40_000, maxMedia: 10, mediaKinds: ['image', 'video'], threads: true },

  oauth: {
    async start({ urls, app, state, redirectUri }) {
      return {
        url: authorizationUrl(urls.authorize, { clientId: app.CLIENT_ID, redirectUri, state, scopes: SCOPES, scopeSeparator: ',', extra: { user_scope: '' } }),
      };
    },

    async finish(ctx) {
      const { query, redirectUri, app, urls, http } = ctx;
      if (!query.code) throw new PublishError('refused', 'Slack sent no authorization code back');
      const basic = Buffer.from(`${app.CLIENT_ID}:${app.CLIENT_SECRET}`).toString('base64');
      const token = await http.json<SlackAnswer>(`${urls.api}/oauth.v2.access`, {
        headers: { authorization: `Basic ${basic}` },
        form: { grant_type: 'authorization_code', code: query.code, redirect_uri: redirectUri },
      });
      if (token.token_type !== 'bot' || !token.access_token) throw new PublishError('refused', 'Slack returned no bot token; install the app with bot scopes');
      const who = await api<SlackAnswer & { url: string; team: string; team_id: string }>(ctx, token.access_token, 'auth.test');
      const config: SlackConfig = {
        accessToken: token.access_token,
        teamId: token.team?.id ?? who.team_id,
        url: who.url,
        ...(token.refresh_token ? { refreshToken: token.refresh_token, expiresAt: Date.now() + Number(token.expires_in ?? 43_200) * 1000 } : {}),
      };
      const name = token.team?.name ?? who.team;
      return [{ externalId: config.teamId, name, profile: new URL(who.url).host, config: { ...config } }];
    },
  },

  /** Only for apps with token rotation on; other bot tokens do not expire. */
  async refresh(ctx) {
    const config = ctx.channel.config;
    if (!config.refreshToken) throw new PublishError('auth', 'the Slack token was refused and cannot be renewed: reinstall the app');
    const basic = Buffer.from(`${ctx.app.CLIENT_ID}:${ctx.app.CLIENT_SECRET}`).toString('base64');
    const answer = await ctx.http.json<SlackAnswer>(`${ctx.urls.api}/oauth.v2.access`, {
      headers: { authorization: `Basic ${basic}` },
      form: { grant_type: 'refresh_token', refresh_token: config.refreshToken },
    });
    return { accessToken: answer.access_token, refreshToken: answer.refresh_token, expiresAt: Date.now() + Number(answer.expires_in ?? 43_200) * 1000 };
  },

  async publish(ctx) {
    const config = ctx.channel.config;
    const token = config.accessToken;
    const channel = String(ctx.item.settings.channel ?? '');
    if (!settings.shape.channel.safeParse(channel).success) throw new PublishError('refused', 'settings.channel must be a Slack channel id');
    const threadTs = ctx.replyTo ? await threadToReplyIn(ctx, ctx.replyTo.releaseId) : undefined;
    const text = escapeText(ctx.item.content);

    let ts: string;
    if (ctx.item.media.length === 0) {
      const posted = await api<SlackAnswer & { ts: string }>(ctx, token, 'chat.postMessage', {
        json: { channel, text, ...(threadTs ? { thread_ts: threadTs } : {}) },
      });
      ts = posted.ts;
    } else {
      const ids: string[] = [];
      for (const m of ctx.item.media) ids.push(await uploadFile(ctx, token, m));
      await joinChannel(ctx, token, channel);
      const completed = await api<SlackAnswer & { files: FileShares[] }>(ctx, token, 'files.completeUploadExternal', {
        json: {
          files: ids.map((id) => ({ id })),
          channel_id: channel,
          ...(text ? { initial_comment: text } : {}),
          ...(threadTs ? { thread_ts: threadTs } : {}),
        },
      });
      const shared = await findShare(ctx, token, ids[0], channel, completed.files ?? []);
      // The message is out; only its timestamp is not known yet. Keep the file id so the post is not sent again,
      // and look for the timestamp later (followUp).
      if (!shared) return { releaseId: `file:${ids[0]}`, releaseUrl: null, followUp: { afterMs: SHARE_FOLLOW_UP_MS } };
      ts = shared;
    }
    return { releaseId: threadTs ? `${threadTs}/${ts}` : ts, releaseUrl: permalink(config, channel, ts, threadTs) };
  },

  async followUp(ctx) {
    const fileId = FILE_RELEASE.exec(ctx.releaseId)?.[1];
    if (!fileId) return { state: 'done' };
    const release = await releaseOfFile(ctx, ctx.channel.config, fileId);
    return release ? { state: 'done', ...release } : { state: 'waiting', checkAfterMs: SHARE_FOLLOW_UP_MS };
  },

  tools: {
    channels: {
      description: 'List the channels of the workspace the app can post to (id and name) for the `channel` setting.',
      async run(ctx) {
        const { accessToken } = ctx.channel.config;
        const channels: { id: string; name: string }[] = [];
        let cursor: string | undefined;
        // Ten pages of 200 cover any workspace a person picks from by hand.
        for (let page = 0; page < 10; page++) {
          const answer = await api<
            SlackAnswer & { channels: { id: string; name: string; is_archived?: boolean }[]; response_metadata?: { next_cursor?: string } }
          >(ctx, accessToken, 'conversations.list', {
            query: { types: 'public_channel,private_channel', exclude_archived: 'true', limit: 200, cursor },
          });
          for (const c of answer.channels) if (!c.is_archived) channels.push({ id: c.id, name: c.name });
          cursor = answer.response_metadata?.next_cursor || undefined;
          if (!cursor) break;
        }
        return channels;
      },
    },
  },
};
