/**
 * A local TikTok for Business (Business API v1.3 organic posting), from its
 * reference: every answer is HTTP 200 with {code, message, request_id, data};
 * calls need the `Access-Token` header (40105 otherwise). The consent screen
 * sends `auth_code` back; /tt_user/oauth2/token/ wants it with the exact
 * redirect_uri (which must end with "/"), refresh tokens rotate.
 * /business/get/, /business/video/settings/, /business/video/list/.
 *
 * Publishing pulls media from URLs: the publish endpoints check business_id,
 * require post_info, refuse URLs outside the verified prefix
 * (url_ownership_unverified) and answer a share_id; TikTok then really
 * downloads each file (PROCESSING_DOWNLOAD for `processingMs`), fails a PNG
 * photo or a file it cannot fetch, and completes; a public post's id appears
 * `postIdLagMs` after PUBLISH_COMPLETE. `failNextCode` answers the next call
 * with an error code (40100 QPS limit...). Its create endpoint is the video
 * publish (`storeThenFail`).
 */
import crypto from 'node:crypto';
import { startNetworkFake, type FakeAnswer, type NetworkFake, type RecordedRequest } from './network-fake.ts';

export const TTB_APP = { clientId: 'ttb-app-7100000000000000001', clientSecret: 'ttb-app-secret-xyz' };
export const TTB_OPEN_ID = '-000abcdEFGhijklMNOpqrs-tuvwxyz12345';
export const TTB_PROFILE = { username: 'heraldbiz', display_name: 'Herald Business', profile_image: 'https://p16.tiktokcdn.example/biz.jpeg' };

export interface TtbPublish {
  shareId: string;
  kind: 'video' | 'photo';
  body: any;
  draft: boolean;
  public: boolean;
  status: 'PROCESSING_DOWNLOAD' | 'PUBLISH_COMPLETE' | 'FAILED' | 'SEND_TO_USER_INBOX';
  reason?: string;
  completedAt?: number;
  postId?: string;
  /** What TikTok downloaded: content type and size of each file. */
  pulled: { url: string; type: string; size: number }[];
  caption: string;
  createdAt: number;
}

export interface TtbFake extends NetworkFake {
  /** Media URLs must start with this (the operator's verified prefix). */
  verifiedPrefix: string;
  processingMs: number;
  /** The next publish ends FAILED with this reason once processed (frame_rate_check_failed...). */
  failNextPublish?: string;
  postIdLagMs: number;
  publishes: TtbPublish[];
  /** Figures of published videos, by post id. */
  videoStats: Map<string, { video_views: number; likes: number; comments: number; shares: number; reach: number }>;
  privacyOptions: string[];
  accessToken(): string;
  refreshToken(): string;
  expireAccessToken(): void;
  revokeAll(): void;
  /** The next call to `path` (e.g. "/business/video/publish/") answers this code and message. */
  failNextCode(path: string, code: number, message: string): void;
}

const API = '/open_api/v1.3';

function envelope(code: number, message: string, data: unknown = {}): FakeAnswer {
  return { status: 200, body: { code, message, request_id: crypto.randomBytes(8).toString('hex'), data } };
}
const ok = (data: unknown) => envelope(0, 'OK', data);

export async function startTikTokBusinessFake(): Promise<TtbFake> {
  let generation = 0;
  let access = '';
  let refresh = '';
  let expired = false;
  let revoked = false;
  let seq = 0;
  const codes = new Map<string, string>();
  const injected = new Map<string, { code: number; message: string }>();

  const issue = () => {
    generation++;
    access = `act.ttb-${generation}-${crypto.randomBytes(6).toString('hex')}`;
    refresh = `rft.ttb-${generation}-${crypto.randomBytes(6).toString('hex')}`;
    expired = false;
    return {
      access_token: access,
      expires_in: 86_400,
      refresh_token: refresh,
      refresh_token_expires_in: 31_536_000,
      open_id: TTB_OPEN_ID,
      scope: 'user.info.basic,user.info.username,user.info.stats,video.list,video.publish,video.upload',
      token_type: 'Bearer',
    };
  };
  /** The checks every business call makes: an injected failure, the token, the account. */
  const guard = (req: RecordedRequest, businessId: unknown): FakeAnswer | undefined => {
    const path = req.path.slice(API.length);
    const failure = injected.get(path);
    if (failure) {
      injected.delete(path);
      return envelope(failure.code, failure.message);
    }
    const token = req.headers['access-token'];
    if (!token || token !== access || revoked) return envelope(40105, 'Access token is incorrect or has been revoked.');
    if (expired) return envelope(40105, 'Access token has expired.');
    if (businessId !== TTB_OPEN_ID) return envelope(40002, 'business_id is invalid.');
    return undefined;
  };
  /** TikTok downloads what the post names, then checks it; meanwhile the status is PROCESSING_DOWNLOAD. */
  const download = async (publish: TtbPublish, urls: string[]) => {
    const started = Date.now();
    try {
      for (const url of urls) {
        const response = await fetch(url);
        if (!response.ok) throw new Error(publish.kind === 'video' ? 'video_pull_failed' : 'photo_pull_failed');
        const bytes = Buffer.from(await response.arrayBuffer());
        const type = response.headers.get('content-type') ?? '';
        publish.pulled.push({ url, type, size: bytes.length });
        const png = bytes.subarray(0, 4).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47]));
        if (publish.kind === 'photo' && (png || !/^image\/(jpeg|webp)/.test(type))) throw new Error('file_format_check_failed');
        if (publish.kind === 'video' && bytes.subarray(4, 8).toString('latin1') !== 'ftyp') throw new Error('file_format_check_failed');
      }
      const failure = fake.failNextPublish;
      fake.failNextPublish = undefined;
      await new Promise((r) => setTimeout(r, Math.max(0, started + fake.processingMs - Date.now())));
      if (failure) throw new Error(failure);
      publish.completedAt = Date.now();
      publish.status = publish.draft ? 'SEND_TO_USER_INBOX' : 'PUBLISH_COMPLETE';
      if (!publish.draft) {
        publish.postId = String(7_400_000_000_000_000_000n + BigInt(++seq));
        fake.videoStats.set(publish.postId, { video_views: 0, likes: 0, comments: 0, shares: 0, reach: 0 });
      }
    } catch (err) {
      publish.status = 'FAILED';
      publish.reason = (err as Error).message;
    }
  };
  const newPublish = (req: RecordedRequest, kind: 'video' | 'photo', urls: string[], draft: boolean, isPublic: boolean, caption: string): FakeAnswer => {
    const bad = urls.find((u) => !u.startsWith(fake.verifiedPrefix));
    if (bad) return envelope(40002, `url_ownership_unverified: ${bad} is not under a URL prefix verified for this app.`);
    const shareId = `${kind === 'video' ? 'v_pub_url' : 'p_pub_url'}~v1.${Date.now()}${++seq}`;
    const publish: TtbPublish = {
      shareId,
      kind,
      body: req.json,
      draft,
      public: isPublic,
      status: 'PROCESSING_DOWNLOAD',
      pulled: [],
      caption,
      createdAt: Math.floor(Date.now() / 1000),
    };
    fake.publishes.push(publish);
    void download(publish, urls);
    return ok({ share_id: shareId });
  };

  const fake = (await startNetworkFake({
    'GET /v2/auth/authorize/': (req, f) => {
      f.state.authorize = req.query;
      const q = req.query;
      if (q.client_key !== TTB_APP.clientId || q.response_type !== 'code' || !q.redirect_uri?.endsWith('/')) {
        return { status: 400, body: 'redirect_uri or client_key is not valid for this app' };
      }
      const code = `ttb-auth-${crypto.randomBytes(4).toString('hex')}`;
      codes.set(code, q.redirect_uri);
      const target = new URL(q.redirect_uri);
      target.searchParams.set('auth_code', code);
      target.searchParams.set('state', q.state ?? '');
      return { status: 302, headers: { location: target.toString() } };
    },
    [`POST ${API}/tt_user/oauth2/token/`]: (req) => {
      const b = req.json ?? {};
      if (b.client_id !== TTB_APP.clientId || b.client_secret !== TTB_APP.clientSecret) return envelope(40001, 'The app_id or secret is invalid.');
      if (b.grant_type !== 'authorization_code' || !b.auth_code) return envelope(40002, 'grant_type and auth_code are required.');
      const redirect = codes.get(b.auth_code);
      if (redirect === undefined) return envelope(40002, 'auth_code is invalid or expired.');
      if (redirect !== b.redirect_uri) return envelope(40002, 'redirect_uri does not match the authorization request.');
      codes.delete(b.auth_code);
      revoked = false;
      return ok(issue());
    },
    [`POST ${API}/tt_user/oauth2/refresh_token/`]: (req) => {
      const b = req.json ?? {};
      if (b.client_id !== TTB_APP.clientId || b.client_secret !== TTB_APP.clientSecret) return envelope(40001, 'The app_id or secret is invalid.');
      if (b.grant_type !== 'refresh_token' || revoked || b.refresh_token !== refresh)
        return envelope(40105, 'The refresh token is invalid or has been revoked.');
      return ok(issue());
    },
    [`GET ${API}/business/get/`]: (req) => {
      const denied = guard(req, req.query.business_id);
      if (denied) return denied;
      const fields: string[] = JSON.parse(req.query.fields ?? '[]');
      return ok(Object.fromEntries(fields.map((f) => [f, (TTB_PROFILE as Record<string, string>)[f] ?? null])));
    },
    [`GET ${API}/business/video/settings/`]: (req) =>
      guard(req, req.query.business_id) ??
      ok({
        privacy_level_options: fake.privacyOptions,
        comment_disabled: false,
        duet_disabled: true,
        stitch_disabled: false,
        max_video_post_duration_sec: 600,
      }),
    [`POST ${API}/business/video/publish/`]: (req) => {
      const b = req.json ?? {};
      const denied = guard(req, b.business_id);
      if (denied) return denied;
      if (!b.post_info || typeof b.post_info !== 'object') return envelope(40002, 'post_info is required.');
      if (typeof b.video_url !== 'string') return envelope(40002, 'video_url is required.');
      if ('privacy_level' in b.post_info) return envelope(40002, 'post_info.privacy_level is not a valid field.');
      if ((b.post_info.caption ?? '').length > 2200) return envelope(40002, 'caption is too long.');
      return newPublish(req, 'video', [b.video_url], b.post_info.upload_to_draft === true, true, b.post_info.caption ?? '');
    },
    [`POST ${API}/business/photo/publish/`]: (req) => {
      const b = req.json ?? {};
      const denied = guard(req, b.business_id);
      if (denied) return denied;
      if (!b.post_info || typeof b.post_info !== 'object') return envelope(40002, 'post_info is required.');
      const images = b.photo_images;
      if (!Array.isArray(images) || images.length === 0 || images.length > 35) return envelope(40002, 'photo_images must have 1 to 35 URLs.');
      const info = b.post_info;
      if ((info.title ?? '').length > 90) return envelope(40002, 'title is too long.');
      if ((info.caption ?? '').length > 4000) return envelope(40002, 'caption is too long.');
      if (!info.is_draft && !fake.privacyOptions.includes(info.privacy_level)) return envelope(40002, 'privacy_level is not valid for this account.');
      return newPublish(req, 'photo', images, info.is_draft === true, info.privacy_level === 'PUBLIC_TO_EVERYONE', info.caption ?? '');
    },
    [`GET ${API}/business/publish/status/`]: (req) => {
      const denied = guard(req, req.query.business_id);
      if (denied) return denied;
      const publish = fake.publishes.find((p) => p.shareId === req.query.publish_id);
      if (!publish) return envelope(40002, 'publish_id is invalid.');
      // The post's id lags behind completion, and only public posts get one.
      const idShown = publish.postId && publish.public && Date.now() - (publish.completedAt ?? 0) >= fake.postIdLagMs;
      return ok({ status: publish.status, post_ids: idShown ? [publish.postId] : [], ...(publish.reason ? { reason: publish.reason } : {}) });
    },
    [`GET ${API}/business/video/list/`]: (req) => {
      const denied = guard(req, req.query.business_id);
      if (denied) return denied;
      const fields: string[] = JSON.parse(req.query.fields ?? '[]');
      const filters = req.query.filters ? JSON.parse(req.query.filters) : {};
      const max = Number(req.query.max_count ?? 20);
      const listed = fake.publishes
        .filter((p) => p.kind === 'video' && p.postId && !p.draft)
        .filter((p) => !filters.video_ids || filters.video_ids.includes(p.postId))
        .reverse()
        .slice(0, max)
        .map((p) => {
          const all: Record<string, unknown> = {
            item_id: p.postId,
            create_time: String(p.createdAt),
            caption: p.caption,
            share_url: `https://www.tiktok.com/@${TTB_PROFILE.username}/video/${p.postId}`,
            ...fake.videoStats.get(p.postId!),
          };
          return Object.fromEntries(fields.filter((f) => f in all).map((f) => [f, all[f]]));
        });
      return ok({ videos: listed, cursor: 0, has_more: false });
    },
  })) as TtbFake;

  fake.verifiedPrefix = 'https://unset.example/';
  fake.processingMs = 150;
  fake.postIdLagMs = 0;
  fake.publishes = [];
  fake.videoStats = new Map();
  fake.privacyOptions = ['PUBLIC_TO_EVERYONE', 'MUTUAL_FOLLOW_FRIENDS', 'SELF_ONLY'];
  fake.accessToken = () => access;
  fake.refreshToken = () => refresh;
  fake.expireAccessToken = () => {
    expired = true;
  };
  fake.revokeAll = () => {
    revoked = true;
  };
  fake.failNextCode = (path, code, message) => {
    injected.set(path, { code, message });
  };
  // Store, then answer a 5xx (`storeThenFail`) on the video publish: the gateway's status, the envelope's internal error code.
  fake.create = {
    route: `POST ${API}/business/video/publish/`,
    serverError: (status) => ({ ...envelope(50002, 'Internal service error. Please try again later.'), status }),
  };
  return fake;
}
