/**
 * TikTok (Content Posting API v2): a post is one video or up to 35 photos,
 * posted directly or sent to the user's TikTok inbox to finish in the app.
 * A video is uploaded in chunks (FILE_UPLOAD), photos are pulled by TikTok from
 * their public URLs (PULL_FROM_URL); either way TikTok publishes later, so the
 * publish status is polled until TikTok says it is done.
 */
import { z } from 'zod';
import { errorMessage, type NetworkAnswer, type Verdict } from '../adapter-kit/http-failures.ts';
import type { FollowUpState, MediaRef, NetworkContext, Provider, PublishContext, TokenConfig } from '../types.ts';
import { PublishError } from '../errors.ts';
import { authorizationUrl } from '../adapter-kit/oauth2-tokens.ts';
import { currentFigures } from '../adapter-kit/analytics-series.ts';

// user.info.stats and video.list are for analytics only: a user who unticks them can still post.
const SCOPES = ['user.info.basic', 'user.info.profile', 'video.publish', 'video.upload', 'user.info.stats', 'video.list'];
export const PRIVACY = ['PUBLIC_TO_EVERYONE', 'MUTUAL_FOLLOW_FRIENDS', 'FOLLOWER_OF_CREATOR', 'SELF_ONLY'] as const;

/** Chunks of 10 MB: inside TikTok's 5–64 MB window, so a 4 GB video stays far below 1000 chunks. */
export const CHUNK_BYTES = 10 * 1024 * 1024;
/** Below 5 MB TikTok wants the whole file as one chunk. */
const SINGLE_CHUNK_BELOW = 5 * 1024 * 1024;
/** Status fetch allows 30 calls a minute per user. */
const POLL_INTERVAL_MS = 2_000;
/** How long one publish follows TikTok's processing before following it in the background (HERALD_TIKTOK_STATUS_WAIT_SECONDS). */
const DEFAULT_STATUS_WAIT_S = 40;
/** Background looks: while TikTok processes, and while a public post awaits its public id (moderation). */
const PROCESSING_CHECK_MS = 30_000;
const MODERATION_CHECK_MS = 10 * 60_000;

/** A post's TikTok settings; TikTok for Business takes the same fields (and a sound). */
export const settings = z.object({
  title: z.string().max(90).optional().describe('Title of a photo post'),
  privacy_level: z.enum(PRIVACY).describe("Who can see the post; must be one of the account's options"),
  duet: z.boolean().describe('Allow duets (videos)'),
  stitch: z.boolean().describe('Allow stitches (videos)'),
  comment: z.boolean().describe('Allow comments'),
  brand_content_toggle: z.boolean().describe('Paid partnership promoting a third-party brand'),
  brand_organic_toggle: z.boolean().describe("Promotes the creator's own business"),
  autoAddMusic: z.enum(['yes', 'no']).describe('Let TikTok add music to a photo post'),
  content_posting_method: z.enum(['DIRECT_POST', 'UPLOAD']).describe('DIRECT_POST publishes; UPLOAD sends the media to the TikTok inbox to finish in the app'),
  video_made_with_ai: z.boolean().optional().describe('The video is AI-generated'),
});
type Settings = z.infer<typeof settings>;

interface Config extends TokenConfig {
  username?: string;
}

/** Splits a video into TikTok's chunks: equal chunks, the remainder added to the last. */
export function chunkPlan(size: number): { chunkSize: number; count: number } {
  if (size < SINGLE_CHUNK_BELOW) return { chunkSize: size, count: 1 };
  const chunkSize = Math.min(CHUNK_BYTES, size);
  return { chunkSize, count: Math.floor(size / chunkSize) };
}

/** Every TikTok answer carries error.code, with HTTP 200 for many failures; "ok" is the only success. */
function readAnswer({ body }: NetworkAnswer): Verdict | undefined {
  const code: unknown = body?.error?.code;
  if (typeof code !== 'string' || code === 'ok') return undefined;
  const detail = `${code}${body.error.message ? `: ${body.error.message}` : ''}`;
  if (code === 'access_token_invalid') return { kind: 'auth', detail, code };
  // A scope the user unticked: a refresh cannot add it, so the channel ends up needing a reconnect.
  if (code === 'scope_not_authorized' || code === 'scope_permission_missed')
    return { kind: 'auth', detail: `${detail} (connect the channel again and grant every permission Herald asks for)`, code };
  if (code === 'rate_limit_exceeded') return { kind: 'retryable', detail, code };
  if (code === 'internal_error') return { kind: 'server', detail, code };
  return { detail, code };
}

/**
 * Calls that read, or open an upload that publishes nothing until its bytes
 * arrive: safe to repeat after a server error. A photo post's init publishes.
 */
const REPEATABLE = new Set([
  '/v2/post/publish/status/fetch/',
  '/v2/post/publish/creator_info/query/',
  '/v2/user/info/',
  '/v2/video/query/',
  '/v2/post/publish/video/init/',
  '/v2/post/publish/inbox/video/init/',
]);

function isRepeatable(path: string): boolean {
  return REPEATABLE.has(path.split('?')[0]);
}

/** Post ids are int64: JSON numbers that long lose digits, so they are read as strings. */
function bigIntsAsStrings(raw: string): string {
  return raw.replace(/([:[,]\s*)(-?\d{16,})(?=\s*[,\]}])/g, '$1"$2"');
}

async function tiktokCall<T = any>(ctx: NetworkContext, token: string | undefined, path: string, body?: unknown, method = 'POST'): Promise<T> {
  const answer = await ctx.http.json<{ data: T }>(`${ctx.urls.api}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(method === 'POST' ? { 'content-type': 'application/json; charset=UTF-8' } : {}) },
    ...(body === undefined ? {} : { json: body }),
    repeatable: isRepeatable(path),
    parseJson: (raw) => JSON.parse(bigIntsAsStrings(raw)),
  });
  // Every TikTok answer has a body; an empty one says nothing of the outcome.
  if (answer === undefined)
    throw new PublishError(isRepeatable(path) ? 'retryable' : 'unknown', 'TikTok answered with an empty body. Check the account before retrying.');
  return answer.data;
}

async function tokenRequest(ctx: NetworkContext, form: Record<string, string | undefined>): Promise<TokenConfig & { scope?: string; openId?: string }> {
  const answer = await ctx.http.json<any>(`${ctx.urls.api}/v2/oauth/token/`, {
    form: { client_key: ctx.app.CLIENT_KEY, client_secret: ctx.app.CLIENT_SECRET, ...form },
  });
  // The token endpoint reports errors in the body, sometimes with a 200.
  if (!answer?.access_token) throw new PublishError('refused', `TikTok refused the token request: ${errorMessage(answer) ?? 'no access token in the answer'}`);
  return {
    accessToken: answer.access_token,
    refreshToken: answer.refresh_token,
    expiresAt: Date.now() + Number(answer.expires_in ?? 0) * 1000,
    scope: answer.scope,
    openId: answer.open_id,
  };
}

/** Sends the video in its chunks, in order, as TikTok's media transfer guide describes. */
async function uploadChunks(ctx: PublishContext<Config>, uploadUrl: string, video: MediaRef, plan: { chunkSize: number; count: number }): Promise<void> {
  const stream = await video.open();
  let buffered: Buffer[] = [];
  let length = 0;
  let first = 0;
  let index = 0;
  const send = async (bytes: Buffer, final = false) => {
    const last = first + bytes.length - 1;
    // Nothing is published until every chunk arrived, so a failed chunk is safe to send again (PUT); but the
    // final chunk completes the upload and TikTok then publishes: after it, a server error is an unknown outcome.
    await ctx.http.call(uploadUrl, {
      method: 'PUT',
      headers: { 'content-type': video.mimeType, 'content-length': String(bytes.length), 'content-range': `bytes ${first}-${last}/${video.size}` },
      body: new Uint8Array(bytes),
      timeoutMs: 10 * 60_000,
      repeatable: !final,
    });
    first = last + 1;
    index++;
  };
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    buffered.push(chunk);
    length += chunk.length;
    // The last chunk takes the remainder, so only full chunks before it are sent early.
    while (index < plan.count - 1 && length >= plan.chunkSize) {
      const all = Buffer.concat(buffered);
      await send(all.subarray(0, plan.chunkSize));
      buffered = [all.subarray(plan.chunkSize)];
      length = buffered[0].length;
    }
  }
  await send(Buffer.concat(buffered), true);
}

interface Status {
  status: string;
  fail_reason?: string;
  publicaly_available_post_id?: (string | number)[];
}

/** How a publish stands, as the status endpoint says; PROCESSING_* while TikTok works on it. */
function standing(status: Status, username: string | undefined, releaseId: string): FollowUpState {
  if (status.status === 'FAILED') return { state: 'failed', reason: status.fail_reason ?? 'no reason given' };
  if (status.status === 'SEND_TO_USER_INBOX') return { state: 'done' };
  const postId = status.publicaly_available_post_id?.[0];
  if (status.status === 'PUBLISH_COMPLETE' && postId !== undefined) {
    const id = String(postId);
    // Photo posts have publish ids of their own kind (p_pub_…) and /photo/ addresses.
    return {
      state: 'done',
      releaseId: id,
      releaseUrl: username ? `https://www.tiktok.com/@${username}/${releaseId.startsWith('p_') ? 'photo' : 'video'}/${id}` : null,
    };
  }
  // Live but not yet public (moderation gives the public id later), or still processing.
  return { state: 'waiting', checkAfterMs: status.status === 'PUBLISH_COMPLETE' ? MODERATION_CHECK_MS : PROCESSING_CHECK_MS };
}

function fetchStatus(ctx: NetworkContext, token: string | undefined, publishId: string): Promise<Status> {
  return tiktokCall<Status>(ctx, token, '/v2/post/publish/status/fetch/', { publish_id: publishId });
}

/**
 * Follows the publish for a while (most finish within seconds) until TikTok has
 * made it live or failed it; what is still processing then is followed in the background.
 */
async function waitForPublish(
  ctx: PublishContext<Config>,
  token: string | undefined,
  publishId: string,
  username: string | undefined,
): Promise<{ live: boolean; state: FollowUpState }> {
  const waitMs = Number(ctx.app.STATUS_WAIT_SECONDS || DEFAULT_STATUS_WAIT_S) * 1000;
  const deadline = Date.now() + waitMs;
  for (;;) {
    const status = await fetchStatus(ctx, token, publishId);
    const state = standing(status, username, publishId);
    const live = status.status === 'PUBLISH_COMPLETE';
    if (live || state.state !== 'waiting' || Date.now() + POLL_INTERVAL_MS > deadline) return { live, state };
    await new Promise((r) => setTimeout(r, POLL_INTERVAL_MS));
  }
}

export const tiktok: Provider<Config> = {
  identifier: 'tiktok',
  name: 'TikTok',
  auth: 'oauth2',
  urls: { auth: 'https://www.tiktok.com', api: 'https://open.tiktokapis.com' },
  readAnswer,
  appSettings: ['CLIENT_KEY', 'CLIENT_SECRET'],
  optionalSettings: ['STATUS_WAIT_SECONDS'],
  settings,
  rules: {
    // Video captions are counted in UTF-16 units.
    maxLength: 2200,
    counting: 'utf16',
    maxMedia: 35,
    minMedia: 1,
    mediaKinds: ['image', 'video'],
    threads: false,
    // Photo posts take JPEG and WebP up to 20 MB and 1080p, never PNG.
    media: { imageTypes: ['image/jpeg', 'image/webp'], maxImageBytes: 20 * 1024 * 1024, maxImageSide: 1920 },
  },
  // TikTok's limits (6 inits a minute, 30 status fetches) are per user token, not per app: no shared pacing.

  oauth: {
    // The web flow authenticates with the client secret; TikTok documents PKCE only for desktop and mobile apps.
    pkce: false,
    async start({ urls, app, state, redirectUri }) {
      return {
        url: authorizationUrl(`${urls.auth}/v2/auth/authorize/`, {
          clientId: app.CLIENT_KEY,
          clientIdParam: 'client_key',
          redirectUri,
          state,
          scopes: SCOPES,
          scopeSeparator: ',',
        }),
      };
    },

    async finish(ctx) {
      const token = await tokenRequest(ctx, { code: ctx.query.code, grant_type: 'authorization_code', redirect_uri: ctx.redirectUri });
      const granted = (token.scope ?? '').split(',');
      if (token.scope !== undefined && !granted.includes('video.publish') && !granted.includes('video.upload')) {
        throw new PublishError('refused', 'the permission to post videos was not granted; connect again and allow posting');
      }
      const info = await tiktokCall<{ user: { open_id: string; display_name?: string; username?: string; avatar_url?: string } }>(
        ctx,
        token.accessToken,
        '/v2/user/info/?fields=open_id,union_id,avatar_url,display_name,username',
        undefined,
        'GET',
      );
      const user = info.user;
      return [
        {
          externalId: user.open_id ?? token.openId,
          name: user.display_name || user.username || 'TikTok account',
          picture: user.avatar_url ?? null,
          profile: user.username ?? null,
          config: { accessToken: token.accessToken, refreshToken: token.refreshToken, expiresAt: token.expiresAt, username: user.username },
        },
      ];
    },
  },

  async refresh(ctx) {
    const { refreshToken } = ctx.channel.config;
    if (!refreshToken) throw new PublishError('auth', 'no refresh token was stored for this channel');
    // TikTok rotates refresh tokens: the new one is stored, the old one stops working.
    const { accessToken, refreshToken: next, expiresAt } = await tokenRequest(ctx, { grant_type: 'refresh_token', refresh_token: refreshToken });
    return { accessToken, refreshToken: next, expiresAt };
  },

  async publish(ctx) {
    const config = ctx.channel.config;
    const token = config.accessToken;
    const s = ctx.item.settings as Settings;
    const direct = s.content_posting_method !== 'UPLOAD';
    const videos = ctx.item.media.filter((m) => m.mimeType.startsWith('video/'));
    const photos = ctx.item.media.filter((m) => m.mimeType.startsWith('image/'));
    if (videos.length > 0 && (videos.length > 1 || photos.length > 0))
      throw new PublishError('refused', 'TikTok posts are one video or photos only, never both');
    if (videos.length === 0 && photos.length === 0) throw new PublishError('refused', 'TikTok posts need a video or photos');

    // TikTok's posting rules: ask the creator's current options before every direct post.
    const creator = await tiktokCall<{
      privacy_level_options?: string[];
      comment_disabled?: boolean;
      duet_disabled?: boolean;
      stitch_disabled?: boolean;
      max_video_post_duration_sec?: number;
    }>(ctx, token, '/v2/post/publish/creator_info/query/');
    if (direct && creator.privacy_level_options && !creator.privacy_level_options.includes(s.privacy_level)) {
      throw new PublishError(
        'refused',
        `privacy_level ${s.privacy_level} is not allowed for this TikTok account; it allows ${creator.privacy_level_options.join(', ')}`,
      );
    }
    const video = videos[0];
    if (video?.duration && creator.max_video_post_duration_sec && video.duration > creator.max_video_post_duration_sec) {
      throw new PublishError(
        'refused',
        `the video is ${Math.round(video.duration)} s long, but this TikTok account can post at most ${creator.max_video_post_duration_sec} s`,
      );
    }

    let publishId: string;
    if (video) {
      const plan = chunkPlan(video.size);
      const source_info = { source: 'FILE_UPLOAD', video_size: video.size, chunk_size: plan.chunkSize, total_chunk_count: plan.count };
      const init = direct
        ? await tiktokCall<{ publish_id: string; upload_url: string }>(ctx, token, '/v2/post/publish/video/init/', {
            post_info: {
              title: ctx.item.content,
              privacy_level: s.privacy_level,
              disable_duet: !s.duet || creator.duet_disabled === true,
              disable_stitch: !s.stitch || creator.stitch_disabled === true,
              disable_comment: !s.comment || creator.comment_disabled === true,
              brand_content_toggle: s.brand_content_toggle,
              brand_organic_toggle: s.brand_organic_toggle,
              is_aigc: s.video_made_with_ai === true,
            },
            source_info,
          })
        : await tiktokCall<{ publish_id: string; upload_url: string }>(ctx, token, '/v2/post/publish/inbox/video/init/', { source_info });
      publishId = init.publish_id;
      try {
        await uploadChunks(ctx, init.upload_url, video, plan);
      } catch (err) {
        // The final chunk's answer was lost (a 5xx, a timeout): TikTok may hold the whole video and be publishing it.
        // The publish's status says; unless it shows the post live or ended, the outcome stays unknown.
        if (!(err instanceof PublishError) || err.kind !== 'unknown') throw err;
        const { live, state } = await waitForPublish(ctx, token, publishId, config.username).catch(() => ({ live: false, state: undefined }));
        if (!live && state?.state !== 'done' && state?.state !== 'failed') throw err;
      }
    } else {
      const init = await tiktokCall<{ publish_id: string }>(ctx, token, '/v2/post/publish/content/init/', {
        media_type: 'PHOTO',
        post_mode: direct ? 'DIRECT_POST' : 'MEDIA_UPLOAD',
        post_info: {
          title: s.title ?? '',
          description: ctx.item.content,
          ...(direct
            ? {
                privacy_level: s.privacy_level,
                disable_comment: !s.comment || creator.comment_disabled === true,
                auto_add_music: s.autoAddMusic === 'yes',
                brand_content_toggle: s.brand_content_toggle,
                brand_organic_toggle: s.brand_organic_toggle,
              }
            : {}),
        },
        source_info: { source: 'PULL_FROM_URL', photo_images: photos.map((p) => p.url), photo_cover_index: 0 },
      });
      publishId = init.publish_id;
    }

    const { live, state: status } = await waitForPublish(ctx, token, publishId, config.username);
    // Live without a public id: only public posts get one, after moderation.
    if (live && status.state === 'waiting' && s.privacy_level !== 'PUBLIC_TO_EVERYONE') return { releaseId: publishId, releaseUrl: null };
    if (status.state === 'failed') throw new PublishError('refused', `TikTok could not publish the post: ${status.reason}`);
    if (status.state === 'done') return { releaseId: status.releaseId ?? publishId, releaseUrl: status.releaseUrl ?? null };
    // TikTok has it but has not finished: the publish id stands for the post until it says how it ended.
    return { releaseId: publishId, releaseUrl: null, followUp: { afterMs: status.checkAfterMs ?? PROCESSING_CHECK_MS } };
  },

  async followUp(ctx) {
    const config = ctx.channel.config;
    return standing(await fetchStatus(ctx, config.accessToken, ctx.releaseId), config.username, ctx.releaseId);
  },

  // TikTok gives totals as they stand, no history: one point each, dated today.
  analytics: {
    async channel(ctx) {
      const config = ctx.channel.config;
      const info = await tiktokCall<{ user?: { follower_count?: number; following_count?: number; likes_count?: number; video_count?: number } }>(
        ctx,
        config.accessToken,
        '/v2/user/info/?fields=follower_count,following_count,likes_count,video_count',
        undefined,
        'GET',
      );
      const user = info.user ?? {};
      return currentFigures({ Followers: user.follower_count, Following: user.following_count, Likes: user.likes_count, Videos: user.video_count });
    },

    async post(ctx) {
      // Until TikTok names the public post (processing, moderation, or an inbox upload finished in the app) Herald holds only a publish id.
      if (!/^\d+$/.test(ctx.releaseId)) {
        throw new PublishError(
          'refused',
          `TikTok has not given this post its public id yet (it still has the publish id ${ctx.releaseId}: ` +
            'processing, in moderation, or sent to the TikTok inbox), so it has no figures yet',
        );
      }
      const config = ctx.channel.config;
      const answer = await tiktokCall<{
        videos?: { id: string | number; like_count?: number; comment_count?: number; share_count?: number; view_count?: number }[];
      }>(ctx, config.accessToken, '/v2/video/query/?fields=id,like_count,comment_count,share_count,view_count', { filters: { video_ids: [ctx.releaseId] } });
      // TikTok lists only the account's own videos that it still has.
      const video = answer.videos?.find((v) => String(v.id) === ctx.releaseId);
      if (!video) throw new PublishError('refused', `TikTok does not list post ${ctx.releaseId} among this account's videos (deleted, or not a video)`);
      return currentFigures({ Views: video.view_count, Likes: video.like_count, Comments: video.comment_count, Shares: video.share_count });
    },
  },
};
