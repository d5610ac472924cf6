/**
 * A local Slack Web API: OAuth v2 install (authorize → code; oauth.v2.access
 * with HTTP Basic, and refresh for apps with token rotation), auth.test,
 * conversations.list with cursors, chat.postMessage, the external file upload
 * flow (getUploadURLExternal → POST bytes → completeUploadExternal, shares
 * appearing in files.info), and Slack's {ok:false, error} answers on HTTP 200.
 * Its create endpoint is chat.postMessage (`storeThenFail`).
 */
import { consentAllows, startNetworkFake, type FakeAnswer, type NetworkFake, type RecordedRequest } from './network-fake.ts';

export interface SlackMessage {
  ts: string;
  channel: string;
  text: string;
  thread_ts?: string;
  files: string[];
  /** When the files' share shows in files.info (epoch ms). */
  sharedAt?: number;
}

export interface SlackFake extends NetworkFake {
  app: { clientId: string; clientSecret: string };
  channels: { id: string; name: string; is_private: boolean; is_archived: boolean; is_member: boolean }[];
  messages: SlackMessage[];
  uploads: Map<string, { filename: string; length: number; data?: Buffer }>;
  /** How long after completeUploadExternal a share shows in files.info (Slack shares files asynchronously); 0 unless a test sets it. */
  shareDelayMs: number;
  /** The token now in force. */
  accessToken(): string;
  /** The access token stops working (token_expired); the refresh token still works. */
  expireAccessToken(): void;
  /** Every token of the install stops working, refresh included (app uninstalled). */
  revokeAll(): void;
}

const slackError = (error: string, extra: Record<string, unknown> = {}): FakeAnswer => ({ body: { ok: false, error, ...extra } });

export async function startSlackFake(): Promise<SlackFake> {
  const app = { clientId: '111.222', clientSecret: 'slack-secret' };
  const team = { id: 'T0HERALD1', name: 'Herald Team' };
  const channels: SlackFake['channels'] = [];
  const messages: SlackMessage[] = [];
  const uploads: SlackFake['uploads'] = new Map();
  let generation = 1;
  let access = 'xoxe.xoxb-1-first';
  let refresh = 'xoxe-1-refresh-first';
  let expired = false;
  let revoked = false;
  let clock = 1_712_345_678;
  let fileSeq = 0;
  const nextTs = () => `${clock++}.${String(100000 + messages.length).padStart(6, '0')}`;

  /** The answer for a bad token, or undefined when the bearer token is good. */
  const tokenProblem = (req: RecordedRequest): FakeAnswer | undefined => {
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (!bearer) return slackError('not_authed');
    if (revoked) return slackError('token_revoked');
    if (bearer !== access) return slackError('invalid_auth');
    if (expired) return slackError('token_expired');
    return undefined;
  };
  const args = (req: RecordedRequest): Record<string, any> => ({ ...req.query, ...(req.form ?? {}), ...(req.json ?? {}) });
  const issue = () => {
    generation++;
    access = `xoxe.xoxb-1-gen${generation}`;
    refresh = `xoxe-1-refresh-gen${generation}`;
    expired = false;
    return {
      ok: true,
      access_token: access,
      token_type: 'bot',
      scope: 'chat:write,files:write',
      bot_user_id: 'U0BOT',
      app_id: 'A0HERALD',
      team,
      enterprise: null,
      is_enterprise_install: false,
      refresh_token: refresh,
      expires_in: 43200,
      authed_user: { id: 'U0PERSON' },
    };
  };
  const channelFor = (id: string) => channels.find((c) => c.id === id);

  const fake = (await startNetworkFake({
    'GET /oauth/v2/authorize': consentAllows('slack-code-1'),
    'POST /api/oauth.v2.access': (req, f) => {
      const basic = Buffer.from(`${app.clientId}:${app.clientSecret}`).toString('base64');
      if (req.headers.authorization !== `Basic ${basic}`) return slackError('invalid_client_id');
      const form = req.form ?? {};
      if (form.grant_type === 'authorization_code') {
        if (form.code !== 'slack-code-1' || form.redirect_uri !== f.state.authorize?.redirect_uri) return slackError('invalid_code');
        return { body: issue() };
      }
      if (form.grant_type === 'refresh_token') {
        if (revoked || form.refresh_token !== refresh) return slackError('invalid_refresh_token');
        return { body: issue() };
      }
      return slackError('invalid_grant_type');
    },
    'POST /api/auth.test': (req) =>
      tokenProblem(req) ?? {
        body: { ok: true, url: 'https://herald-team.slack.com/', team: team.name, user: 'herald', team_id: team.id, user_id: 'U0BOT', bot_id: 'B0BOT' },
      },
    'GET /api/conversations.list': (req) => {
      const problem = tokenProblem(req);
      if (problem) return problem;
      const limit = Number(req.query.limit ?? 100);
      const start = Number(req.query.cursor ? Buffer.from(req.query.cursor, 'base64').toString() : 0);
      const visible = channels.filter((c) => (!c.is_private || c.is_member) && !(req.query.exclude_archived === 'true' && c.is_archived));
      const page = visible.slice(start, start + limit);
      const next = start + limit < visible.length ? Buffer.from(String(start + limit)).toString('base64') : '';
      return { body: { ok: true, channels: page, response_metadata: { next_cursor: next } } };
    },
    'POST /api/chat.postMessage': (req) => {
      const problem = tokenProblem(req);
      if (problem) return problem;
      const a = args(req);
      const channel = channelFor(a.channel);
      if (!channel) return slackError('channel_not_found');
      if (channel.is_archived) return slackError('is_archived');
      if (channel.is_private && !channel.is_member) return slackError('not_in_channel');
      if (!a.text && !a.blocks) return slackError('no_text');
      if (a.thread_ts && !messages.some((m) => m.channel === channel.id && m.ts === a.thread_ts && !m.thread_ts)) return slackError('thread_not_found');
      const message: SlackMessage = { ts: nextTs(), channel: channel.id, text: a.text, thread_ts: a.thread_ts, files: [] };
      messages.push(message);
      return {
        body: {
          ok: true,
          channel: channel.id,
          ts: message.ts,
          message: { type: 'message', text: message.text, ts: message.ts, ...(message.thread_ts ? { thread_ts: message.thread_ts } : {}) },
        },
      };
    },
    // Joining needs the channels:join scope; private channels cannot be joined, only invited to.
    'POST /api/conversations.join': (req, f) => {
      const problem = tokenProblem(req);
      if (problem) return problem;
      const granted = String((f.state.authorize as Record<string, string> | undefined)?.scope ?? '').split(',');
      if (!granted.includes('channels:join')) return slackError('missing_scope', { needed: 'channels:join', provided: granted.join(',') });
      const channel = channelFor(args(req).channel);
      if (!channel) return slackError('channel_not_found');
      if (channel.is_archived) return slackError('is_archived');
      if (channel.is_private) return slackError('method_not_supported_for_channel_type');
      const warning = channel.is_member ? { warning: 'already_in_channel' } : {};
      channel.is_member = true;
      return { body: { ok: true, channel: { id: channel.id, name: channel.name, is_member: true }, ...warning } };
    },
    'POST /api/files.getUploadURLExternal': (req, f) => {
      const problem = tokenProblem(req);
      if (problem) return problem;
      // Documented as form-encoded; JSON bodies fail with invalid_arguments.
      if (!req.form) return slackError('invalid_arguments');
      const length = Number(req.form.length);
      if (!req.form.filename || !Number.isInteger(length) || length <= 0) return slackError('invalid_arguments');
      const id = `F0FILE${++fileSeq}`;
      uploads.set(id, { filename: req.form.filename, length });
      return { body: { ok: true, upload_url: `${f.url}/upload/v1/${id}`, file_id: id } };
    },
    'POST /upload/v1/:id': (req) => {
      const upload = uploads.get(req.params.id);
      if (!upload) return { status: 404, body: 'not found' };
      if (req.raw.length !== upload.length) return { status: 400, body: `expected ${upload.length} bytes, got ${req.raw.length}` };
      upload.data = req.raw;
      return { status: 200, body: `OK - ${req.raw.length}` };
    },
    'POST /api/files.completeUploadExternal': (req) => {
      const problem = tokenProblem(req);
      if (problem) return problem;
      const a = args(req);
      const files = (typeof a.files === 'string' ? JSON.parse(a.files) : a.files) as { id: string; title?: string }[];
      if (!Array.isArray(files) || files.length === 0) return slackError('invalid_arguments');
      if (files.some((file) => !uploads.get(file.id)?.data)) return slackError('file_not_found');
      if (a.channel_id) {
        const channel = channelFor(a.channel_id);
        if (!channel) return slackError('channel_not_found');
        // Unlike text (chat:write.public), files are shared only where the bot is a member.
        if (!channel.is_member) return slackError('not_in_channel');
        if (a.thread_ts && !messages.some((m) => m.channel === channel.id && m.ts === a.thread_ts && !m.thread_ts)) return slackError('thread_not_found');
        messages.push({
          ts: nextTs(),
          channel: channel.id,
          text: a.initial_comment ?? '',
          thread_ts: a.thread_ts,
          files: files.map((file) => file.id),
          sharedAt: Date.now() + fake.shareDelayMs,
        });
      }
      // Sharing is asynchronous: the answer does not show the share yet.
      return { body: { ok: true, files: files.map((file) => ({ id: file.id, title: file.title ?? uploads.get(file.id)!.filename, shares: {} })) } };
    },
    'GET /api/files.info': (req) => {
      const problem = tokenProblem(req);
      if (problem) return problem;
      const upload = uploads.get(req.query.file);
      if (!upload) return slackError('file_not_found');
      const shares: Record<string, { ts: string; thread_ts?: string }[]> = {};
      for (const m of messages.filter((msg) => msg.files.includes(req.query.file) && !((msg.sharedAt ?? 0) > Date.now()))) {
        shares[m.channel] ??= [];
        shares[m.channel].push({ ts: m.ts, ...(m.thread_ts ? { thread_ts: m.thread_ts } : {}) });
      }
      return { body: { ok: true, file: { id: req.query.file, name: upload.filename, size: upload.length, shares: { public: shares } } } };
    },
  })) as SlackFake;

  fake.app = app;
  fake.shareDelayMs = 0;
  // Store, then answer a 5xx (`storeThenFail`) on chat.postMessage, with Slack's error: internal_error, or service_unavailable for a 503.
  fake.create = {
    route: 'POST /api/chat.postMessage',
    serverError: (status) => ({ ...slackError(status === 503 ? 'service_unavailable' : 'internal_error'), status }),
  };
  fake.channels = channels;
  fake.messages = messages;
  fake.uploads = uploads;
  fake.accessToken = () => access;
  fake.expireAccessToken = () => {
    expired = true;
  };
  fake.revokeAll = () => {
    revoked = true;
  };
  return fake;
}
