/**
 * A local stand-in for VK as the VK ID docs and the VK API schema describe
 * them. VK ID: /authorize (the consent screen: back to redirect_uri with code,
 * state and device_id), /oauth2/auth (PKCE S256 checked, device_id required,
 * access tokens for one hour, refresh tokens rotated), /oauth2/user_info.
 * The API: /method/<name>, every answer HTTP 200 with {response} or
 * {error:{error_code,error_msg,request_params}}: 5 for a bad or expired token,
 * 6 past 3 requests a second (`perSecond`), 8 without `v`, 100 for a post without message and
 * attachments, 214 past 50 posts a day, 14 when `captchaNext` is set, 121 when
 * saveWallPhoto's server/photo/hash is not what the upload server gave. Posts
 * and comments with a guid seen before answer the first one's id. Its create
 * endpoint is wall.post (`storeThenFail`).
 */
import crypto from 'node:crypto';
import { startNetworkFake, type FakeAnswer, type NetworkFake, type RecordedRequest } from './network-fake.ts';

export const VK_CLIENT_ID = '51234567';
export const VK_USER_ID = 777000111;

export interface VkPost {
  id: number;
  owner_id: number;
  text: string;
  attachments: string[];
  guid?: string;
  date: number;
  comments: { id: number; text: string; attachments: string[]; guid?: string; reply_to_comment?: number; date: number }[];
  views: number;
  likes: number;
  reposts: number;
}

export interface VkFake extends NetworkFake {
  /** Access token → expiry (epoch ms). */
  accessTokens: Map<string, number>;
  /** Refresh token → device id it was issued for. */
  refreshTokens: Map<string, string>;
  /** Scopes the user allows at consent (the app's cabinet may hold some back). */
  grantedScopes?: string[];
  posts: VkPost[];
  photos: Map<number, { owner_id: number; caption?: string; bytes: Buffer; type: string }>;
  videos: Map<number, { owner_id: number; name?: string; bytes?: Buffer }>;
  /** The next wall.post answers error 14 (captcha). */
  captchaNext: boolean;
  /** Posts allowed per day. */
  dailyPosts: number;
  /** Method calls allowed per second and token (VK: 3 for user tokens). */
  perSecond: number;
  followers: number;
  /** Makes every issued access token expire now. */
  expireTokens(): void;
}

export function vkError(code: number, msg: string, request?: RecordedRequest): FakeAnswer {
  const params = Object.entries(request?.form ?? {})
    .filter(([key]) => key !== 'access_token')
    .map(([key, value]) => ({ key, value }));
  return { status: 200, body: { error: { error_code: code, error_msg: msg, request_params: params } } };
}

function ok(response: unknown): FakeAnswer {
  return { status: 200, body: { response } };
}

export async function startVkFake(): Promise<VkFake> {
  let issued = 0;
  let nextId = 100;
  const fake = (await startNetworkFake()) as VkFake;
  fake.accessTokens = new Map();
  fake.refreshTokens = new Map();
  fake.posts = [];
  fake.photos = new Map();
  fake.videos = new Map();
  fake.captchaNext = false;
  fake.dailyPosts = 50;
  fake.perSecond = 3;
  fake.followers = 0;
  fake.expireTokens = () => {
    for (const token of fake.accessTokens.keys()) fake.accessTokens.set(token, Date.now() - 1);
  };
  /** Codes given at consent: code → what the token exchange must match. */
  const codes = new Map<string, { challenge: string; method: string; redirectUri: string; deviceId: string; scope: string }>();
  /** Uploads the photo server took, by hash: saveWallPhoto must bring back the same triple. */
  const uploads = new Map<string, { server: number; photo: string; bytes: Buffer; type: string }>();
  /** Request times per token, for the 3 a second limit. */
  const calls = new Map<string, number[]>();

  const tokens = (deviceId: string) => {
    issued++;
    const access = `vk1.a.access-${issued}`;
    const refresh = `vk1.r.refresh-${issued}`;
    fake.accessTokens.set(access, Date.now() + 3600_000);
    fake.refreshTokens.set(refresh, deviceId);
    return { access, refresh };
  };

  const idError = (error: string, description: string): FakeAnswer => ({ status: 400, body: { error, error_description: description } });

  /** The API's checks every method shares: version, token, rate. */
  const api = (handler: (request: RecordedRequest) => FakeAnswer) => (request: RecordedRequest) => {
    const form = { ...request.query, ...request.form };
    request.form = form;
    if (!form.v) return vkError(8, 'Invalid request: v (version) is required', request);
    const token = form.access_token ?? /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1];
    const expires = token ? fake.accessTokens.get(token) : undefined;
    if (!token || expires === undefined) return vkError(5, 'User authorization failed: invalid access_token (4).', request);
    if (expires < Date.now()) return vkError(5, 'User authorization failed: access_token has expired.', request);
    const now = Date.now();
    const recent = (calls.get(token) ?? []).filter((t) => t > now - 1000);
    recent.push(now);
    calls.set(token, recent);
    if (recent.length > fake.perSecond) return vkError(6, 'Too many requests per second', request);
    return handler(request);
  };

  const attachmentsOf = (raw: string | undefined): string[] | FakeAnswer => {
    const list = (raw ?? '').split(',').filter(Boolean);
    if (list.length > 10) return vkError(100, 'One of the parameters specified was missing or invalid: too many attachments');
    for (const item of list) {
      const match = /^(photo|video)(-?\d+)_(\d+)$/.exec(item);
      if (!match) return vkError(100, `One of the parameters specified was missing or invalid: attachments ${item}`);
      const store = match[1] === 'photo' ? fake.photos : fake.videos;
      if (store.get(Number(match[3]))?.owner_id !== Number(match[2]))
        return vkError(100, `One of the parameters specified was missing or invalid: attachments ${item} not found`);
    }
    return list;
  };

  const postsToday = () => fake.posts.filter((p) => p.date * 1000 > Date.now() - 86_400_000).length;

  fake.route({
    'GET /authorize': (request) => {
      const q = request.query;
      fake.state.authorize = q;
      const target = new URL(q.redirect_uri);
      const code = `vk-code-${codes.size + 1}`;
      const deviceId = `device-${crypto.randomBytes(6).toString('hex')}`;
      codes.set(code, {
        challenge: q.code_challenge,
        method: q.code_challenge_method,
        redirectUri: q.redirect_uri,
        deviceId,
        scope: (fake.grantedScopes ?? String(q.scope ?? '').split(' ')).join(' '),
      });
      target.searchParams.set('code', code);
      target.searchParams.set('state', q.state);
      target.searchParams.set('device_id', deviceId);
      target.searchParams.set('type', 'code_v2');
      target.searchParams.set('expires_in', '600');
      return { status: 302, headers: { location: target.toString() } };
    },

    'POST /oauth2/auth': (request) => {
      const form = request.form ?? {};
      if (form.client_id !== VK_CLIENT_ID) return idError('invalid_client', 'client_id is invalid');
      if (!form.device_id) return idError('invalid_request', 'device_id is missing');
      if (form.grant_type === 'authorization_code') {
        const code = codes.get(form.code);
        if (!code) return idError('invalid_grant', 'code is invalid or expired');
        codes.delete(form.code);
        if (code.method?.toLowerCase() !== 's256' || !form.code_verifier || !/^[A-Za-z0-9_-]{43,128}$/.test(form.code_verifier))
          return idError('invalid_request', 'code_verifier is invalid');
        if (crypto.createHash('sha256').update(form.code_verifier).digest('base64url') !== code.challenge)
          return idError('invalid_grant', 'code_verifier does not match code_challenge');
        if (form.device_id !== code.deviceId) return idError('invalid_grant', 'device_id does not match');
        if (form.redirect_uri !== code.redirectUri) return idError('invalid_grant', 'redirect_uri does not match');
        const t = tokens(form.device_id);
        return {
          body: {
            access_token: t.access,
            refresh_token: t.refresh,
            id_token: 'eyJ.id.token',
            token_type: 'Bearer',
            expires_in: 3600,
            user_id: VK_USER_ID,
            state: form.state,
            scope: code.scope,
          },
        };
      }
      if (form.grant_type === 'refresh_token') {
        const device = fake.refreshTokens.get(form.refresh_token);
        if (device === undefined) return idError('invalid_grant', 'refresh_token is invalid or already used');
        if (device !== form.device_id) return idError('invalid_grant', 'device_id does not match the refresh_token');
        if (!form.state) return idError('invalid_request', 'state is missing');
        // Rotation: the spent refresh token stops working.
        fake.refreshTokens.delete(form.refresh_token);
        const t = tokens(device);
        return {
          body: {
            access_token: t.access,
            refresh_token: t.refresh,
            token_type: 'Bearer',
            expires_in: 3600,
            user_id: VK_USER_ID,
            state: form.state,
            scope: 'vkid.personal_info wall photos video',
          },
        };
      }
      return idError('unsupported_grant_type', 'grant_type is not supported');
    },

    'POST /oauth2/user_info': (request) => {
      const form = request.form ?? {};
      if (form.client_id !== VK_CLIENT_ID) return idError('invalid_client', 'client_id is invalid');
      if (!fake.accessTokens.has(form.access_token)) return { status: 401, body: { error: 'invalid_token', error_description: 'access_token is invalid' } };
      return { body: { user: { user_id: String(VK_USER_ID), first_name: 'Ivan', last_name: 'Heraldov', avatar: 'https://sun.userapi.example/ivan.jpg' } } };
    },

    'POST /method/photos.getWallUploadServer': api(() => ok({ upload_url: `${fake.url}/upload/photo?srv=842`, album_id: -14, user_id: VK_USER_ID })),

    'POST /upload/photo': (request) => {
      const file = request.multipart?.files.find((f) => f.name === 'photo');
      // VK's upload server says an upload without the `photo` field by an empty list.
      if (!file || file.data.length === 0) return { body: { server: 842, photo: '[]', hash: 'd41d8cd98f00b204e9800998ecf8427e' } };
      const photo = JSON.stringify([{ photo: crypto.randomBytes(5).toString('hex'), sizes: [], kid: crypto.randomBytes(4).toString('hex') }]);
      const hash = crypto.createHash('md5').update(photo).digest('hex');
      uploads.set(hash, { server: 842, photo, bytes: file.data, type: file.type });
      return { body: { server: 842, photo, hash } };
    },

    'POST /method/photos.saveWallPhoto': api((request) => {
      const form = request.form!;
      const upload = uploads.get(form.hash);
      if (!upload || upload.photo !== form.photo || String(upload.server) !== form.server) return vkError(121, 'Invalid hash', request);
      uploads.delete(form.hash);
      const id = ++nextId;
      fake.photos.set(id, { owner_id: VK_USER_ID, caption: form.caption, bytes: upload.bytes, type: upload.type });
      return ok([{ id, owner_id: VK_USER_ID, album_id: -14, access_key: crypto.randomBytes(4).toString('hex'), date: Math.floor(Date.now() / 1000) }]);
    }),

    'POST /method/video.save': api((request) => {
      const id = ++nextId;
      fake.videos.set(id, { owner_id: VK_USER_ID, name: request.form!.name });
      return ok({ upload_url: `${fake.url}/upload/video?vid=${id}`, video_id: id, owner_id: VK_USER_ID, access_key: 'k', title: request.form!.name });
    }),

    'POST /upload/video': (request) => {
      const video = fake.videos.get(Number(request.query.vid));
      const file = request.multipart?.files.find((f) => f.name === 'video_file');
      if (!video) return { status: 404, body: { error: 'upload url is invalid' } };
      if (!file) return { status: 400, body: { error: 'video_file is missing' } };
      video.bytes = file.data;
      return { body: { size: file.data.length, video_id: Number(request.query.vid), owner_id: VK_USER_ID, video_hash: 'h' } };
    },

    'POST /method/wall.post': api((request) => {
      const form = request.form!;
      if (fake.captchaNext) {
        fake.captchaNext = false;
        return {
          status: 200,
          body: {
            error: {
              error_code: 14,
              error_msg: 'Captcha needed',
              captcha_sid: '1234',
              captcha_img: 'https://api.vk.example/captcha.php?sid=1234',
              request_params: [],
            },
          },
        };
      }
      const owner = Number(form.owner_id ?? VK_USER_ID);
      if (owner !== VK_USER_ID) return vkError(214, 'Access to adding post denied', request);
      const attachments = attachmentsOf(form.attachments);
      if (!Array.isArray(attachments)) return attachments;
      if (!form.message && attachments.length === 0)
        return vkError(100, 'One of the parameters specified was missing or invalid: message is empty or invalid', request);
      const repeat = form.guid ? fake.posts.find((p) => p.guid === form.guid) : undefined;
      if (repeat) return ok({ post_id: repeat.id });
      if (postsToday() >= fake.dailyPosts) return vkError(214, 'Access to adding post denied: you can only add 50 posts a day', request);
      const post: VkPost = {
        id: ++nextId,
        owner_id: owner,
        text: form.message ?? '',
        attachments,
        guid: form.guid,
        date: Math.floor(Date.now() / 1000),
        comments: [],
        views: 0,
        likes: 0,
        reposts: 0,
      };
      fake.posts.push(post);
      return ok({ post_id: post.id });
    }),

    'POST /method/wall.createComment': api((request) => {
      const form = request.form!;
      const post = fake.posts.find((p) => p.id === Number(form.post_id) && p.owner_id === Number(form.owner_id ?? VK_USER_ID));
      if (!post) return vkError(100, 'One of the parameters specified was missing or invalid: post_id not found', request);
      const attachments = attachmentsOf(form.attachments);
      if (!Array.isArray(attachments)) return attachments;
      if (!form.message && attachments.length === 0) return vkError(100, 'One of the parameters specified was missing or invalid: message is empty', request);
      if (form.reply_to_comment && !post.comments.some((c) => c.id === Number(form.reply_to_comment)))
        return vkError(100, 'One of the parameters specified was missing or invalid: reply_to_comment not found', request);
      const repeat = form.guid ? post.comments.find((c) => c.guid === form.guid) : undefined;
      if (repeat) return ok({ comment_id: repeat.id, parents_stack: [] });
      const comment = {
        id: ++nextId,
        text: form.message ?? '',
        attachments,
        guid: form.guid,
        reply_to_comment: form.reply_to_comment ? Number(form.reply_to_comment) : undefined,
        date: Math.floor(Date.now() / 1000),
      };
      post.comments.push(comment);
      return ok({ comment_id: comment.id, parents_stack: [] });
    }),

    'POST /method/wall.get': api((request) => {
      const count = Math.min(100, Number(request.form!.count ?? 20));
      const items = [...fake.posts].reverse().slice(0, count);
      return ok({
        count: fake.posts.length,
        items: items.map((p) => ({ id: p.id, owner_id: p.owner_id, from_id: p.owner_id, date: p.date, text: p.text, post_type: 'post' })),
      });
    }),

    'POST /method/wall.getComments': api((request) => {
      const post = fake.posts.find((p) => p.id === Number(request.form!.post_id));
      if (!post) return vkError(100, 'One of the parameters specified was missing or invalid: post_id', request);
      const items = request.form!.sort === 'desc' ? [...post.comments].reverse() : post.comments;
      return ok({ count: items.length, items: items.map((c) => ({ id: c.id, from_id: VK_USER_ID, date: c.date, text: c.text })) });
    }),

    'POST /method/wall.getById': api((request) => {
      const items = String(request.form!.posts ?? '')
        .split(',')
        .map((key) => fake.posts.find((p) => `${p.owner_id}_${p.id}` === key))
        .filter((p): p is VkPost => p !== undefined)
        .map((p) => ({
          id: p.id,
          owner_id: p.owner_id,
          date: p.date,
          text: p.text,
          views: { count: p.views },
          likes: { count: p.likes },
          reposts: { count: p.reposts },
          comments: { count: p.comments.length },
        }));
      return ok({ items, profiles: [], groups: [] });
    }),

    'POST /method/users.get': api(() =>
      ok([{ id: VK_USER_ID, first_name: 'Ivan', last_name: 'Heraldov', followers_count: fake.followers, counters: { friends: 12 } }]),
    ),
  });
  // Store, then answer a 5xx (`storeThenFail`) on wall.post: the front's status, VK's envelope with error 10 (Internal server error).
  fake.create = { route: 'POST /method/wall.post', serverError: (status) => ({ ...vkError(10, 'Internal server error'), status }) };
  return fake;
}
