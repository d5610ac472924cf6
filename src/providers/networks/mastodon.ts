/**
 * Mastodon, on any instance the user names: GET /social/mastodon?instance=https://…
 * registers Herald as an app on that instance (POST /api/v1/apps), then runs
 * OAuth 2 with PKCE. The app's client id and secret travel in the pending
 * connection's stash and stay in the channel's config, next to the instance URL,
 * so every later call knows where the account lives. Every request goes through
 * ctx.http, so the user-given instance passes the outbound guard.
 *
 * Statuses carry an Idempotency-Key (the post item's id): Mastodon answers a
 * repeated key with the status it already created, so a retry never doubles a post.
 */
import crypto from 'node:crypto';
import { z } from 'zod';
import { OutboundRefused } from '../../lib/outbound.ts';
import type { NetworkAnswer, Verdict } from '../adapter-kit/http-failures.ts';
import type { NetworkRequest } from '../adapter-kit/network-http.ts';
import type { MediaRef, NetworkContext, Provider, PublishContext, PublishResult, RuleItem } from '../types.ts';
import { mastodonLength } from '../text-counting.ts';
import { PublishError, NetworkRefusal } from '../errors.ts';
import { authorizationUrl } from '../adapter-kit/oauth2-tokens.ts';
import { waitForProcessing } from '../adapter-kit/processing-wait.ts';
import { currentFigures } from '../adapter-kit/analytics-series.ts';

const SCOPES = 'read:accounts read:statuses write:statuses write:media';
const APP_NAME = 'Herald';
/** How often an attachment being processed is looked at. */
const MEDIA_POLL_MS = 1_000;
/** The default of Mastodon's configuration (instances may allow more). */
const MAX_CHARACTERS = 500;

const settings = z.object({
  spoiler_text: z
    .string()
    .trim()
    .max(MAX_CHARACTERS, `must be at most ${MAX_CHARACTERS} characters`)
    .optional()
    .describe('Content warning: readers see this line first and open the post to read the rest'),
});

/** The post's content warning, if it has one. */
function contentWarning(itemSettings: Record<string, unknown>): string | undefined {
  const warning = settings.shape.spoiler_text.safeParse(itemSettings.spoiler_text).data;
  return warning ? warning : undefined;
}

/** Mastodon counts the content warning and the text together against its limit. */
function check(item: RuleItem): { field: 'content'; message: string }[] {
  const warning = contentWarning(item.settings);
  if (!warning) return [];
  const text = mastodonLength(item.content);
  const total = text + mastodonLength(warning);
  if (text > MAX_CHARACTERS || total <= MAX_CHARACTERS) return [];
  return [
    {
      field: 'content',
      message: `is ${text} characters and the content warning ${total - text}: Mastodon allows ${MAX_CHARACTERS} for both together`,
    },
  ];
}

interface Config {
  instance: string;
  accessToken: string;
  clientId: string;
  clientSecret: string;
  accountId: string;
  username: string;
}

/** The instance's origin from what the user typed ("mastodon.social" or a URL). */
export function instanceOrigin(raw: string | undefined): string {
  const value = (raw ?? '').trim();
  if (!value) throw new NetworkRefusal('instance', 'is required: the address of your Mastodon server, e.g. ?instance=https://mastodon.social');
  let url: URL;
  try {
    url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? value : `https://${value}`);
  } catch {
    throw new NetworkRefusal('instance', 'must be the address of a Mastodon server, e.g. https://mastodon.social');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new NetworkRefusal('instance', 'must be an https address');
  if (url.username || url.password || url.search || url.hash || (url.pathname !== '/' && url.pathname !== '')) {
    throw new NetworkRefusal('instance', 'must be just the server address (no path, query or credentials), e.g. https://mastodon.social');
  }
  return url.origin;
}

/** Plain text of a status's HTML, to compare it with what was sent. */
function plainText(html: string): string {
  return html
    .replace(/<br\s*\/?>/gi, '\n')
    .replace(/<\/p>\s*<p>/gi, '\n\n')
    .replace(/<[^>]+>/g, '')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;|&apos;/g, "'")
    .replace(/&amp;/g, '&');
}

function sameText(a: string, b: string): boolean {
  // The HTML shows a remote mention as @user only.
  const norm = (s: string) =>
    s
      .replace(/@(\w+)@[\w.-]+\w/g, '@$1')
      .replace(/\s+/g, ' ')
      .trim();
  return norm(a) === norm(b);
}

/** Mastodon's 429 says when to come back in X-RateLimit-Reset (an ISO date) rather than Retry-After. */
function readAnswer({ status, headers }: NetworkAnswer): Verdict | undefined {
  const reset = Date.parse(headers.get('x-ratelimit-reset') ?? '');
  if (status !== 429 || headers.get('retry-after') || Number.isNaN(reset)) return undefined;
  return { retryAfterMs: Math.max(0, reset - Date.now()) };
}

async function call<T = any>(ctx: NetworkContext, url: string, request: NetworkRequest): Promise<{ status: number; body: T }> {
  const answer = await ctx.http.call(url, request);
  if (answer.raw !== '' && !answer.isJson) {
    throw new PublishError(
      'unknown',
      `Mastodon answered ${answer.status} with a body that is not JSON, so the outcome is unknown. Check the account before retrying.`,
    );
  }
  return { status: answer.status, body: (answer.isJson ? answer.body : undefined) as T };
}

function auth(config: Config): Record<string, string> {
  return { authorization: `Bearer ${config.accessToken}` };
}

/** Where the instance stands with an attachment: GET /api/v1/media/:id answers 206 while it processes, 404 once it is gone. */
async function attachmentState(ctx: PublishContext<Config>, config: Config, id: string): Promise<'ready' | 'processing' | 'gone'> {
  try {
    const media = await call(ctx, `${config.instance}/api/v1/media/${encodeURIComponent(id)}`, { headers: auth(config) });
    return media.status === 206 ? 'processing' : 'ready';
  } catch (err) {
    if (err instanceof PublishError && err.kind === 'refused') return 'gone';
    throw err;
  }
}

/**
 * The instance's attachment for one file, processed. A file is uploaded once per
 * post item: an attachment an earlier attempt uploaded is taken up again while
 * the instance keeps it (unattached media lives about a day), so a video that
 * outlasts an attempt is not sent and processed again. The wait lasts as long
 * as the publish may (busy instances take minutes for a video).
 */
async function attachment(ctx: PublishContext<Config>, config: Config, media: MediaRef): Promise<string> {
  const key = `mastodon-media:${crypto
    .createHash('sha256')
    .update(JSON.stringify([config.instance, media.id, media.alt ?? '']))
    .digest('base64url')}`;
  let id = await ctx.progress.get(key);
  if (id && (await attachmentState(ctx, config, id)) === 'gone') id = undefined;
  if (!id) {
    const chunks: Buffer[] = [];
    for await (const chunk of (await media.open()) as AsyncIterable<Buffer>) chunks.push(chunk);
    const form = new FormData();
    form.append('file', new Blob([Buffer.concat(chunks)], { type: media.mimeType }), `${media.id}.${media.mimeType.split('/')[1] ?? 'bin'}`);
    // Mastodon's alt text for the attachment (up to 1,500 characters, as the library allows).
    if (media.alt) form.append('description', media.alt);
    // An upload that fails or times out published nothing: the status is not sent yet.
    const uploaded = await call<{ id: string; url: string | null }>(ctx, `${config.instance}/api/v2/media`, {
      method: 'POST',
      headers: auth(config),
      body: form,
      timeoutMs: 5 * 60_000,
      repeatable: true,
    });
    if (uploaded.status === 200 && uploaded.body.url) return uploaded.body.id;
    id = uploaded.body.id;
    await ctx.progress.set(key, id);
  }
  const attachmentId = id;
  await waitForProcessing(
    async () => {
      const state = await attachmentState(ctx, config, attachmentId);
      if (state === 'gone') throw new PublishError('retryable', `Mastodon no longer has the upload of ${media.id}; it is sent again on the next attempt`);
      return state === 'ready' ? { done: true } : { done: false };
    },
    { network: 'Mastodon', what: 'the media', signal: ctx.signal, intervalMs: MEDIA_POLL_MS, maxIntervalMs: MEDIA_POLL_MS },
  );
  return attachmentId;
}

function release(config: Config, status: { id: string; url?: string | null }): PublishResult {
  return { releaseId: status.id, releaseUrl: status.url ?? `${config.instance}/@${config.username}/${status.id}` };
}

export const mastodon: Provider<Config> = {
  identifier: 'mastodon',
  name: 'Mastodon',
  readAnswer,
  auth: 'oauth2',
  settings,
  rules: {
    maxLength: MAX_CHARACTERS,
    counting: 'mastodon',
    maxMedia: 4,
    mediaKinds: ['image', 'video'],
    threads: true,
    media: { imageTypes: ['image/jpeg', 'image/png', 'image/webp', 'image/gif', 'image/avif', 'image/heic'], maxImageBytes: 16 * 1024 * 1024 },
    check,
  },
  // Mastodon's limits are per account (300 statuses in 3 hours by default), not one budget for the network.
  pacing: { perChannel: { count: 300, windowMs: 3 * 60 * 60_000 } },

  oauth: {
    pkce: true,
    startOptions: z.object({ instance: z.string().describe('Your Mastodon server, e.g. https://mastodon.social') }),
    async start(ctx) {
      const instance = instanceOrigin(ctx.options.instance);
      try {
        await ctx.outbound.checkReachable(instance);
      } catch (err) {
        if (err instanceof OutboundRefused) throw new NetworkRefusal('instance', err.reason, 'address');
        throw err;
      }
      let app;
      try {
        app = await call<{ client_id: string; client_secret: string }>(ctx, `${instance}/api/v1/apps`, {
          method: 'POST',
          json: { client_name: APP_NAME, redirect_uris: ctx.redirectUri, scopes: SCOPES, website: ctx.redirectUri.replace(/\/connect\/.*$/, '') },
        });
      } catch (err) {
        if (err instanceof PublishError && err.kind === 'refused') {
          throw new NetworkRefusal(
            'instance',
            err.message,
            'refused',
            `${instance} did not accept Herald as an app (is it a Mastodon server?): ${err.message}`,
          );
        }
        throw err;
      }
      const url = authorizationUrl(`${instance}/oauth/authorize`, {
        clientId: app.body.client_id,
        redirectUri: ctx.redirectUri,
        state: ctx.state,
        scopes: SCOPES.split(' '),
        codeChallenge: ctx.codeChallenge,
      });
      return { url, stash: { instance, clientId: app.body.client_id, clientSecret: app.body.client_secret } };
    },

    async finish(ctx) {
      const { instance, clientId, clientSecret } = ctx.stash as { instance: string; clientId: string; clientSecret: string };
      const token = await call<{ access_token: string }>(ctx, `${instance}/oauth/token`, {
        method: 'POST',
        form: {
          grant_type: 'authorization_code',
          code: ctx.query.code,
          client_id: clientId,
          client_secret: clientSecret,
          redirect_uri: ctx.redirectUri,
          code_verifier: ctx.codeVerifier,
          scope: SCOPES,
        },
      });
      const me = await call<{ id: string; username: string; acct: string; display_name?: string; avatar?: string; url?: string }>(
        ctx,
        `${instance}/api/v1/accounts/verify_credentials`,
        {
          headers: { authorization: `Bearer ${token.body.access_token}` },
        },
      );
      const host = new URL(instance).host;
      const config: Config = { instance, accessToken: token.body.access_token, clientId, clientSecret, accountId: me.body.id, username: me.body.username };
      return [
        {
          // Account ids are local to an instance.
          externalId: `${me.body.id}@${host}`,
          name: me.body.display_name || me.body.username,
          picture: me.body.avatar ?? null,
          profile: `@${me.body.username}@${host}`,
          config: { ...config },
        },
      ];
    },
  },

  // The instance answers a repeated Idempotency-Key with the status it already made, for an hour.
  repeatDropped: { by: 'Mastodon answers a repeated Idempotency-Key with the status it made', withinMs: 60 * 60_000 },

  async publish(ctx) {
    const config = ctx.channel.config;
    const mediaIds: string[] = [];
    for (const media of ctx.item.media) mediaIds.push(await attachment(ctx, config, media));
    // Each status of a thread carries the warning: a reply is also read on its own.
    const warning = contentWarning(ctx.item.settings);
    const status = await call<{ id: string; url?: string | null }>(ctx, `${config.instance}/api/v1/statuses`, {
      method: 'POST',
      headers: { ...auth(config), 'idempotency-key': ctx.idempotencyKey },
      json: {
        status: ctx.item.content,
        ...(mediaIds.length > 0 ? { media_ids: mediaIds } : {}),
        ...(ctx.replyTo ? { in_reply_to_id: ctx.replyTo.releaseId } : {}),
        ...(warning ? { spoiler_text: warning } : {}),
      },
    });
    return release(config, status.body);
  },

  /** After an unknown outcome: the account's latest statuses, matched on text, reply target and media count. */
  async findPublished(ctx) {
    const config = ctx.channel.config;
    const recent = await recentStatuses(ctx, config);
    // A status older than the item's due time cannot be it (a minute of slack for clocks).
    const since = ctx.item.publishAt.getTime() - 60_000;
    const found = recent.find(
      (s) =>
        Date.parse(s.created_at) >= since &&
        (s.in_reply_to_id ?? null) === (ctx.replyTo?.releaseId ?? null) &&
        (s.media_attachments?.length ?? 0) === ctx.item.media.length &&
        sameText(plainText(s.content), ctx.item.content),
    );
    return found ? release(config, found) : null;
  },

  async recentPosts(ctx) {
    const config = ctx.channel.config;
    return (await recentStatuses(ctx, config)).map((status) => {
      const { releaseId, releaseUrl } = release(config, status);
      return { id: releaseId, url: releaseUrl!, text: plainText(status.content), at: Date.parse(status.created_at) };
    });
  },

  analytics: {
    /** Mastodon keeps no history per account: the figures as they stand. */
    async channel(ctx) {
      const config = ctx.channel.config;
      const { body } = await call<{ followers_count?: number; following_count?: number; statuses_count?: number }>(
        ctx,
        `${config.instance}/api/v1/accounts/verify_credentials`,
        { headers: auth(config) },
      );
      return currentFigures({ Followers: body.followers_count, Following: body.following_count, Posts: body.statuses_count });
    },
    async post(ctx) {
      const config = ctx.channel.config;
      const { body } = await call<{ favourites_count?: number; reblogs_count?: number; replies_count?: number; quotes_count?: number }>(
        ctx,
        `${config.instance}/api/v1/statuses/${encodeURIComponent(ctx.releaseId)}`,
        { headers: auth(config) },
      );
      return currentFigures({ Favourites: body.favourites_count, Boosts: body.reblogs_count, Replies: body.replies_count, Quotes: body.quotes_count });
    },
  },
};

type Status = { id: string; url?: string | null; content: string; in_reply_to_id: string | null; created_at: string; media_attachments?: unknown[] };

/** The account's latest statuses, newest first (reblogs left out). */
async function recentStatuses(ctx: NetworkContext, config: Config): Promise<Status[]> {
  const recent = await call<Status[]>(ctx, `${config.instance}/api/v1/accounts/${encodeURIComponent(config.accountId)}/statuses`, {
    headers: auth(config),
    query: { limit: 40, exclude_reblogs: true },
  });
  return recent.body;
}
