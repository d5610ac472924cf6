/**
 * MeWe (Open API developer preview): posts to the user's timeline or to one of
 * their groups. The operator's approved Standalone App has an App ID (sent as
 * X-App-Id on every call) and an API key (X-Api-Key, server side only). The
 * user signs in at MeWe's login page, which sends them back with a
 * `loginRequestToken`, in the query or in the URL fragment (a small page hands
 * that one to the server: api/fragment-handover.ts); Herald exchanges it for an API token that lasts until
 * its `expiresAt`. MeWe has no refresh: once the token expires, the channel
 * must be connected again.
 *
 * A post may be answered 204 without an id, and MeWe offers no way to look a
 * post up, so an unknown outcome is left to the user to check.
 */
import crypto from 'node:crypto';
import { z } from 'zod';
import type { NetworkAnswer, Verdict } from '../adapter-kit/http-failures.ts';
import { retryAfterMs } from '../adapter-kit/http-failures.ts';
import { mediaBlob, mediaFilename } from '../adapter-kit/media-bytes.ts';
import type { MediaRef, NetworkContext, Provider, PublishChannel, PublishContext, TokenConfig } from '../types.ts';
import { PublishError } from '../errors.ts';

/** When MeWe gives no expiry, tokens are taken to last this long (as the reference service does). */
const DEFAULT_LIFETIME_MS = 30 * 24 * 60 * 60_000;
/** MeWe names no limits; a post of many photos stays reasonable. */
const MAX_PHOTOS = 10;
const MAX_PHOTO_BYTES = 20 * 1024 * 1024;
/** "Enhance Your Calm" names no window: wait this long unless MeWe says (HERALD_MEWE_CALM_SECONDS). */
const CALM_DOWN_S = 60;
/** Pages of groups read at most, for the picker. */
const GROUP_PAGES = 20;

const settings = z.object({
  postType: z.enum(['timeline', 'group']).optional().describe('Where the post goes: your timeline (default) or a group'),
  group: z.string().min(1).optional().describe('The group id, for a group post (see the listGroups tool)'),
});
type Settings = z.infer<typeof settings>;

interface Config extends TokenConfig {
  userId: string;
  handle?: string;
}

/** MeWe's "Enhance Your Calm" (420) is its rate limit. */
function readAnswer({ status, headers }: NetworkAnswer): Verdict | undefined {
  if (status === 420)
    return { kind: 'retryable', detail: 'Enhance Your Calm (rate limited)', retryAfterMs: retryAfterMs(headers.get('retry-after')), code: 420 };
  if (status === 403) return { kind: 'refused', detail: 'Forbidden: the account may not post there (not a member of the group, or posting is not allowed)' };
  return undefined;
}

function configOf(channel: PublishChannel<Config>): Config {
  return channel.config;
}

function appHeaders(ctx: NetworkContext): Record<string, string> {
  return { 'x-app-id': ctx.app.APP_ID, 'x-api-key': ctx.app.API_KEY };
}

function userHeaders(ctx: NetworkContext, token: string | undefined): Record<string, string> {
  return { ...appHeaders(ctx), authorization: `Bearer ${token}` };
}

/** The group a post goes to, or undefined for the timeline. */
function groupOf(s: Settings): string | undefined {
  return s.postType === 'group' ? s.group : undefined;
}

/** Refuses a token past its expiry without asking MeWe: only signing in again helps. */
function liveToken(config: Config): string | undefined {
  if (config.expiresAt && config.expiresAt <= Date.now()) {
    throw new PublishError(
      'auth',
      `the MeWe token expired on ${new Date(config.expiresAt).toISOString()}; MeWe tokens cannot be renewed, so connect the channel again`,
    );
  }
  return config.accessToken;
}

/** Uploads one photo (publishes nothing, so safe to repeat); its id is kept for the item's next attempts. */
async function photoId(ctx: PublishContext<Config>, token: string | undefined, media: MediaRef): Promise<string> {
  const key = `mewe-photo:${crypto.createHash('sha256').update(media.id).digest('base64url')}`;
  const kept = await ctx.progress.get(key);
  if (kept) return kept;
  const form = new FormData();
  form.append('file', await mediaBlob(media, MAX_PHOTO_BYTES, 'MeWe'), mediaFilename(media));
  const answer = await ctx.http.json<{ id?: string }>(`${ctx.urls.site}/api/dev/photo/upload`, {
    method: 'POST',
    headers: userHeaders(ctx, token),
    body: form,
    repeatable: true,
    timeoutMs: 5 * 60_000,
  });
  if (!answer?.id) throw new PublishError('retryable', `MeWe gave no id for the photo ${mediaFilename(media)}`);
  await ctx.progress.set(key, String(answer.id));
  return String(answer.id);
}

export const mewe: Provider<Config> = {
  identifier: 'mewe',
  name: 'MeWe',
  auth: 'oauth2',
  readAnswer,
  // MEWE_HOST of MeWe's docs.
  urls: { site: 'https://mewe.com' },
  appSettings: ['APP_ID', 'API_KEY'],
  optionalSettings: ['CALM_SECONDS'],
  connectNote:
    'MeWe’s API is a developer preview: the server needs an approved MeWe Standalone App. MeWe tokens cannot be renewed: when one expires (MeWe says ' +
    'when), connect the channel again. MeWe gives no link to a single post.',
  settings,
  rules: {
    // providers.md's limit (MeWe's own is unconfirmed).
    maxLength: 63206,
    maxMedia: MAX_PHOTOS,
    mediaKinds: ['image'],
    threads: false,
    media: { imageTypes: ['image/jpeg', 'image/png', 'image/gif'], maxImageBytes: MAX_PHOTO_BYTES },
    check(item) {
      const s = item.settings as Settings;
      if (s.postType === 'group' && !s.group) return [{ field: 'content', message: 'a MeWe group post needs the group setting (the group id)' }];
      return [];
    },
  },

  oauth: {
    pkce: false,
    // MeWe's login may answer in the fragment (as the reference service reads it first) or in the query.
    fragmentParams: ['loginRequestToken'],
    async start({ urls, app, state, redirectUri }) {
      const url = new URL(`${urls.site}/login`);
      url.searchParams.set('client_id', app.APP_ID);
      url.searchParams.set('redirect_uri', redirectUri);
      url.searchParams.set('state', state);
      return { url: url.toString() };
    },

    async finish(ctx) {
      const loginRequestToken = ctx.query.loginRequestToken;
      if (!loginRequestToken) throw new PublishError('refused', 'MeWe sent no loginRequestToken back; start connecting again');
      const token = await ctx.http.json<{ apiToken?: string; expiresAt?: string; pending?: boolean }>(`${ctx.urls.site}/api/dev/token`, {
        headers: appHeaders(ctx),
        query: { loginRequestToken },
      });
      if (token?.pending) throw new PublishError('refused', 'MeWe has not confirmed the sign-in yet: approve it in MeWe, then connect again');
      if (!token?.apiToken) throw new PublishError('auth', 'MeWe gave no API token');
      const expires = Date.parse(token.expiresAt ?? '');
      const config: Config = { accessToken: token.apiToken, expiresAt: Number.isNaN(expires) ? Date.now() + DEFAULT_LIFETIME_MS : expires, userId: '' };
      const me = await ctx.http.json<{ userId: string; name?: string; firstName?: string; lastName?: string; handle?: string }>(`${ctx.urls.site}/api/dev/me`, {
        headers: userHeaders(ctx, token.apiToken),
      });
      config.userId = String(me.userId);
      config.handle = me.handle;
      const name = me.name || [me.firstName, me.lastName].filter(Boolean).join(' ') || me.handle || 'MeWe account';
      return [{ externalId: config.userId, name, picture: null, profile: me.handle ?? null, config: { ...config } }];
    },
  },

  /** MeWe has no refresh: saying so marks the channel for reconnection (with a notification) when its token runs out. */
  async refresh() {
    throw new PublishError('auth', 'MeWe tokens cannot be renewed; connect the channel again');
  },

  async publish(ctx) {
    const config = configOf(ctx.channel);
    const token = liveToken(config);
    const s = ctx.item.settings as Settings;
    if (s.postType === 'group' && !s.group) throw new PublishError('refused', 'a MeWe group post needs the group setting (the group id)');
    const group = groupOf(s);
    const uploadedPhotoIds: string[] = [];
    for (const media of ctx.item.media) uploadedPhotoIds.push(await photoId(ctx, token, media));
    const path = group ? `/api/dev/group/${encodeURIComponent(group)}/post` : '/api/dev/me/post';
    let answer: Record<string, any> | undefined;
    try {
      answer = await ctx.http.json<Record<string, any> | undefined>(`${ctx.urls.site}${path}`, {
        method: 'POST',
        headers: userHeaders(ctx, token),
        json: { text: ctx.item.content, ...(uploadedPhotoIds.length > 0 ? { uploadedPhotoIds } : {}) },
      });
    } catch (err) {
      // 420 without a Retry-After: the server's configured pause.
      if (err instanceof PublishError && err.code === 420 && err.retryAfterMs === undefined) {
        throw new PublishError('retryable', err.message, Number(ctx.app.CALM_SECONDS || CALM_DOWN_S) * 1000, 420);
      }
      throw err;
    }
    // 204 says only "done": the item's own id stands for the post.
    const id = answer?.postId ?? answer?.post?.postId ?? answer?.id;
    const site = ctx.urls.site;
    return {
      releaseId: id ? String(id) : `herald-${ctx.idempotencyKey}`,
      releaseUrl: group ? `${site}/group/${encodeURIComponent(group)}` : config.handle ? `${site}/i/${encodeURIComponent(config.handle)}` : null,
    };
  },

  tools: {
    listGroups: {
      description: 'The MeWe groups of the connected account (id and name), for the group setting.',
      async run(ctx) {
        const token = liveToken(configOf(ctx.channel));
        const groups: { id: string; name: string }[] = [];
        let next: string | undefined = '/api/dev/groups';
        for (let page = 0; next && page < GROUP_PAGES; page++) {
          // nextPage is a path on MeWe's host; never follow it elsewhere.
          const url = new URL(next, ctx.urls.site);
          if (url.origin !== new URL(ctx.urls.site).origin) break;
          const answer: { groups?: { groupId: string; name: string }[]; nextPage?: string } = await ctx.http.json(url.toString(), {
            headers: userHeaders(ctx, token),
          });
          for (const g of answer.groups ?? []) groups.push({ id: String(g.groupId), name: g.name });
          next = answer.nextPage || undefined;
        }
        return groups;
      },
    },
  },
};
