/**
 * VK: posts on the user's own wall through the VK API (wall.post), connected
 * with VK ID (OAuth 2.1, PKCE mandatory). VK ID sends back a `device_id` with
 * the code; it is needed for the code exchange and for every refresh, so it is
 * kept in the channel's config next to the rotating refresh token.
 *
 * The VK API answers failures with HTTP 200 and `{"error":{error_code,…}}`:
 * `readAnswer` reads them. Each post and comment carries a `guid` (the item's
 * id) that VK uses to drop a repeat, so a request whose answer was lost is
 * simply sent again. Thread items become comments on the post.
 */
import crypto from 'node:crypto';
import { z } from 'zod';
import type { NetworkAnswer, Verdict } from '../adapter-kit/http-failures.ts';
import { mediaBlob, mediaFilename } from '../adapter-kit/media-bytes.ts';
import { authorizationUrl } from '../adapter-kit/oauth2-tokens.ts';
import { currentFigures } from '../adapter-kit/analytics-series.ts';
import type { MediaRef, NetworkContext, Provider, PublishChannel, PublishContext, PublishResult, RecentPost, TokenConfig } from '../types.ts';
import { PublishError } from '../errors.ts';

/** `wall` to post, `photos` and `video` to attach media; the personal info names the channel. */
const SCOPES = ['vkid.personal_info', 'wall', 'photos', 'video'];
/** The version of VK's API schema this adapter was written against (HERALD_VK_API_VERSION overrides). */
const DEFAULT_VERSION = '5.199';
const MAX_IMAGE_BYTES = 50 * 1024 * 1024;
const MAX_VIDEO_BYTES = 2 * 1024 * 1024 * 1024;
/** How long VK drops a repeated guid: older docs say an hour (unconfirmed today), so not longer. */
const GUID_WINDOW_MS = 60 * 60_000;

interface Config extends TokenConfig {
  userId: string;
  /** VK ID's device id from the callback: needed for every refresh. */
  deviceId: string;
}

/** VK API error codes by what they mean for a publish (errors.json of the API schema). */
const RECONNECT = new Set([5, 17, 18, 3303]);
const HOURS_BACK_OFF: Record<number, number> = { 9: 60 * 60_000, 29: 24 * 60 * 60_000 };

/**
 * VK API errors come inside HTTP 200 bodies; VK ID (the token endpoint) says
 * `{"error":"invalid_grant","error_description":…}`.
 */
function readAnswer({ body }: NetworkAnswer): Verdict | undefined {
  const error = body?.error;
  if (typeof error === 'string') {
    const detail = `${error}${body.error_description ? `: ${body.error_description}` : ''}`;
    return { kind: error === 'invalid_grant' || error === 'invalid_token' || error === 'invalid_client' ? 'auth' : 'refused', detail, code: error };
  }
  if (!error || typeof error !== 'object' || typeof error.error_code !== 'number') return undefined;
  const code: number = error.error_code;
  const detail = `error ${code}: ${error.error_msg ?? 'no message'}`;
  if (RECONNECT.has(code)) return { kind: 'auth', detail, code };
  if (code === 6) return { kind: 'retryable', detail, code, retryAfterMs: 1_000 };
  if (HOURS_BACK_OFF[code]) return { kind: 'retryable', detail, code, retryAfterMs: HOURS_BACK_OFF[code] };
  if (code === 1 || code === 10) return { kind: 'server', detail, code };
  if (code === 14) return { kind: 'refused', detail: `${detail} (VK wants a captcha solved, which a scheduler cannot do: post it on vk.com)`, code };
  if (code === 214) return { kind: 'refused', detail: `${detail} (VK allows at most 50 wall posts a day; try again tomorrow)`, code };
  return { kind: 'refused', detail, code };
}

/** Calls one method tries this often when VK says it is over 3 requests a second. */
const RATE_TRIES = 3;

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new PublishError('retryable', 'VK: stopped while waiting out the request rate'));
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(new PublishError('retryable', 'VK: stopped while waiting out the request rate'));
      },
      { once: true },
    );
  });
}

function configOf(channel: PublishChannel<Config>): Config {
  return channel.config;
}

/** Calls an API method with a form POST (long texts fit; the token stays out of URLs). */
async function method<T = any>(
  ctx: NetworkContext,
  token: string | undefined,
  name: string,
  params: Record<string, string | undefined>,
  repeatable = true,
): Promise<T> {
  const request = { form: { ...params, access_token: token, v: ctx.app.API_VERSION || DEFAULT_VERSION }, repeatable };
  let answer: { response?: T } | undefined;
  for (let tries = 1; ; tries++) {
    try {
      answer = await ctx.http.json<{ response?: T }>(`${ctx.urls.api}/method/${name}`, request);
      break;
    } catch (err) {
      // Error 6 (over 3 requests a second) means VK did nothing: wait the second out here, a few times.
      if (!(err instanceof PublishError) || err.code !== 6 || tries >= RATE_TRIES) throw err;
      await pause(err.retryAfterMs ?? 1_000, ctx.signal);
    }
  }
  if (answer?.response === undefined) {
    throw new PublishError(
      repeatable ? 'retryable' : 'unknown',
      `VK answered ${name} without a response, so the outcome is unknown. Check the wall before retrying.`,
    );
  }
  return answer.response;
}

/** Token calls to VK ID: the code exchange and the refresh (which rotates the refresh token). */
async function idToken(ctx: NetworkContext, form: Record<string, string | undefined>): Promise<Record<string, any>> {
  const answer = await ctx.http.json<Record<string, any>>(`${ctx.urls.auth}/oauth2/auth`, { form: { client_id: ctx.app.CLIENT_ID, ...form } });
  if (!answer?.access_token) throw new PublishError('auth', 'VK ID gave no access token');
  return answer;
}

function tokenFields(answer: Record<string, any>): TokenConfig & Record<string, unknown> {
  const seconds = Number(answer.expires_in);
  return {
    accessToken: answer.access_token,
    ...(answer.refresh_token ? { refreshToken: answer.refresh_token } : {}),
    ...(seconds > 0 ? { expiresAt: Date.now() + seconds * 1000 } : {}),
  };
}

function postUrl(owner: string, postId: string, commentId?: string): string {
  return `https://vk.com/wall${owner}_${postId}${commentId ? `?reply=${commentId}` : ''}`;
}

/** A release id: `<owner>_<post>` for the post, `<owner>_<post>_<comment>` for a comment on it. */
function parseRelease(releaseId: string): { owner: string; postId: string; commentId?: string } {
  const [owner, postId, commentId] = releaseId.split('_');
  return { owner, postId, commentId };
}

/** An uploaded file's attachment string; kept per post item so a retry does not upload it again. */
async function attachment(ctx: PublishContext<Config>, config: Config, media: MediaRef): Promise<string> {
  const key = `vk-media:${crypto
    .createHash('sha256')
    .update(`${media.id}:${media.alt ?? ''}`)
    .digest('base64url')}`;
  const kept = await ctx.progress.get(key);
  if (kept) return kept;
  const made = media.mimeType.startsWith('video/') ? await uploadVideo(ctx, config, media) : await uploadPhoto(ctx, config, media);
  await ctx.progress.set(key, made);
  return made;
}

/** Posts multipart to an upload server VK named; an upload publishes nothing, so it is safe to repeat. */
async function sendFile(ctx: PublishContext<Config>, url: string, field: string, media: MediaRef, maxBytes: number): Promise<any> {
  const form = new FormData();
  form.append(field, await mediaBlob(media, maxBytes, 'VK'), mediaFilename(media));
  return ctx.http.json(url, { method: 'POST', body: form, repeatable: true, timeoutMs: 10 * 60_000 });
}

/** getWallUploadServer → upload (field `photo`) → saveWallPhoto, whose server/photo/hash must be the upload's. */
async function uploadPhoto(ctx: PublishContext<Config>, config: Config, media: MediaRef): Promise<string> {
  const server = await method<{ upload_url: string }>(ctx, config.accessToken, 'photos.getWallUploadServer', {});
  const uploaded = await sendFile(ctx, server.upload_url, 'photo', media, MAX_IMAGE_BYTES);
  if (!uploaded?.photo || uploaded.photo === '[]') {
    throw new PublishError('refused', `VK did not take the image ${mediaFilename(media)}${uploaded?.error ? `: ${uploaded.error}` : ''}`);
  }
  const saved = await method<{ id: number; owner_id: number }[]>(ctx, config.accessToken, 'photos.saveWallPhoto', {
    photo: uploaded.photo,
    server: String(uploaded.server),
    hash: uploaded.hash,
    user_id: config.userId,
    caption: media.alt ?? undefined,
  });
  if (!saved?.[0]) throw new PublishError('retryable', 'VK saved no photo');
  return `photo${saved[0].owner_id}_${saved[0].id}`;
}

/** video.save (not posted to the wall by itself) → upload (field `video_file`); VK transcodes it after. */
async function uploadVideo(ctx: PublishContext<Config>, config: Config, media: MediaRef): Promise<string> {
  const slot = await method<{ upload_url: string; video_id: number; owner_id: number }>(ctx, config.accessToken, 'video.save', {
    name: media.alt ?? mediaFilename(media),
    wallpost: '0',
  });
  const uploaded = await sendFile(ctx, slot.upload_url, 'video_file', media, MAX_VIDEO_BYTES);
  return `video${slot.owner_id}_${uploaded?.video_id ?? slot.video_id}`;
}

type WallItem = { id: number; owner_id: number; from_id?: number; text: string; date: number; attachments?: unknown[] };

async function wallGet(ctx: NetworkContext, config: Config, count: number): Promise<WallItem[]> {
  const answer = await method<{ items: WallItem[] }>(ctx, config.accessToken, 'wall.get', { owner_id: config.userId, count: String(count), filter: 'owner' });
  return answer.items ?? [];
}

/** VK keeps the text as sent, but trims it and may turn CRLF into LF. */
function sameText(a: string, b: string): boolean {
  const norm = (s: string) => s.replace(/\r\n/g, '\n').trim();
  return norm(a) === norm(b);
}

export const vk: Provider<Config> = {
  identifier: 'vk',
  name: 'VK',
  auth: 'oauth2',
  readAnswer,
  // Some integrations use id.vk.ru / api.vk.ru: both hosts are configurable.
  urls: { auth: 'https://id.vk.com', api: 'https://api.vk.com' },
  appSettings: ['CLIENT_ID'],
  optionalSettings: ['API_VERSION'],
  connectNote: 'VK posts go to your own wall. VK allows about 50 wall posts a day and may ask for a captcha, which only you can solve on vk.com.',
  settings: z.object({}),
  rules: {
    // The limit providers.md gives; VK's own is higher but unconfirmed.
    maxLength: 2048,
    maxMedia: 10,
    mediaKinds: ['image', 'video'],
    threads: true,
    media: { imageTypes: ['image/jpeg', 'image/png', 'image/gif'], maxImageBytes: MAX_IMAGE_BYTES },
  },
  // VK caps wall posts at 50 a day per user.
  pacing: { perChannel: { count: 50, windowMs: 24 * 60 * 60_000 } },

  oauth: {
    pkce: true,
    async start({ urls, app, state, redirectUri, codeChallenge }) {
      return {
        url: authorizationUrl(`${urls.auth}/authorize`, {
          clientId: app.CLIENT_ID,
          redirectUri,
          state,
          scopes: SCOPES,
          codeChallenge,
          // VK ID spells the method in lower case.
          extra: { code_challenge_method: 's256' },
        }),
      };
    },

    async finish(ctx) {
      const deviceId = ctx.query.device_id;
      if (!deviceId) throw new PublishError('refused', 'VK ID sent no device_id with the code; start connecting again');
      const answer = await idToken(ctx, {
        grant_type: 'authorization_code',
        code: ctx.query.code,
        code_verifier: ctx.codeVerifier,
        device_id: deviceId,
        redirect_uri: ctx.redirectUri,
        state: ctx.query.state,
      });
      const granted = String(answer.scope ?? '').split(/[\s,]+/);
      if (answer.scope !== undefined && !granted.includes('wall')) {
        throw new PublishError(
          'refused',
          'the permission to post on your wall (wall) was not granted; enable it for the app in the VK ID cabinet and connect again',
        );
      }
      const info = await ctx.http.json<{ user?: { user_id: string | number; first_name?: string; last_name?: string; avatar?: string } }>(
        `${ctx.urls.auth}/oauth2/user_info`,
        { form: { client_id: ctx.app.CLIENT_ID, access_token: answer.access_token } },
      );
      const userId = String(info?.user?.user_id ?? answer.user_id ?? '');
      if (!userId) throw new PublishError('refused', 'VK ID did not say which user connected');
      const name = [info?.user?.first_name, info?.user?.last_name].filter(Boolean).join(' ') || `id${userId}`;
      const config: Config = { ...tokenFields(answer), userId, deviceId };
      return [{ externalId: userId, name, picture: info?.user?.avatar ?? null, profile: `id${userId}`, config: { ...config } }];
    },
  },

  async refresh(ctx) {
    const config = configOf(ctx.channel);
    if (!config.refreshToken || !config.deviceId) throw new PublishError('auth', 'VK gave this channel no refresh token, so it must be connected again');
    // VK rotates the refresh token: the answer's replaces the spent one.
    const answer = await idToken(ctx, {
      grant_type: 'refresh_token',
      refresh_token: config.refreshToken,
      device_id: config.deviceId,
      state: crypto.randomBytes(16).toString('base64url'),
    });
    return tokenFields(answer);
  },

  // The guid is the post item's id: VK drops a second wall.post / createComment with it.
  repeatDropped: { by: 'VK drops a post or comment whose guid it has already seen', withinMs: GUID_WINDOW_MS },

  async publish(ctx) {
    const config = configOf(ctx.channel);
    const attachments: string[] = [];
    for (const media of ctx.item.media) attachments.push(await attachment(ctx, config, media));
    const common = {
      message: ctx.item.content || undefined,
      attachments: attachments.length > 0 ? attachments.join(',') : undefined,
      guid: ctx.idempotencyKey,
    };
    if (ctx.replyTo) {
      const parent = parseRelease(ctx.replyTo.releaseId);
      const made = await method<{ comment_id: number }>(
        ctx,
        config.accessToken,
        'wall.createComment',
        { ...common, owner_id: parent.owner, post_id: parent.postId, reply_to_comment: parent.commentId },
        false,
      );
      const id = String(made.comment_id);
      return { releaseId: `${parent.owner}_${parent.postId}_${id}`, releaseUrl: postUrl(parent.owner, parent.postId, id) };
    }
    const made = await method<{ post_id: number }>(ctx, config.accessToken, 'wall.post', { ...common, owner_id: config.userId }, false);
    const id = String(made.post_id);
    return { releaseId: `${config.userId}_${id}`, releaseUrl: postUrl(config.userId, id) };
  },

  /** After an unknown outcome past the guid window: the wall (or the post's comments), matched on text and time. */
  async findPublished(ctx) {
    const config = configOf(ctx.channel);
    const since = Math.floor(ctx.item.publishAt.getTime() / 1000) - 60;
    const fits = (item: { text: string; date: number }) => item.date >= since && sameText(item.text, ctx.item.content);
    if (ctx.replyTo) {
      const parent = parseRelease(ctx.replyTo.releaseId);
      const comments = await method<{ items: { id: number; text: string; date: number }[] }>(ctx, config.accessToken, 'wall.getComments', {
        owner_id: parent.owner,
        post_id: parent.postId,
        count: '50',
        sort: 'desc',
      });
      const found = (comments.items ?? []).find(fits);
      return found ? { releaseId: `${parent.owner}_${parent.postId}_${found.id}`, releaseUrl: postUrl(parent.owner, parent.postId, String(found.id)) } : null;
    }
    const found = (await wallGet(ctx, config, 10)).find(fits);
    return found ? ({ releaseId: `${found.owner_id}_${found.id}`, releaseUrl: postUrl(String(found.owner_id), String(found.id)) } as PublishResult) : null;
  },

  async recentPosts(ctx) {
    const config = configOf(ctx.channel);
    return (await wallGet(ctx, config, 20)).map(
      (p): RecentPost => ({ id: `${p.owner_id}_${p.id}`, url: postUrl(String(p.owner_id), String(p.id)), text: p.text, at: p.date * 1000 }),
    );
  },

  // VK gives counters as they stand (statistics over time are for communities only).
  analytics: {
    async channel(ctx) {
      const config = configOf(ctx.channel);
      const [user] = await method<{ followers_count?: number; counters?: { friends?: number } }[]>(ctx, config.accessToken, 'users.get', {
        user_ids: config.userId,
        fields: 'followers_count,counters',
      });
      return currentFigures({ Followers: user?.followers_count, Friends: user?.counters?.friends });
    },
    async post(ctx) {
      const config = configOf(ctx.channel);
      const { owner, postId } = parseRelease(ctx.releaseId);
      const answer = await method<any>(ctx, config.accessToken, 'wall.getById', { posts: `${owner}_${postId}` });
      // Newer API versions wrap the list in {items}.
      const post = (Array.isArray(answer) ? answer : answer?.items)?.[0];
      if (!post) throw new PublishError('refused', `VK no longer shows the post ${owner}_${postId} (deleted?)`);
      return currentFigures({
        Views: post.views?.count,
        Likes: post.likes?.count,
        Reposts: post.reposts?.count,
        Comments: post.comments?.count,
      });
    },
  },
};
