/**
 * Whop: a post is a forum post in one of a company's forums (an experience,
 * `exp_…`), its thread the comments under it. OAuth 2.1 with PKCE and OpenID
 * Connect; access tokens last an hour and refresh tokens rotate on every use,
 * so each refresh stores the new one.
 *
 * The REST API is versioned by date (Api-Version-Date, configurable): the Files
 * API that attachments go through needs 2026-08-21-1 or later. A file is
 * created, its bytes PUT to the upload URL Whop gives, and Whop is asked until
 * it is ready; the file id is kept per post item so a retry does not upload it
 * again. Forum posts take no idempotency key: after an unknown outcome the
 * forum's latest posts are matched on content and parent.
 */
import crypto from 'node:crypto';
import { z } from 'zod';
import { errorMessage, retryAfterMs, type NetworkAnswer, type Verdict } from '../adapter-kit/http-failures.ts';
import { readMedia, mediaFilename } from '../adapter-kit/media-bytes.ts';
import { authorizationUrl, needRefreshToken, tokenFields, type TokenAnswer } from '../adapter-kit/oauth2-tokens.ts';
import { waitForProcessing } from '../adapter-kit/processing-wait.ts';
import type { MediaRef, NetworkContext, Provider, PublishChannel, PublishContext, TokenConfig } from '../types.ts';
import { PublishError } from '../errors.ts';

const SCOPES = ['openid', 'profile', 'email', 'forum:post:create', 'forum:read', 'company:basic:read'];
/** The first version whose Files API Herald uses (direct uploads). */
const DEFAULT_API_VERSION = '2026-08-21-1';
/** Largest attachment Herald sends in one PUT. */
const MAX_FILE_BYTES = 1024 * 1024 * 1024;
const FILE_POLL_MS = 1_000;
const FILE_POLL_MAX_MS = 5_000;

const settings = z.object({
  company: z.string().min(1).describe('The Whop company (biz_…) whose forum gets the post (see the companies tool)'),
  experience: z.string().min(1).describe('The forum to post in: its experience id (exp_…, see the forums tool), or "public" for the company’s public forum'),
  title: z.string().optional().describe('Title of the post (Whop shows it on paywalled posts)'),
});
type Settings = z.infer<typeof settings>;

interface Config extends TokenConfig {
  userId: string;
}

interface WhopFile {
  id: string;
  upload_url?: string;
  upload_headers?: Record<string, string>;
  upload_status?: 'pending' | 'processing' | 'ready' | 'failed' | string;
}

interface ForumPost {
  id: string;
  content?: string | null;
  parent_id?: string | null;
  created_at?: string | number | null;
}

/** Whop's OAuth errors name the grant problem; its API errors carry a type such as not_found. */
function readAnswer({ ok, status, body, headers, url }: NetworkAnswer): Verdict | undefined {
  if (ok) return undefined;
  const oauthError = typeof body?.error === 'string' ? body.error : undefined;
  if (oauthError === 'invalid_grant' || oauthError === 'insufficient_scope' || oauthError === 'invalid_token') {
    return { kind: 'auth', detail: `${oauthError}: ${body.error_description ?? 'connect the channel again'}`, code: oauthError };
  }
  const type = body?.error?.type ?? body?.error?.code ?? body?.code;
  const message = errorMessage(body);
  const detail = [type, message].filter((p) => typeof p === 'string' && p).join(': ') || undefined;
  if (status === 429) return { kind: 'retryable', detail, retryAfterMs: retryAfterMs(headers.get('retry-after')) };
  // A forum's own rule; a 403 of the storage host is left to the common rules.
  if (status === 403 && url.includes('/forum_posts')) {
    return {
      kind: 'refused',
      detail: `${detail ?? 'forbidden'}. The account may not post in this forum (its "who can post" setting), or Herald lacks a permission.`,
    };
  }
  return detail ? { detail, code: type } : undefined;
}

function config(channel: PublishChannel<Config>): Config {
  return channel.config;
}

function headers(ctx: NetworkContext, token: string | undefined): Record<string, string> {
  return { authorization: `Bearer ${token}`, 'api-version-date': ctx.app.API_VERSION || DEFAULT_API_VERSION };
}

/** The token endpoint takes JSON; a client secret only for confidential apps. */
async function tokenCall(ctx: NetworkContext, fields: Record<string, string | undefined>): Promise<TokenAnswer> {
  const answer = await ctx.http.json<TokenAnswer>(`${ctx.urls.api}/oauth/token`, {
    method: 'POST',
    headers: { accept: 'application/json' },
    json: { ...fields, client_id: ctx.app.CLIENT_ID, ...(ctx.app.CLIENT_SECRET ? { client_secret: ctx.app.CLIENT_SECRET } : {}) },
  });
  if (!answer?.access_token) throw new PublishError('auth', `Whop gave no access token: ${errorMessage(answer) ?? 'empty answer'}`);
  return answer;
}

/**
 * Whop's file for one media of the item, ready to attach. The id an earlier
 * attempt created is taken up again while Whop still has it.
 */
async function attachment(ctx: PublishContext<Config>, cfg: Config, media: MediaRef): Promise<string> {
  const key = `whop-file:${media.id}`;
  let id = await ctx.progress.get(key);
  if (id && (await fileState(ctx, cfg, id)) === 'gone') id = undefined;
  if (!id) {
    const bytes = await readMedia(media, MAX_FILE_BYTES, 'Whop');
    // Creating a file publishes nothing, so it may be repeated.
    const file = await ctx.http.json<WhopFile>(`${ctx.urls.api}/api/v1/files`, {
      method: 'POST',
      repeatable: true,
      headers: headers(ctx, cfg.accessToken),
      json: { filename: mediaFilename(media) },
    });
    if (!file?.id || !file.upload_url) throw new PublishError('retryable', 'Whop gave no upload URL for the file');
    await ctx.http.call(file.upload_url, {
      method: 'PUT',
      headers: { ...file.upload_headers, 'content-length': String(bytes.length) },
      body: bytes,
      timeoutMs: 10 * 60_000,
    });
    id = file.id;
    await ctx.progress.set(key, id);
  }
  const fileId = id;
  await waitForProcessing(
    async () => {
      const state = await fileState(ctx, cfg, fileId);
      if (state === 'gone') throw new PublishError('retryable', `Whop no longer has the upload of ${media.id}; it is sent again on the next attempt`);
      if (state === 'ready') return { done: true };
      return state === 'failed' ? { done: false, failed: `the upload of ${mediaFilename(media)} failed` } : { done: false };
    },
    { network: 'Whop', what: 'the attachment', signal: ctx.signal, intervalMs: FILE_POLL_MS, maxIntervalMs: FILE_POLL_MAX_MS },
  );
  return fileId;
}

async function fileState(ctx: PublishContext<Config>, cfg: Config, id: string): Promise<'ready' | 'failed' | 'waiting' | 'gone'> {
  try {
    const file = await ctx.http.json<WhopFile>(`${ctx.urls.api}/api/v1/files/${encodeURIComponent(id)}`, { headers: headers(ctx, cfg.accessToken) });
    if (file?.upload_status === 'ready') return 'ready';
    return file?.upload_status === 'failed' ? 'failed' : 'waiting';
  } catch (err) {
    if (err instanceof PublishError && err.kind === 'refused') return 'gone';
    throw err;
  }
}

function postUrl(experience: string, id: string): string {
  return `https://whop.com/experiences/${encodeURIComponent(experience)}/${encodeURIComponent(id)}`;
}

function sameText(a: string | null | undefined, b: string): boolean {
  const norm = (s: string) => s.replace(/\s+/g, ' ').trim();
  return norm(a ?? '') === norm(b);
}

async function list<T>(
  ctx: NetworkContext & { channel: PublishChannel<Config> },
  path: string,
  query: Record<string, string | number | undefined>,
): Promise<T[]> {
  const answer = await ctx.http.json<{ data?: T[] }>(`${ctx.urls.api}${path}`, { headers: headers(ctx, config(ctx.channel).accessToken), query });
  return answer?.data ?? [];
}

export const whop: Provider<Config> = {
  identifier: 'whop',
  name: 'Whop',
  auth: 'oauth2',
  readAnswer,
  urls: { api: 'https://api.whop.com' },
  appSettings: ['CLIENT_ID'],
  // CLIENT_SECRET for a confidential app; API_VERSION overrides the Api-Version-Date sent.
  optionalSettings: ['CLIENT_SECRET', 'API_VERSION'],
  connectNote:
    'Each post goes to the forum you pick in its settings (a company and one of its forums); the forum’s own "who can post" setting still applies to ' +
    'your account.',
  settings,
  rules: {
    maxLength: 50_000,
    maxMedia: 10,
    mediaKinds: ['image', 'video'],
    threads: true,
  },

  oauth: {
    pkce: true,
    async start({ urls, app, state, redirectUri, codeChallenge }) {
      return {
        url: authorizationUrl(`${urls.api}/oauth/authorize`, {
          clientId: app.CLIENT_ID,
          redirectUri,
          state,
          scopes: SCOPES,
          codeChallenge,
          extra: { nonce: crypto.randomBytes(16).toString('base64url') },
        }),
      };
    },

    async finish(ctx) {
      const answer = await tokenCall(ctx, {
        grant_type: 'authorization_code',
        code: ctx.query.code,
        redirect_uri: ctx.redirectUri,
        code_verifier: ctx.codeVerifier,
      });
      const tokens = tokenFields(answer);
      const me = await ctx.http.json<{ sub: string; name?: string; preferred_username?: string; picture?: string }>(`${ctx.urls.api}/oauth/userinfo`, {
        headers: { authorization: `Bearer ${tokens.accessToken}` },
      });
      return [
        {
          externalId: me.sub,
          name: me.name || me.preferred_username || me.sub,
          picture: me.picture ?? null,
          profile: me.preferred_username ?? null,
          config: { ...tokens, userId: me.sub },
        },
      ];
    },
  },

  async refresh(ctx) {
    // Whop rotates the refresh token: the one in the answer replaces the stored one.
    return tokenFields(await tokenCall(ctx, { grant_type: 'refresh_token', refresh_token: needRefreshToken(ctx.channel.config, 'Whop') }));
  },

  async publish(ctx) {
    const cfg = config(ctx.channel);
    const s = ctx.item.settings as Partial<Settings>;
    const experience = s.experience ?? '';
    const files: string[] = [];
    for (const media of ctx.item.media) files.push(await attachment(ctx, cfg, media));
    const post = await ctx.http.json<ForumPost>(`${ctx.urls.api}/api/v1/forum_posts`, {
      method: 'POST',
      headers: headers(ctx, cfg.accessToken),
      json: {
        experience_id: experience,
        // The company's public forum is named by the company.
        ...(experience === 'public' ? { company_id: s.company } : {}),
        content: ctx.item.content,
        ...(s.title && !ctx.replyTo ? { title: s.title } : {}),
        ...(files.length > 0 ? { attachments: files.map((id) => ({ id })) } : {}),
        ...(ctx.replyTo ? { parent_id: ctx.replyTo.releaseId } : {}),
      },
    });
    if (!post?.id) throw new PublishError('unknown', 'Whop answered without the post’s id, so whether it was created is unknown.');
    return { releaseId: post.id, releaseUrl: postUrl(experience, post.id) };
  },

  async findPublished(ctx) {
    const s = ctx.item.settings as Partial<Settings>;
    const experience = s.experience ?? '';
    const parent = ctx.replyTo?.releaseId;
    const since = ctx.item.publishAt.getTime() - 60_000;
    const posts = await list<ForumPost>(ctx, '/api/v1/forum_posts', { experience_id: experience, first: 10, parent_id: parent });
    const found = posts.find((p) => {
      const at = p.created_at ? new Date(typeof p.created_at === 'number' ? p.created_at * 1000 : p.created_at).getTime() : Number.NaN;
      return (p.parent_id ?? undefined) === parent && sameText(p.content, ctx.item.content) && (Number.isNaN(at) || at >= since);
    });
    return found ? { releaseId: found.id, releaseUrl: postUrl(experience, found.id) } : null;
  },

  tools: {
    companies: {
      description: 'The Whop companies the account can reach (id, title), for the company setting.',
      async run(ctx) {
        return (await list<{ id: string; title?: string }>(ctx, '/api/v1/companies', { first: 50 })).map((c) => ({ id: c.id, name: c.title ?? c.id }));
      },
    },
    forums: {
      description: 'The forums of a company (data: {company: "biz_…"}): experience id and name, for the experience setting.',
      async run(ctx) {
        const company = (ctx.data as { company?: unknown } | undefined)?.company;
        if (typeof company !== 'string' || !company) throw new PublishError('refused', 'say which company: {"company": "biz_…"}');
        return (await list<{ experience?: { id: string; name?: string } }>(ctx, '/api/v1/forums', { company_id: company, first: 50 }))
          .filter((f) => f.experience?.id)
          .map((f) => ({ id: f.experience!.id, name: f.experience!.name ?? f.experience!.id }));
      },
    },
  },
};
