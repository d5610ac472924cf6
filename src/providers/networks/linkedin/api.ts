/**
 * LinkedIn's versioned REST API (/rest/...), shared by member and page channels:
 * OAuth 2 tokens, the LinkedIn-Version header (a server setting, since LinkedIn
 * retires each monthly version after about a year), media uploads
 * (initializeUpload, then PUT the bytes), posts and comments.
 */
import { z } from 'zod';
import { mediaFilename, readMedia } from '../../adapter-kit/media-bytes.ts';
import { mediaChunks } from '../../adapter-kit/media-chunks.ts';
import type { NetworkAnswer, Verdict } from '../../adapter-kit/http-failures.ts';
import type { NetworkRequest } from '../../adapter-kit/network-http.ts';
import { authorizationUrl, needRefreshToken, requestToken, tokenFields } from '../../adapter-kit/oauth2-tokens.ts';
import { waitForProcessing } from '../../adapter-kit/processing-wait.ts';
import type { ContentRules, MediaRef, NetworkContext, Provider, PublishContext, PublishResult, TokenConfig } from '../../types.ts';
import { PublishError } from '../../errors.ts';

/** The newest LinkedIn-Version known to be active; override with HERALD_LINKEDIN[_PAGE]_API_VERSION. */
export const DEFAULT_LINKEDIN_VERSION = '202609';

export const LINKEDIN_URLS = { auth: 'https://www.linkedin.com', api: 'https://api.linkedin.com' };

export interface LinkedInConfig extends TokenConfig {
  /** urn:li:person:{id} or urn:li:organization:{id}: who posts, owns media and comments. */
  author: string;
}

export const linkedinSettings = z.object({
  post_as_images_carousel: z.boolean().optional().describe('Accepted for client compatibility; several images are published as a multi-image post'),
  carousel_name: z.string().max(200).optional().describe('Title of the carousel (kept with the post settings)'),
});

/** commentary ≤ 3000 characters; text, 1 image, 2–20 images or 1 video; JPEG/PNG/GIF images. */
export const linkedinRules: ContentRules = {
  maxLength: 3000,
  maxMedia: 20,
  mediaKinds: ['image', 'video'],
  threads: true,
  media: { imageTypes: ['image/jpeg', 'image/png', 'image/gif'], maxImageBytes: 20 * 1024 * 1024 },
};

const IMAGE_BYTES = 20 * 1024 * 1024;
/** LinkedIn's video parts are 4 MiB (uploadInstructions give the exact ranges). */
const VIDEO_PART_BYTES = 4_194_304;

function version(ctx: NetworkContext): string {
  return ctx.app.API_VERSION || DEFAULT_LINKEDIN_VERSION;
}

function restHeaders(ctx: NetworkContext, accessToken: string): Record<string, string> {
  return { authorization: `Bearer ${accessToken}`, 'linkedin-version': version(ctx), 'x-restli-protocol-version': '2.0.0' };
}

/** LinkedIn answers 426 for a LinkedIn-Version it retired; `rest` says which setting fixes it. */
export function readAnswer({ status }: NetworkAnswer): Verdict | undefined {
  return status === 426 ? { kind: 'refused', code: 426 } : undefined;
}

/** A request to /rest with the version headers; its answer (headers carry the ids of created things). */
export async function rest(ctx: NetworkContext, accessToken: string, path: string, request: NetworkRequest = {}): Promise<NetworkAnswer> {
  try {
    return await ctx.http.call(`${ctx.urls.api}${path}`, { ...request, headers: { ...restHeaders(ctx, accessToken), ...request.headers } });
  } catch (err) {
    if (err instanceof PublishError && err.code === 426) {
      throw new PublishError(
        'refused',
        `${err.message}. LinkedIn retired API version ${version(ctx)}: ` +
          'set HERALD_LINKEDIN_API_VERSION (or HERALD_LINKEDIN_PAGE_API_VERSION) to an active YYYYMM version',
      );
    }
    throw err;
  }
}

export async function restJson<T = any>(ctx: NetworkContext, accessToken: string, path: string, request: NetworkRequest = {}): Promise<T> {
  return (await rest(ctx, accessToken, path, request)).body as T;
}

// --- OAuth ---

export function startAuthorization(ctx: NetworkContext & { state: string; redirectUri: string }, scopes: string[]): string {
  return authorizationUrl(`${ctx.urls.auth}/oauth/v2/authorization`, { clientId: ctx.app.CLIENT_ID, redirectUri: ctx.redirectUri, state: ctx.state, scopes });
}

export async function exchangeCode(ctx: NetworkContext & { query: Record<string, string>; redirectUri: string }): Promise<TokenConfig> {
  if (!ctx.query.code) throw new PublishError('refused', 'LinkedIn sent no authorization code');
  const answer = await requestToken(ctx, `${ctx.urls.auth}/oauth/v2/accessToken`, {
    grant_type: 'authorization_code',
    code: ctx.query.code,
    redirect_uri: ctx.redirectUri,
    client_id: ctx.app.CLIENT_ID,
    client_secret: ctx.app.CLIENT_SECRET,
  });
  return tokenFields(answer);
}

/** Only apps approved for programmatic refresh get refresh tokens; without one the member reconnects. */
export async function refreshTokens(ctx: NetworkContext & { channel: { config: { refreshToken?: unknown } } }): Promise<TokenConfig & Record<string, unknown>> {
  const refreshToken = needRefreshToken(ctx.channel.config, ctx.http.network);
  const answer = await requestToken(ctx, `${ctx.urls.auth}/oauth/v2/accessToken`, {
    grant_type: 'refresh_token',
    refresh_token: refreshToken,
    client_id: ctx.app.CLIENT_ID,
    client_secret: ctx.app.CLIENT_SECRET,
  });
  return tokenFields(answer);
}

export async function userInfo(ctx: NetworkContext, accessToken: string): Promise<{ sub: string; name?: string; picture?: string }> {
  return ctx.http.json(`${ctx.urls.api}/v2/userinfo`, { headers: { authorization: `Bearer ${accessToken}` } });
}

// --- Text ---

/** Links, kept whole: a # inside one (https://example.com/docs#install) is part of the address. */
const LINK = /(https?:\/\/[^\s]+|www\.[^\s]+)/iu;
/** A hashtag starts a word: "#herald", not the "#" of "C#" or "docs#install". */
const HASHTAG = /((?<![\p{L}\p{N}_&/#])#[\p{L}\p{N}_]+)/u;

const escapeLittle = (text: string) => text.replace(/[\\|{}@[\]()<>#*_~]/g, (c) => `\\${c}`);

/**
 * Commentary is in LinkedIn's "little" format: reserved characters are escaped
 * so plain text stays plain; a real hashtag becomes one.
 */
export function littleText(text: string): string {
  return text
    .split(LINK)
    .map((part, i) =>
      i % 2 === 1
        ? escapeLittle(part)
        : part
            .split(HASHTAG)
            .map((piece, j) => (j % 2 === 1 ? `{hashtag|\\#|${piece.slice(1)}}` : escapeLittle(piece)))
            .join(''),
    )
    .join('');
}

// --- Media ---

async function uploadImage(ctx: PublishContext<LinkedInConfig>, config: LinkedInConfig, media: MediaRef): Promise<string> {
  const token = config.accessToken!;
  const init = await restJson<{ value: { uploadUrl: string; image: string } }>(ctx, token, '/rest/images', {
    method: 'POST',
    query: { action: 'initializeUpload' },
    json: { initializeUploadRequest: { owner: config.author } },
    // An upload nothing uses yet publishes nothing.
    repeatable: true,
  });
  const bytes = await readMedia(media, IMAGE_BYTES, ctx.http.network);
  await ctx.http.call(init.value.uploadUrl, {
    method: 'PUT',
    body: new Uint8Array(bytes),
    headers: { authorization: `Bearer ${token}`, 'content-type': media.mimeType },
    timeoutMs: 120_000,
  });
  await untilAvailable(ctx, token, 'images', init.value.image, mediaFilename(media), 1_000);
  return init.value.image;
}

/** LinkedIn processes an upload before a post may use it: its status goes to AVAILABLE (or PROCESSING_FAILED). */
async function untilAvailable(
  ctx: PublishContext<LinkedInConfig>,
  token: string,
  kind: 'images' | 'videos',
  urn: string,
  what: string,
  everyMs: number,
): Promise<void> {
  await waitForProcessing(
    async () => {
      const status = await restJson<{ status?: string; processingFailureReason?: string }>(ctx, token, `/rest/${kind}/${encodeURIComponent(urn)}`);
      if (status.status === 'AVAILABLE') return { done: true };
      if (status.status === 'PROCESSING_FAILED') return { done: false, failed: status.processingFailureReason ?? 'PROCESSING_FAILED' };
      return { done: false, checkAfterMs: everyMs };
    },
    { network: ctx.http.network, what, signal: ctx.signal },
  );
}

async function uploadVideo(ctx: PublishContext<LinkedInConfig>, config: LinkedInConfig, media: MediaRef): Promise<string> {
  const token = config.accessToken!;
  const init = await restJson<{
    value: { video: string; uploadToken?: string; uploadInstructions: { uploadUrl: string; firstByte: number; lastByte: number }[] };
  }>(ctx, token, '/rest/videos', {
    method: 'POST',
    query: { action: 'initializeUpload' },
    json: { initializeUploadRequest: { owner: config.author, fileSizeBytes: media.size, uploadCaptions: false, uploadThumbnail: false } },
    repeatable: true,
  });
  const { video, uploadToken = '', uploadInstructions } = init.value;
  const etags: string[] = [];
  let part = 0;
  for await (const chunk of mediaChunks(media, VIDEO_PART_BYTES)) {
    const instruction = uploadInstructions[part++];
    if (!instruction || instruction.lastByte - instruction.firstByte + 1 !== chunk.length) {
      throw new PublishError('refused', `LinkedIn's upload instructions do not match ${mediaFilename(media)} (${media.size} bytes)`);
    }
    const put = await ctx.http.call(instruction.uploadUrl, {
      method: 'PUT',
      body: new Uint8Array(chunk),
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/octet-stream' },
      timeoutMs: 120_000,
    });
    etags.push(put.headers.get('etag') ?? '');
  }
  await rest(ctx, token, '/rest/videos', {
    method: 'POST',
    query: { action: 'finalizeUpload' },
    json: { finalizeUploadRequest: { video, uploadToken, uploadedPartIds: etags } },
    repeatable: true,
  });
  await untilAvailable(ctx, token, 'videos', video, mediaFilename(media), 3_000);
  return video;
}

function postContent(ctx: PublishContext<LinkedInConfig>, urns: string[]): Record<string, unknown> | undefined {
  const media = ctx.item.media;
  if (media.length === 0) return undefined;
  if (media.some((m) => m.mimeType.startsWith('video/'))) {
    if (media.length > 1) throw new PublishError('refused', `${ctx.http.network} takes one video alone, not with other media`);
    return { media: { id: urns[0], title: mediaFilename(media[0]) } };
  }
  if (urns.length === 1) return { media: { id: urns[0] } };
  return { multiImage: { images: urns.map((id) => ({ id })) } };
}

// --- Publishing ---

const COMMENT_URN = /^urn:li:comment:\((urn:li:[a-zA-Z]+:\d+),\d+\)$/;

/**
 * A thread item after the first is a comment on the post. LinkedIn names a comment by
 * the post's activity, which the Comments API does not take as a target; the comment's
 * release id is therefore kept as urn:li:comment:(<the post>,<id>), so the next item
 * of the thread comments on the post itself too.
 */
async function comment(ctx: PublishContext<LinkedInConfig>, config: LinkedInConfig, replyTo: string): Promise<PublishResult> {
  const target = COMMENT_URN.exec(replyTo)?.[1] ?? replyTo;
  const answer = await restJson<{ $URN?: string; id?: string }>(ctx, config.accessToken!, `/rest/socialActions/${encodeURIComponent(target)}/comments`, {
    method: 'POST',
    json: { actor: config.author, object: target, message: { text: ctx.item.content } },
  });
  const id = answer?.id ?? (answer?.$URN ? /,(\d+)\)$/.exec(answer.$URN)?.[1] : undefined);
  const urn = id ? `urn:li:comment:(${target},${id})` : undefined;
  if (!urn) throw new PublishError('unknown', `${ctx.http.network} took the comment but did not say its id`);
  return { releaseId: urn, releaseUrl: `https://www.linkedin.com/feed/update/${target}?commentUrn=${encodeURIComponent(answer?.$URN ?? urn)}` };
}

export async function publishPost(ctx: PublishContext<LinkedInConfig>): Promise<PublishResult> {
  const config = ctx.channel.config;
  if (ctx.replyTo) return comment(ctx, config, ctx.replyTo.releaseId);
  const urns: string[] = [];
  for (const media of ctx.item.media)
    urns.push(media.mimeType.startsWith('video/') ? await uploadVideo(ctx, config, media) : await uploadImage(ctx, config, media));
  const content = postContent(ctx, urns);
  const response = await rest(ctx, config.accessToken!, '/rest/posts', {
    method: 'POST',
    json: {
      author: config.author,
      commentary: littleText(ctx.item.content),
      visibility: 'PUBLIC',
      distribution: { feedDistribution: 'MAIN_FEED', targetEntities: [], thirdPartyDistributionChannels: [] },
      ...(content ? { content } : {}),
      lifecycleState: 'PUBLISHED',
      isReshareDisabledByAuthor: false,
    },
  });
  const urn = response.headers.get('x-restli-id');
  if (!urn) throw new PublishError('unknown', `${ctx.http.network} accepted the post but did not say its id (x-restli-id)`);
  return { releaseId: urn, releaseUrl: `https://www.linkedin.com/feed/update/${urn}` };
}

/** What the member and page channels have in common: the app's settings, how answers read, the content rules, renewal and publishing. */
export const linkedinChannel = {
  auth: 'oauth2',
  urls: LINKEDIN_URLS,
  appSettings: ['CLIENT_ID', 'CLIENT_SECRET'],
  // LinkedIn-Version (YYYYMM); DEFAULT_LINKEDIN_VERSION when unset.
  optionalSettings: ['API_VERSION'],
  readAnswer,
  settings: linkedinSettings,
  rules: linkedinRules,
  refresh: refreshTokens,
  publish: publishPost,
} satisfies Partial<Provider<LinkedInConfig>>;
