/**
 * TikTok for Business (Business API v1.3, organic posting): a post is one video
 * or 1–35 photos on a TikTok account connected through a Business developer
 * app. TikTok pulls the media from Herald's upload host, which the operator
 * must have verified for the app (else `url_ownership_unverified`).
 *
 * Every answer is HTTP 200 with {code, message, request_id, data}: `code` 0 is
 * success, anything else is read here (`readAnswer`). Calls carry the token in
 * an `Access-Token` header, and the account's `open_id` as `business_id`.
 *
 * A publish cannot be taken back once TikTok returned its `share_id`: the id is
 * kept for the item at once, so a later attempt only follows it (never
 * publishes again), and the status is polled until TikTok names the post.
 */
import { z } from 'zod';
import { PRIVACY, settings as tiktokSettings } from './tiktok.ts';
import { postSettings } from '../adapter-kit/post-settings.ts';
import { currentFigures } from '../adapter-kit/analytics-series.ts';
import type { NetworkAnswer, Verdict } from '../adapter-kit/http-failures.ts';
import type { NetworkRequest } from '../adapter-kit/network-http.ts';
import { authorizationUrl, needRefreshToken } from '../adapter-kit/oauth2-tokens.ts';
import { countText } from '../text-counting.ts';
import type { FollowUpState, NetworkContext, Provider, PublishChannel, PublishContext, PublishResult, TokenConfig } from '../types.ts';
import { PublishError } from '../errors.ts';

const NETWORK = 'TikTok for Business';
const SCOPES = ['user.info.basic', 'user.info.username', 'user.info.stats', 'video.list', 'video.publish', 'video.upload'];
const VIDEO_CAPTION = 2200;
const PHOTO_CAPTION = 4000;
/** How long one publish follows TikTok's work before following it in the background (HERALD_TIKTOK_BUSINESS_STATUS_WAIT_SECONDS). */
const DEFAULT_STATUS_WAIT_S = 40;
/** Looks at the status soon at first (most photo posts finish in a moment), then every 2 s. */
const POLL_STEPS_MS = [250, 500, 1_000, 2_000];
/** Background looks: while TikTok downloads and checks the media, and while the public post id lags behind (up to 3 minutes). */
const PROCESSING_CHECK_MS = 30_000;
const POST_ID_CHECK_MS = 60_000;
/** The item's share_id, kept as soon as TikTok gives it. */
const SHARE_ID = 'tiktok-business:share_id';

const AUTH_CODES = new Set([40104, 40105]);
const RATE_CODES = new Set([40100, 51021]);

const settings = tiktokSettings.extend({
  privacy_level: z.enum(PRIVACY).describe('Who can see a photo post; videos take the account’s default'),
  content_posting_method: z.enum(['DIRECT_POST', 'UPLOAD']).describe('DIRECT_POST publishes; UPLOAD leaves a draft in the TikTok app to finish there'),
  music: z
    .object({
      id: z.string().min(1).describe('A TikTok song clip id'),
      audio_volume: z.number().int().min(0).max(100).default(50),
      video_volume: z.number().int().min(0).max(100).default(50),
    })
    .optional()
    .describe('A commercial sound to add (the API mutes both tracks unless volumes are given; 50 each by default here)'),
});
type Settings = z.infer<typeof settings>;

interface Config extends TokenConfig {
  openId: string;
  username?: string;
}

/** Every answer is 200 with a `code`: 0 is success, the rest is told apart here. */
function readAnswer({ body }: NetworkAnswer): Verdict | undefined {
  const code = body?.code;
  if (typeof code !== 'number' || code === 0) return undefined;
  const message: string = body.message || 'no message';
  const detail = `${message} (code ${code})`;
  if (AUTH_CODES.has(code) || /access token (is incorrect|has expired|.*revoked)|access_token_invalid|auth_removed/i.test(message)) {
    return { kind: 'auth', detail, code };
  }
  if (RATE_CODES.has(code)) return { kind: 'retryable', detail, code, retryAfterMs: 1_000 };
  if (code === 40001)
    return { kind: 'refused', detail: `${detail}: the account or app lacks a permission; connect the channel again granting every permission`, code };
  // Internal errors: TikTok may or may not have acted on the request.
  if (code >= 50000 && code < 51000) return { kind: 'server', detail, code };
  return { kind: 'refused', detail, code };
}

async function call<T = any>(ctx: NetworkContext, token: string | undefined, path: string, request: NetworkRequest = {}): Promise<T> {
  const answer = await ctx.http.json<{ code: number; data: T }>(`${ctx.urls.api}${path}`, {
    ...request,
    headers: { ...(token ? { 'access-token': token } : {}), ...request.headers },
  });
  if (answer === undefined) {
    const repeatable = request.repeatable ?? (request.method ?? 'GET') === 'GET';
    throw new PublishError(repeatable ? 'retryable' : 'unknown', `${NETWORK} answered with an empty body. Check the account before retrying.`);
  }
  return answer.data;
}

function configOf(channel: PublishChannel<Config>): Config {
  return channel.config;
}

/** Business apps accept only redirect URLs that end with "/", and the token call must repeat it exactly. */
function redirectWithSlash(redirectUri: string): string {
  return redirectUri.endsWith('/') ? redirectUri : `${redirectUri}/`;
}

interface TokenData {
  access_token: string;
  refresh_token?: string;
  expires_in?: number;
  open_id?: string;
  scope?: string | string[];
}

function tokenConfig(data: TokenData): TokenConfig & Record<string, unknown> {
  return {
    accessToken: data.access_token,
    ...(data.refresh_token ? { refreshToken: data.refresh_token } : {}),
    ...(data.expires_in ? { expiresAt: Date.now() + Number(data.expires_in) * 1000 } : {}),
  };
}

interface Status {
  status: string;
  post_ids?: (string | number)[];
  reason?: string;
}

function postUrl(config: Config, shareId: string, postId: string): string | null {
  // Photo posts have share ids of their own kind (p_pub_url~…) and /photo/ addresses.
  return config.username ? `https://www.tiktok.com/@${config.username}/${shareId.startsWith('p_') ? 'photo' : 'video'}/${postId}` : null;
}

function profileUrl(config: Config): string | null {
  return config.username ? `https://www.tiktok.com/@${config.username}` : null;
}

/** How a publish stands, from TikTok's status. */
function standing(config: Config, shareId: string, status: Status): FollowUpState {
  if (status.status === 'FAILED') return { state: 'failed', reason: status.reason || 'no reason given' };
  // A draft delivered to the app: final, the person finishes it there.
  if (status.status === 'SEND_TO_USER_INBOX') return { state: 'done', releaseId: shareId, releaseUrl: profileUrl(config) };
  const postId = status.post_ids?.[0];
  if (status.status === 'PUBLISH_COMPLETE' && postId !== undefined) {
    return { state: 'done', releaseId: String(postId), releaseUrl: postUrl(config, shareId, String(postId)) };
  }
  // Live, but its id comes later (public posts only), or still being downloaded and checked.
  return { state: 'waiting', checkAfterMs: status.status === 'PUBLISH_COMPLETE' ? POST_ID_CHECK_MS : PROCESSING_CHECK_MS };
}

function fetchStatus(ctx: NetworkContext, config: Config, shareId: string): Promise<Status> {
  return call<Status>(ctx, config.accessToken, '/business/publish/status/', { query: { business_id: config.openId, publish_id: shareId } });
}

/**
 * Follows the publish for a while; what is not settled then is followed in the
 * background. Nothing here may publish again, so a failure to ask is not the
 * post's failure: it is followed later (an expired token is renewed first).
 */
async function follow(ctx: PublishContext<Config>, config: Config, shareId: string, visibleOnlyToSome: boolean): Promise<PublishResult> {
  const waitMs = Number(ctx.app.STATUS_WAIT_SECONDS || DEFAULT_STATUS_WAIT_S) * 1000;
  const until = Date.now() + waitMs;
  let state: FollowUpState = { state: 'waiting', checkAfterMs: PROCESSING_CHECK_MS };
  for (let look = 0; ; look++) {
    try {
      const status = await fetchStatus(ctx, config, shareId);
      // Only public posts are ever given an id: a live post seen by some people only stays known by its share id.
      if (status.status === 'PUBLISH_COMPLETE' && !status.post_ids?.length && visibleOnlyToSome) return { releaseId: shareId, releaseUrl: profileUrl(config) };
      state = standing(config, shareId, status);
    } catch (err) {
      if (err instanceof PublishError && err.kind === 'auth') throw err;
      break;
    }
    const left = until - Date.now();
    if (state.state !== 'waiting' || left <= 0 || ctx.signal.aborted) break;
    await new Promise((resolve) => setTimeout(resolve, Math.min(POLL_STEPS_MS[Math.min(look, POLL_STEPS_MS.length - 1)], left)));
  }
  if (state.state === 'failed') throw new PublishError('refused', `${NETWORK} could not publish the post: ${state.reason}`);
  if (state.state === 'done') return { releaseId: state.releaseId ?? shareId, releaseUrl: state.releaseUrl ?? null };
  return { releaseId: shareId, releaseUrl: profileUrl(config), followUp: { afterMs: state.checkAfterMs ?? PROCESSING_CHECK_MS } };
}

interface CreatorSettings {
  privacy_level_options?: string[];
  comment_disabled?: boolean;
  duet_disabled?: boolean;
  stitch_disabled?: boolean;
  max_video_post_duration_sec?: number;
}

/** Sends the publish request; TikTok answers with the share_id that stands for the post from now on. */
async function startPublish(ctx: PublishContext<Config>, config: Config, s: Settings): Promise<string> {
  const draft = s.content_posting_method === 'UPLOAD';
  const video = ctx.item.media.find((m) => m.mimeType.startsWith('video/'));
  const photos = ctx.item.media.filter((m) => m.mimeType.startsWith('image/'));
  const creator = await call<CreatorSettings>(ctx, config.accessToken, '/business/video/settings/', { query: { business_id: config.openId } });
  if (video?.duration && creator.max_video_post_duration_sec && video.duration > creator.max_video_post_duration_sec) {
    throw new PublishError(
      'refused',
      `the video is ${Math.round(video.duration)} s long, but this TikTok account can post at most ${creator.max_video_post_duration_sec} s`,
    );
  }
  let answer: { share_id?: string };
  if (video) {
    const post_info = draft
      ? { upload_to_draft: true }
      : {
          caption: ctx.item.content,
          is_brand_organic: s.brand_organic_toggle,
          is_branded_content: s.brand_content_toggle,
          disable_comment: !s.comment || creator.comment_disabled === true,
          disable_duet: !s.duet || creator.duet_disabled === true,
          disable_stitch: !s.stitch || creator.stitch_disabled === true,
          is_ai_generated: s.video_made_with_ai === true,
          upload_to_draft: false,
          ...(s.music
            ? { music_sound_info: { music_sound_id: s.music.id, music_sound_volume: s.music.audio_volume, video_original_sound_volume: s.music.video_volume } }
            : {}),
        };
    answer = await call(ctx, config.accessToken, '/business/video/publish/', {
      method: 'POST',
      json: { business_id: config.openId, video_url: video.url, post_info },
    });
  } else {
    if (!draft && creator.privacy_level_options && !creator.privacy_level_options.includes(s.privacy_level)) {
      throw new PublishError(
        'refused',
        `privacy_level ${s.privacy_level} is not allowed for this TikTok account; it allows ${creator.privacy_level_options.join(', ')}`,
      );
    }
    const post_info = draft
      ? { title: s.title ?? '', caption: ctx.item.content, is_draft: true }
      : {
          privacy_level: s.privacy_level,
          title: s.title ?? '',
          caption: ctx.item.content,
          auto_add_music: s.autoAddMusic === 'yes',
          is_brand_organic: s.brand_organic_toggle,
          is_branded_content: s.brand_content_toggle,
          disable_comment: !s.comment || creator.comment_disabled === true,
          is_draft: false,
          ...(s.music ? { music_sound_info: { music_sound_id: s.music.id } } : {}),
        };
    answer = await call(ctx, config.accessToken, '/business/photo/publish/', {
      method: 'POST',
      json: { business_id: config.openId, photo_images: photos.map((p) => p.url), photo_cover_index: 0, post_info },
    });
  }
  if (!answer?.share_id) throw new PublishError('unknown', `${NETWORK} took the post but gave no share_id. Check the account before retrying.`);
  return answer.share_id;
}

interface ListedVideo {
  item_id: string;
  create_time?: string | number;
  caption?: string;
  share_url?: string;
  video_views?: number;
  likes?: number;
  comments?: number;
  shares?: number;
  reach?: number;
}

/** The account's latest posts, newest first. */
async function listVideos(ctx: NetworkContext, config: Config, fields: string[], filters?: Record<string, unknown>): Promise<ListedVideo[]> {
  const data = await call<{ videos?: ListedVideo[] }>(ctx, config.accessToken, '/business/video/list/', {
    query: {
      business_id: config.openId,
      fields: JSON.stringify(fields),
      max_count: 20,
      ...(filters ? { filters: JSON.stringify(filters) } : {}),
    },
  });
  return data?.videos ?? [];
}

export const tiktokBusiness: Provider<Config> = {
  identifier: 'tiktok-business',
  name: NETWORK,
  envPrefix: 'TIKTOK_BUSINESS',
  auth: 'oauth2',
  urls: { auth: 'https://www.tiktok.com', api: 'https://business-api.tiktok.com/open_api/v1.3' },
  readAnswer,
  appSettings: ['CLIENT_ID', 'CLIENT_SECRET'],
  optionalSettings: ['STATUS_WAIT_SECONDS'],
  connectNote:
    'TikTok pulls each photo and video from this server’s upload address, which must be verified for the TikTok for Business app (URL prefix or domain), ' +
    'else TikTok answers url_ownership_unverified.',
  settings,
  rules: {
    // Photo captions take 4,000 characters; a video's caption 2,200 (checked below). Counted in UTF-16 units.
    maxLength: PHOTO_CAPTION,
    counting: 'utf16',
    maxMedia: 35,
    minMedia: 1,
    mediaKinds: ['image', 'video'],
    threads: false,
    // Photos: JPEG or WebP (never PNG), at most 1080×1920 and 20 MB; others are converted first.
    media: { imageTypes: ['image/jpeg', 'image/webp'], maxImageBytes: 20 * 1024 * 1024, maxImageSide: 1920 },
    check({ content, media }) {
      const videos = media.filter((m) => m.mimeType.startsWith('video/')).length;
      const problems: { field: 'content' | 'image'; message: string }[] = [];
      if (videos > 0 && media.length > 1) problems.push({ field: 'image', message: 'is one video or photos only, never both nor several videos' });
      const length = countText('utf16', content);
      if (videos > 0 && length > VIDEO_CAPTION)
        problems.push({ field: 'content', message: `is ${length} characters, but a video's caption takes at most ${VIDEO_CAPTION}` });
      return problems;
    },
  },

  oauth: {
    async start({ urls, app, state, redirectUri }) {
      return {
        url: authorizationUrl(`${urls.auth}/v2/auth/authorize/`, {
          clientId: app.CLIENT_ID,
          clientIdParam: 'client_key',
          redirectUri: redirectWithSlash(redirectUri),
          state,
          scopes: SCOPES,
          scopeSeparator: ',',
        }),
      };
    },

    async finish(ctx) {
      // Business apps send the code back as auth_code.
      const code = ctx.query.auth_code ?? ctx.query.code;
      if (!code) throw new PublishError('refused', `${NETWORK} sent no authorization code back`);
      const token = await call<TokenData>(ctx, undefined, '/tt_user/oauth2/token/', {
        method: 'POST',
        json: {
          client_id: ctx.app.CLIENT_ID,
          client_secret: ctx.app.CLIENT_SECRET,
          grant_type: 'authorization_code',
          auth_code: code,
          redirect_uri: redirectWithSlash(ctx.redirectUri),
        },
      });
      if (!token?.access_token || !token.open_id) throw new PublishError('refused', `${NETWORK} gave no access token or account id`);
      const granted = Array.isArray(token.scope) ? token.scope : String(token.scope ?? '').split(/[,\s]+/);
      const missing = ['video.publish', 'video.upload', 'user.info.basic'].filter((s) => !granted.includes(s));
      if (token.scope !== undefined && missing.length > 0) {
        throw new PublishError('refused', `${NETWORK} did not grant ${missing.join(', ')}; connect again and allow every permission`);
      }
      const tokens = tokenConfig(token);
      const profile = await call<{ username?: string; display_name?: string; profile_image?: string }>(ctx, tokens.accessToken, '/business/get/', {
        query: { business_id: token.open_id, fields: JSON.stringify(['username', 'display_name', 'profile_image']) },
      });
      const config: Config = { ...tokens, openId: token.open_id, username: profile?.username };
      return [
        {
          externalId: token.open_id,
          name: profile?.display_name || profile?.username || 'TikTok account',
          picture: profile?.profile_image ?? null,
          profile: profile?.username ?? null,
          config: { ...config },
        },
      ];
    },
  },

  /** The refresh token lasts a year and is replaced by the one each refresh returns. */
  async refresh(ctx) {
    const refreshToken = needRefreshToken(ctx.channel.config, NETWORK);
    const data = await call<TokenData>(ctx, undefined, '/tt_user/oauth2/refresh_token/', {
      method: 'POST',
      json: { client_id: ctx.app.CLIENT_ID, client_secret: ctx.app.CLIENT_SECRET, grant_type: 'refresh_token', refresh_token: refreshToken },
    });
    if (!data?.access_token) throw new PublishError('auth', `${NETWORK} gave no access token`);
    return { ...tokenConfig(data) };
  },

  async publish(ctx) {
    const config = configOf(ctx.channel);
    const s = postSettings(settings, ctx.item, NETWORK);
    // An earlier attempt got as far as a share_id: the post exists on TikTok, only follow it.
    let shareId = await ctx.progress.get(SHARE_ID);
    if (!shareId) {
      shareId = await startPublish(ctx, config, s);
      await ctx.progress.set(SHARE_ID, shareId);
    }
    const photos = !ctx.item.media.some((m) => m.mimeType.startsWith('video/'));
    return follow(ctx, config, shareId, photos && s.privacy_level !== 'PUBLIC_TO_EVERYONE');
  },

  async followUp(ctx) {
    const config = configOf(ctx.channel);
    return standing(config, ctx.releaseId, await fetchStatus(ctx, config, ctx.releaseId));
  },

  /**
   * After a publish request whose answer never came: a video with the item's
   * caption, made since the item was due, among the account's latest. Photo
   * posts are not listed there, so for them the answer is "cannot tell".
   */
  async findPublished(ctx) {
    const config = configOf(ctx.channel);
    const shareId = await ctx.progress.get(SHARE_ID);
    if (shareId) return { releaseId: shareId, releaseUrl: profileUrl(config) };
    if (!ctx.item.media.some((m) => m.mimeType.startsWith('video/'))) throw new PublishError('unknown', 'photo posts cannot be looked up');
    const since = ctx.item.publishAt.getTime() - 60_000;
    const videos = await listVideos(ctx, config, ['item_id', 'create_time', 'caption', 'share_url']);
    const found = videos.find((v) => Number(v.create_time) * 1000 >= since && (v.caption ?? '').trim() === ctx.item.content.trim());
    return found ? { releaseId: String(found.item_id), releaseUrl: found.share_url ?? postUrl(config, 'v', String(found.item_id)) } : null;
  },

  async recentPosts(ctx) {
    const config = configOf(ctx.channel);
    const videos = await listVideos(ctx, config, ['item_id', 'create_time', 'caption', 'share_url']);
    return videos.map((v) => ({
      id: String(v.item_id),
      url: v.share_url ?? postUrl(config, 'v', String(v.item_id)) ?? '',
      text: v.caption,
      at: v.create_time !== undefined ? Number(v.create_time) * 1000 : undefined,
    }));
  },

  analytics: {
    /** TikTok gives a video's totals as they stand: one point each, dated today. */
    async post(ctx) {
      if (!/^\d+$/.test(ctx.releaseId)) {
        throw new PublishError('refused', `${NETWORK} has not named this post yet (it still has the share id ${ctx.releaseId}), so it has no figures yet`);
      }
      const config = configOf(ctx.channel);
      const [video] = await listVideos(ctx, config, ['item_id', 'video_views', 'likes', 'comments', 'shares', 'reach'], { video_ids: [ctx.releaseId] });
      if (!video || String(video.item_id) !== ctx.releaseId)
        throw new PublishError('refused', `${NETWORK} does not list post ${ctx.releaseId} among this account's videos`);
      return currentFigures({ Views: video.video_views, Reach: video.reach, Likes: video.likes, Comments: video.comments, Shares: video.shares });
    },
  },
};
