/**
 * A local stand-in for TikTok's Login Kit and Content Posting API v2 as the
 * developer documentation describes them: the consent screen, /v2/oauth/token/
 * (code and rotating refresh tokens), /v2/user/info/, creator_info, video init
 * with FILE_UPLOAD (chunks PUT to upload_url with Content-Range; 206 partial,
 * 201 complete), photo init with PULL_FROM_URL, status fetch, and the Display
 * API's /v2/video/query/. Every JSON answer is {data, error: {code, message, log_id}}.
 * Its create endpoints are the upload's final chunk and the photo init (`storeThenFail`).
 *
 * Tokens carry the scopes the user allowed at consent (those asked for, less
 * `untickedScopes`); a refresh keeps them. User fields need their scope
 * (user.info.basic, .profile, .stats), else scope_permission_missed (400);
 * video query needs video.list, else scope_not_authorized (401).
 */
import { STATUS_CODES } from 'node:http';
import { consentAllows, startNetworkFake, type FakeAnswer, type NetworkFake, type RecordedRequest } from './network-fake.ts';

export const CLIENT_KEY = 'tt-client-key';
export const CLIENT_SECRET = 'tt-client-secret';

/** A video's counts as the video object reports them. */
export interface TikTokVideoStats {
  like_count: number;
  comment_count: number;
  share_count: number;
  view_count: number;
}

export interface TikTokFake extends NetworkFake {
  validTokens: Set<string>;
  refreshTokens: Set<string>;
  /** Scopes granted, by access or refresh token. */
  scopes: Map<string, Set<string>>;
  /** Scopes the user unticks on the consent screen (not granted to the next tokens). */
  untickedScopes: Set<string>;
  /** The account's counts (user.info.stats). */
  userStats: { follower_count: number; following_count: number; likes_count: number; video_count: number };
  /** What people did with a published post, by post id (0 when not set). */
  videoStats: Map<string, Partial<TikTokVideoStats>>;
  privacyOptions: string[];
  /** Uploads by publish id. */
  uploads: Map<
    string,
    { init: any; chunks: { range: string; bytes: Buffer }[]; complete: boolean; kind: 'video' | 'photo' | 'inbox'; readyAt?: number; failure?: string }
  >;
  /** How long TikTok works on a publish once it has the media (wall-clock), answering PROCESSING_* meanwhile. */
  processingMs: number;
  /** Makes the next publish end FAILED with this reason once processed. */
  failNextPublish?: string;
  published: { publishId: string; postId: string }[];
}

export function tiktokError(status: number, code: string, message: string): FakeAnswer {
  return { status, body: { data: {}, error: { code, message, log_id: '202601010000000000' } } };
}

function ok(data: unknown): FakeAnswer {
  return { body: { data, error: { code: 'ok', message: '', log_id: '202601010000000001' } } };
}

export async function startTikTokFake(): Promise<TikTokFake> {
  let issued = 0;
  let publishes = 0;
  const fake = (await startNetworkFake()) as TikTokFake;
  fake.validTokens = new Set();
  fake.refreshTokens = new Set();
  fake.scopes = new Map();
  fake.untickedScopes = new Set();
  fake.userStats = { follower_count: 0, following_count: 0, likes_count: 0, video_count: 0 };
  fake.videoStats = new Map();
  fake.privacyOptions = ['PUBLIC_TO_EVERYONE', 'MUTUAL_FOLLOW_FRIENDS', 'SELF_ONLY'];
  fake.uploads = new Map();
  fake.processingMs = 0;
  fake.published = [];

  const bearer = (request: RecordedRequest) => /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1];
  const denied = (request: RecordedRequest): FakeAnswer | undefined => {
    const token = bearer(request);
    return token && fake.validTokens.has(token)
      ? undefined
      : tiktokError(401, 'access_token_invalid', 'The access token is invalid or not found in the request.');
  };
  const granted = (request: RecordedRequest, scope: string) => fake.scopes.get(bearer(request) ?? '')?.has(scope) === true;
  const tokens = (scopes: Set<string>) => {
    issued++;
    const access = `act.access-${issued}`;
    const refresh = `rft.refresh-${issued}`;
    fake.validTokens.add(access);
    fake.refreshTokens.add(refresh);
    fake.scopes.set(access, scopes);
    fake.scopes.set(refresh, scopes);
    return {
      open_id: 'open-id-42',
      scope: [...scopes].join(','),
      access_token: access,
      expires_in: 7200,
      refresh_token: refresh,
      refresh_expires_in: 15552000,
      token_type: 'Bearer',
    };
  };
  /** TikTok has the media: it processes it for `processingMs`, then publishes or fails. */
  const mediaArrived = (upload: { complete: boolean; readyAt?: number; failure?: string }) => {
    upload.complete = true;
    upload.readyAt = Date.now() + fake.processingMs;
    upload.failure = fake.failNextPublish;
    fake.failNextPublish = undefined;
  };
  const newPublish = (init: any, kind: 'video' | 'photo' | 'inbox') => {
    publishes++;
    // Photo posts pulled from URLs and videos uploaded from a file have publish ids of their own kinds.
    const publishId = `${kind === 'photo' ? 'p_pub_url' : 'v_pub_file'}~v2-1.${7300000000000000000n + BigInt(publishes)}`;
    const upload = { init, chunks: [] as { range: string; bytes: Buffer }[], complete: false, kind };
    fake.uploads.set(publishId, upload);
    if (kind === 'photo') mediaArrived(upload);
    return publishId;
  };

  fake.route({
    'GET /v2/auth/authorize/': consentAllows('tiktok-code'),

    'POST /v2/oauth/token/': (request) => {
      const form = request.form ?? {};
      if (form.client_key !== CLIENT_KEY || form.client_secret !== CLIENT_SECRET)
        return { status: 401, body: { error: 'invalid_client', error_description: 'Client key or secret is incorrect.', log_id: 'x' } };
      if (form.grant_type === 'authorization_code') {
        if (form.code !== 'tiktok-code' || form.redirect_uri !== fake.state.authorize?.redirect_uri)
          return { status: 400, body: { error: 'invalid_grant', error_description: 'Authorization code is expired.', log_id: 'x' } };
        const asked = String(fake.state.authorize?.scope ?? '')
          .split(',')
          .filter(Boolean);
        return { body: tokens(new Set(asked.filter((scope) => !fake.untickedScopes.has(scope)))) };
      }
      if (form.grant_type === 'refresh_token') {
        // Rotation: the used refresh token stops working.
        if (!fake.refreshTokens.delete(form.refresh_token))
          return { status: 400, body: { error: 'invalid_grant', error_description: 'Refresh token is invalid or expired.', log_id: 'x' } };
        // A refresh keeps what the user allowed.
        return { body: tokens(fake.scopes.get(form.refresh_token) ?? new Set()) };
      }
      return { status: 400, body: { error: 'unsupported_grant_type', error_description: 'unsupported', log_id: 'x' } };
    },

    // Only the fields asked for; each needs the scope the user object names for it.
    'GET /v2/user/info/': (request) => {
      const no = denied(request);
      if (no) return no;
      const fields = String(request.query.fields ?? '')
        .split(',')
        .filter(Boolean);
      if (fields.length === 0) return tiktokError(400, 'invalid_params', 'fields is required');
      const user: Record<string, { scope: string; value: unknown }> = {
        open_id: { scope: 'user.info.basic', value: 'open-id-42' },
        union_id: { scope: 'user.info.basic', value: 'union-1' },
        avatar_url: { scope: 'user.info.basic', value: 'https://p16.tiktokcdn.example/avatar.jpg' },
        display_name: { scope: 'user.info.basic', value: 'Herald Creator' },
        bio_description: { scope: 'user.info.profile', value: 'Posting with Herald' },
        profile_deep_link: { scope: 'user.info.profile', value: 'https://vm.tiktok.example/heraldcreator' },
        is_verified: { scope: 'user.info.profile', value: false },
        username: { scope: 'user.info.profile', value: 'heraldcreator' },
        follower_count: { scope: 'user.info.stats', value: fake.userStats.follower_count },
        following_count: { scope: 'user.info.stats', value: fake.userStats.following_count },
        likes_count: { scope: 'user.info.stats', value: fake.userStats.likes_count },
        video_count: { scope: 'user.info.stats', value: fake.userStats.video_count },
      };
      const unknown = fields.find((f) => !user[f]);
      if (unknown) return tiktokError(400, 'invalid_params', `invalid field: ${unknown}`);
      const lacking = fields.filter((f) => !granted(request, user[f].scope));
      if (lacking.length > 0) {
        const scopes = [...new Set(lacking.map((f) => user[f].scope))];
        return tiktokError(
          400,
          'scope_permission_missed',
          `The fields ${lacking.join(',')} need the scope ${scopes.join(',')}, which the user did not authorize.`,
        );
      }
      return ok({ user: Object.fromEntries(fields.map((f) => [f, user[f].value])) });
    },

    // Display API: the user's own videos among video_ids (at most 20), with the fields asked for.
    'POST /v2/video/query/': (request) => {
      const no = denied(request);
      if (no) return no;
      if (!granted(request, 'video.list'))
        return tiktokError(401, 'scope_not_authorized', 'The user did not authorize the scope required for completing this request.');
      const fields = String(request.query.fields ?? '')
        .split(',')
        .filter(Boolean);
      const known = [
        'id',
        'create_time',
        'cover_image_url',
        'share_url',
        'video_description',
        'duration',
        'height',
        'width',
        'title',
        'embed_html',
        'embed_link',
        'like_count',
        'comment_count',
        'share_count',
        'view_count',
      ];
      if (fields.length === 0 || fields.some((f) => !known.includes(f)))
        return tiktokError(400, 'invalid_params', 'fields must be a comma-separated list of video object fields');
      const ids = request.json?.filters?.video_ids;
      if (!Array.isArray(ids) || ids.length === 0 || ids.length > 20)
        return tiktokError(400, 'invalid_params', 'filters.video_ids must hold 1 to 20 video ids');
      const videos = fake.published
        .filter((p) => ids.map(String).includes(p.postId) && fake.uploads.get(p.publishId)?.kind === 'video')
        .map((p) => {
          const upload = fake.uploads.get(p.publishId)!;
          const all: Record<string, unknown> = {
            id: p.postId,
            create_time: Math.floor((upload.readyAt ?? Date.now()) / 1000),
            title: upload.init?.post_info?.title ?? '',
            video_description: upload.init?.post_info?.title ?? '',
            share_url: `https://www.tiktok.com/@heraldcreator/video/${p.postId}`,
            duration: 12,
            like_count: 0,
            comment_count: 0,
            share_count: 0,
            view_count: 0,
            ...fake.videoStats.get(p.postId),
          };
          return Object.fromEntries(fields.filter((f) => f in all).map((f) => [f, all[f]]));
        });
      return ok({ videos });
    },

    'POST /v2/post/publish/creator_info/query/': (request) =>
      denied(request) ??
      ok({
        creator_username: 'heraldcreator',
        creator_nickname: 'Herald Creator',
        creator_avatar_url: 'https://p16.tiktokcdn.example/avatar.jpg',
        privacy_level_options: fake.privacyOptions,
        comment_disabled: false,
        duet_disabled: false,
        stitch_disabled: true,
        max_video_post_duration_sec: 600,
      }),

    'POST /v2/post/publish/video/init/': (request) => {
      const no = denied(request);
      if (no) return no;
      const body = request.json;
      if (body?.source_info?.source !== 'FILE_UPLOAD') return tiktokError(400, 'invalid_params', 'source must be FILE_UPLOAD here');
      if (!fake.privacyOptions.includes(body.post_info?.privacy_level))
        return tiktokError(400, 'privacy_level_option_mismatch', 'privacy_level is not one of the options');
      const publishId = newPublish(body, 'video');
      return ok({ publish_id: publishId, upload_url: `${fake.url}/upload/?upload_id=${encodeURIComponent(publishId)}` });
    },

    'POST /v2/post/publish/inbox/video/init/': (request) => {
      const no = denied(request);
      if (no) return no;
      const publishId = newPublish(request.json, 'inbox');
      return ok({ publish_id: publishId, upload_url: `${fake.url}/upload/?upload_id=${encodeURIComponent(publishId)}` });
    },

    'POST /v2/post/publish/content/init/': (request) => {
      const no = denied(request);
      if (no) return no;
      if (request.json?.source_info?.source !== 'PULL_FROM_URL') return tiktokError(400, 'invalid_params', 'photos are pulled from URLs');
      return ok({ publish_id: newPublish(request.json, 'photo') });
    },

    'PUT /upload/': (request) => {
      const upload = fake.uploads.get(request.query.upload_id);
      if (!upload) return { status: 404, body: 'upload not found' };
      const range = String(request.headers['content-range'] ?? '');
      const match = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(range);
      const received = upload.chunks.reduce((n, c) => n + c.bytes.length, 0);
      if (!match || Number(match[1]) !== received || Number(match[2]) - Number(match[1]) + 1 !== request.raw.length)
        return { status: 400, body: 'bad Content-Range' };
      upload.chunks.push({ range, bytes: request.raw });
      const total = Number(match[3]);
      if (received + request.raw.length < total) return { status: 206 };
      mediaArrived(upload);
      return { status: 201 };
    },

    'POST /v2/post/publish/status/fetch/': (request) => {
      const no = denied(request);
      if (no) return no;
      const publishId = request.json?.publish_id;
      const upload = fake.uploads.get(publishId);
      if (!upload) return tiktokError(400, 'invalid_params', 'publish_id not found');
      if (!upload.complete) return ok({ status: 'PROCESSING_UPLOAD', uploaded_bytes: 0 });
      if (Date.now() < upload.readyAt!) return ok({ status: upload.kind === 'photo' ? 'PROCESSING_DOWNLOAD' : 'PROCESSING_UPLOAD' });
      if (upload.failure) return ok({ status: 'FAILED', fail_reason: upload.failure });
      if (upload.kind === 'inbox') return ok({ status: 'SEND_TO_USER_INBOX' });
      let post = fake.published.find((p) => p.publishId === publishId);
      if (!post) {
        // int64 post ids, larger than a JSON number keeps exactly.
        post = { publishId, postId: String(7450000000000000000n + BigInt(fake.published.length + 1)) };
        fake.published.push(post);
      }
      return {
        body:
          `{"data":{"status":"PUBLISH_COMPLETE","publicaly_available_post_id":[${post.postId}],"uploaded_bytes":1},` +
          '"error":{"code":"ok","message":"","log_id":"1"}}',
        headers: { 'content-type': 'application/json' },
      };
    },
  });
  // Store, then answer a 5xx (`storeThenFail`): on the upload's final chunk, which completes a video and has TikTok
  // publish it (a bare status from the upload host), or on a photo post's init (the API's internal_error).
  fake.create = {
    route: 'PUT /upload/',
    serverError: (status, route) =>
      route === 'PUT /upload/'
        ? { status, body: STATUS_CODES[status] ?? 'Server Error', headers: { 'content-type': 'text/plain' } }
        : tiktokError(status, 'internal_error', 'Something went wrong, please try again later'),
  };
  return fake;
}
