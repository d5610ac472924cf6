/**
 * Bluesky (AT Protocol): the user gives a handle and an app password (and, for
 * a self-hosted PDS, its address). Herald logs in once (createSession) and keeps
 * the session alive with refreshSession; posts are app.bsky.feed.post records
 * with facets for links, mentions and hashtags (UTF-8 byte offsets), images and
 * video as uploaded blobs, and replies that name the thread's root and parent.
 *
 * Each record's key is derived from the post item, so a repeat after an unknown
 * outcome cannot create a second post, and findPublished can look the item up.
 */
import crypto from 'node:crypto';
import { z } from 'zod';
import { OutboundRefused } from '../../lib/outbound.ts';
import type { NetworkRequest } from '../adapter-kit/network-http.ts';
import { errorMessage, type NetworkAnswer, type Verdict } from '../adapter-kit/http-failures.ts';
import type { ConnectResult, MediaRef, NetworkContext, Provider, PublishContext, TokenConfig } from '../types.ts';
import { PublishError, NetworkRefusal } from '../errors.ts';
import { graphemes } from '../text-counting.ts';
import { linkCard } from '../adapter-kit/link-card.ts';
import { currentFigures } from '../adapter-kit/analytics-series.ts';
import { mediaFilename, readMedia } from '../adapter-kit/media-bytes.ts';
import { waitForProcessing } from '../adapter-kit/processing-wait.ts';

const POST = 'app.bsky.feed.post';
/** The image blob limit older PDSes still apply (the lexicon now says 2 MB). */
export const MAX_IMAGE_BYTES = 1_000_000;
/** Blob uploads on Bluesky's own PDSes. */
const MAX_VIDEO_BYTES = 50 * 1024 * 1024;
const MAX_GRAPHEMES = 300;
const MAX_TEXT_BYTES = 3000;
export const IMAGE_TYPES = ['image/jpeg', 'image/png', 'image/webp'];
/** Each look at a video job waits this long; the video service processes for a while. */
const VIDEO_JOB_POLL_MS = 1_500;

const settings = z.object({
  langs: z
    .array(z.string().regex(/^[a-zA-Z]{2,3}(-[a-zA-Z0-9]{2,8})*$/, 'must be a language tag such as en or pt-BR'))
    .max(3)
    .optional()
    .describe('Languages of the post (at most 3, such as en or pt-BR); set them once as the channel default. Bluesky filters feeds by them'),
});

const credentials = z.object({
  identifier: z.string().trim().min(1, 'is required: your handle (name.bsky.social), email or DID').max(253).describe('Handle, email or DID'),
  password: z.string().min(1, 'is required: an app password from Settings → Privacy and security → App passwords').max(200).describe('App password'),
  service: z
    .url({ protocol: /^https?$/, error: 'must be an http(s) URL' })
    .optional()
    .describe('Your PDS, if not bsky.social'),
});

interface Config extends TokenConfig {
  service: string;
  pds: string;
  did: string;
  handle: string;
  identifier: string;
  /** Kept sealed to log in again when the refresh token has expired (after months unused). */
  password: string;
}

interface Session {
  accessJwt: string;
  refreshJwt: string;
  handle: string;
  did: string;
  didDoc?: { service?: { id?: string; type?: string; serviceEndpoint?: string }[] };
}

/** When a JWT expires (its `exp`), in epoch ms; undefined when it cannot be read. */
function jwtExpiry(jwt: string): number | undefined {
  try {
    const payload = JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url').toString('utf8'));
    return typeof payload.exp === 'number' ? payload.exp * 1000 : undefined;
  } catch {
    return undefined;
  }
}

function pdsOf(session: Session, fallback: string): string {
  const entry = session.didDoc?.service?.find((s) => s.id === '#atproto_pds' || s.id?.endsWith('#atproto_pds'));
  return (entry?.serviceEndpoint ?? fallback).replace(/\/+$/, '');
}

function sessionTokens(session: Session): TokenConfig {
  return { accessToken: session.accessJwt, refreshToken: session.refreshJwt, expiresAt: jwtExpiry(session.accessJwt) };
}

/**
 * XRPC failures: an expired or bad access token is a 400 with ExpiredToken or
 * InvalidToken (not a 401), and a 429 says when to come back in RateLimit-Reset (epoch seconds).
 */
function readAnswer({ ok, status, body, headers }: NetworkAnswer): Verdict | undefined {
  if (ok) return undefined;
  const name: string | undefined = typeof body?.error === 'string' ? body.error : undefined;
  const text = typeof body?.message === 'string' ? body.message : errorMessage(body);
  const detail = [name, text].filter((p, i, all) => p && all.indexOf(p) === i).join(': ') || undefined;
  if (name === 'ExpiredToken' || name === 'InvalidToken') return { kind: 'auth', detail, code: name };
  const reset = Number(headers.get('ratelimit-reset'));
  const retryAfterMs =
    status === 429 && !headers.get('retry-after') && Number.isFinite(reset) && reset > 0 ? Math.max(0, reset * 1000 - Date.now()) : undefined;
  return { detail, code: name, retryAfterMs };
}

function xrpc<T = any>(ctx: NetworkContext, base: string, nsid: string, request: NetworkRequest = {}): Promise<T> {
  return ctx.http.json<T>(`${base}/xrpc/${nsid}`, request);
}

async function createSession(ctx: NetworkContext, service: string, identifier: string, password: string): Promise<Session> {
  // A second session is harmless.
  return xrpc<Session>(ctx, service, 'com.atproto.server.createSession', { method: 'POST', json: { identifier, password }, repeatable: true });
}

// ---------------------------------------------------------------- rich text

export interface Facet {
  index: { byteStart: number; byteEnd: number };
  features: (
    | { $type: 'app.bsky.richtext.facet#link'; uri: string }
    | { $type: 'app.bsky.richtext.facet#mention'; did: string }
    | { $type: 'app.bsky.richtext.facet#tag'; tag: string }
  )[];
}

const LINK = /\bhttps?:\/\/[^\s<>"]+/g;
const MENTION = /(^|[\s(])@([a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)+)/g;
const TAG = /(^|\s)#([^\s#.,;:!?()[\]{}"'`]*[^\d\s#.,;:!?()[\]{}"'`][^\s#.,;:!?()[\]{}"'`]*)/gu;

/** Byte range of text[start, end) in UTF-8, as facets index it. */
function bytes(text: string, start: number, end: number): { byteStart: number; byteEnd: number } {
  const byteStart = Buffer.byteLength(text.slice(0, start), 'utf8');
  return { byteStart, byteEnd: byteStart + Buffer.byteLength(text.slice(start, end), 'utf8') };
}

/**
 * Links, mentions (resolved to DIDs; unknown handles stay plain text) and
 * hashtags. Bluesky links nothing by itself: text without a facet is plain.
 */
export async function facetsOf(text: string, resolve: (handle: string) => Promise<string | undefined>): Promise<Facet[]> {
  const facets: Facet[] = [];
  for (const m of text.matchAll(LINK)) {
    // Punctuation ending a sentence is not part of the link.
    const uri = m[0].replace(/[.,;:!?)\]]+$/, '');
    facets.push({ index: bytes(text, m.index, m.index + uri.length), features: [{ $type: 'app.bsky.richtext.facet#link', uri }] });
  }
  for (const m of text.matchAll(MENTION)) {
    const start = m.index + m[1].length;
    const handle = m[2];
    const did = await resolve(handle.toLowerCase());
    if (did) facets.push({ index: bytes(text, start, start + 1 + handle.length), features: [{ $type: 'app.bsky.richtext.facet#mention', did }] });
  }
  for (const m of text.matchAll(TAG)) {
    const start = m.index + m[1].length;
    const tag = m[2];
    if (graphemes(tag) > 64) continue;
    facets.push({ index: bytes(text, start, start + 1 + tag.length), features: [{ $type: 'app.bsky.richtext.facet#tag', tag }] });
  }
  // Facets must not overlap (a link may contain "#" or "@"): in text order, one that starts inside the last one kept is dropped.
  facets.sort((a, b) => a.index.byteStart - b.index.byteStart);
  const kept: Facet[] = [];
  for (const facet of facets) if (kept.length === 0 || facet.index.byteStart >= kept[kept.length - 1].index.byteEnd) kept.push(facet);
  return kept;
}

// ------------------------------------------------------------------ records

const TID_ALPHABET = '234567abcdefghijklmnopqrstuvwxyz';

/**
 * A record key (TID: microseconds since 1970 and a 10-bit clock id, base32-sortable)
 * fixed for the post item: its due time plus a clock id from its id. Repeating the
 * item repeats the key, and the PDS does not create the record twice.
 */
export function itemRecordKey(publishAt: Date, itemId: string): string {
  const clock = crypto.createHash('sha256').update(itemId).digest().readUInt16BE(0) & 0x3ff;
  const micros = BigInt(publishAt.getTime()) * 1000n + BigInt(crypto.createHash('sha256').update(`us:${itemId}`).digest().readUInt16BE(0) % 1000);
  let value = (micros << 10n) | BigInt(clock);
  let key = '';
  for (let i = 0; i < 13; i++) {
    key = TID_ALPHABET[Number(value & 31n)] + key;
    value >>= 5n;
  }
  return key;
}

function parseAtUri(uri: string): { repo: string; collection: string; rkey: string } {
  const match = /^at:\/\/([^/]+)\/([^/]+)\/([^/]+)$/.exec(uri);
  if (!match) throw new PublishError('refused', `"${uri}" is not a Bluesky post address (at://…) to reply to`);
  return { repo: match[1], collection: match[2], rkey: match[3] };
}

function permalink(did: string, uri: string): string {
  return `https://bsky.app/profile/${did}/post/${parseAtUri(uri).rkey}`;
}

function auth(config: Config): Record<string, string> {
  return { authorization: `Bearer ${config.accessToken}` };
}

/** Uploads bytes to the PDS; the answer is the blob a record embeds. */
async function blob(ctx: PublishContext<Config>, config: Config, bytes: Buffer, mimeType: string): Promise<unknown> {
  const answer = await xrpc<{ blob: unknown }>(ctx, config.pds, 'com.atproto.repo.uploadBlob', {
    method: 'POST',
    headers: { ...auth(config), 'content-type': mimeType },
    body: new Uint8Array(bytes),
    timeoutMs: 5 * 60_000,
    // An unreferenced blob publishes nothing.
    repeatable: true,
  });
  return answer.blob;
}

async function uploadImage(ctx: PublishContext<Config>, config: Config, media: MediaRef): Promise<unknown> {
  return blob(ctx, config, await readMedia(media, MAX_IMAGE_BYTES, 'Bluesky'), media.mimeType);
}

function aspectRatio(media: MediaRef): { aspectRatio?: { width: number; height: number } } {
  return media.width && media.height ? { aspectRatio: { width: media.width, height: media.height } } : {};
}

async function embedOf(ctx: PublishContext<Config>, config: Config): Promise<Record<string, unknown> | undefined> {
  const media = ctx.item.media;
  if (media.length === 0) return undefined;
  const video = media.find((m) => m.mimeType.startsWith('video/'));
  if (video) {
    if (media.length > 1) throw new PublishError('refused', 'a Bluesky post takes one video or up to 4 pictures, not both');
    return { $type: 'app.bsky.embed.video', video: await uploadVideo(ctx, config, video), ...(video.alt ? { alt: video.alt } : {}), ...aspectRatio(video) };
  }
  const images = [];
  for (const m of media) images.push({ image: await uploadImage(ctx, config, m), alt: m.alt ?? '', ...aspectRatio(m) });
  return { $type: 'app.bsky.embed.images', images };
}

/**
 * The link card of the post's first link: Bluesky shows one only when the post
 * carries it (app.bsky.embed.external), so Herald reads the page's title,
 * description and image itself. A page that cannot be read leaves the post without one.
 */
async function cardOf(ctx: PublishContext<Config>, config: Config, facets: Facet[]): Promise<Record<string, unknown> | undefined> {
  const link = facets.flatMap((f) => f.features).find((f) => f.$type === 'app.bsky.richtext.facet#link');
  if (!link || !('uri' in link)) return undefined;
  const card = await linkCard(ctx.outbound, link.uri, { maxImageBytes: MAX_IMAGE_BYTES, imageTypes: IMAGE_TYPES, signal: ctx.signal });
  if (!card) return undefined;
  const thumb = card.image ? await blob(ctx, config, card.image.bytes, card.image.mimeType) : undefined;
  return { $type: 'app.bsky.embed.external', external: { uri: card.uri, title: card.title, description: card.description, ...(thumb ? { thumb } : {}) } };
}

interface VideoJob {
  jobId: string;
  state: string;
  blob?: unknown;
  error?: string;
  message?: string;
}

/**
 * A video through Bluesky's video service, as its tutorial describes: a service
 * token for the PDS's uploadBlob, the bytes to app.bsky.video.uploadVideo, then
 * the job followed until it holds the processed blob. The job is kept across
 * attempts of the post, so a retry follows it instead of uploading again.
 */
async function uploadVideo(ctx: PublishContext<Config>, config: Config, media: MediaRef): Promise<unknown> {
  if (media.size > MAX_VIDEO_BYTES)
    throw new PublishError('refused', `a video of ${media.size} bytes is larger than Bluesky accepts (${MAX_VIDEO_BYTES} bytes)`);
  const key = `bluesky-video:${config.did}:${media.id}`;
  const jobStatus = (jobId: string) => ctx.http.json<{ jobStatus: VideoJob }>(`${ctx.urls.video}/xrpc/app.bsky.video.getJobStatus`, { query: { jobId } });
  let job: VideoJob | undefined;
  const kept = await ctx.progress.get(key);
  if (kept)
    job = await jobStatus(kept)
      .then((a) => (a.jobStatus.state === 'JOB_STATE_FAILED' ? undefined : a.jobStatus))
      .catch(() => undefined);
  if (!job) {
    const { token } = await xrpc<{ token: string }>(ctx, config.pds, 'com.atproto.server.getServiceAuth', {
      headers: auth(config),
      query: { aud: `did:web:${new URL(config.pds).hostname}`, lxm: 'com.atproto.repo.uploadBlob', exp: Math.floor(Date.now() / 1000) + 30 * 60 },
    });
    const bytes = await readMedia(media, MAX_VIDEO_BYTES, 'Bluesky');
    const answer = await ctx.http.json<{ jobStatus?: VideoJob } & Partial<VideoJob>>(`${ctx.urls.video}/xrpc/app.bsky.video.uploadVideo`, {
      method: 'POST',
      query: { did: config.did, name: `${media.id}.mp4` },
      headers: { authorization: `Bearer ${token}`, 'content-type': media.mimeType },
      body: new Uint8Array(bytes),
      timeoutMs: 10 * 60_000,
      // A video no post uses yet publishes nothing.
      repeatable: true,
    });
    // The lexicon wraps the job in jobStatus; the tutorial reads it at the top level.
    job = answer.jobStatus ?? (answer as VideoJob);
    await ctx.progress.set(key, job.jobId);
  }
  const jobId = job.jobId;
  // The first look is the job as the upload (or the kept job's status) described it; then the service is asked.
  let known: VideoJob | undefined = job;
  let blob: unknown;
  await waitForProcessing(
    async () => {
      const look = known ?? (await jobStatus(jobId)).jobStatus;
      known = undefined;
      if (look.state === 'JOB_STATE_COMPLETED' && look.blob) {
        blob = look.blob;
        return { done: true };
      }
      if (look.state === 'JOB_STATE_FAILED') return { done: false, failed: look.error ?? look.message ?? 'the video service failed the job' };
      return { done: false, checkAfterMs: VIDEO_JOB_POLL_MS };
    },
    // The pauses between looks end with the publish's deadline.
    { network: 'Bluesky', what: mediaFilename(media), signal: ctx.signal },
  );
  return blob;
}

/** The reply refs: the parent as it is, the root from the parent's own reply (or the parent when it starts the thread). */
async function replyRefs(ctx: PublishContext<Config>, config: Config, parentUri: string) {
  const { repo, collection, rkey } = parseAtUri(parentUri);
  const parent = await xrpc<{ uri: string; cid: string; value?: { reply?: { root?: { uri: string; cid: string } } } }>(
    ctx,
    config.pds,
    'com.atproto.repo.getRecord',
    {
      headers: auth(config),
      query: { repo, collection, rkey },
    },
  );
  const parentRef = { uri: parent.uri, cid: parent.cid };
  return { root: parent.value?.reply?.root ?? parentRef, parent: parentRef };
}

async function resolver(ctx: PublishContext<Config>, config: Config): Promise<(handle: string) => Promise<string | undefined>> {
  return async (handle) => {
    try {
      const answer = await xrpc<{ did: string }>(ctx, config.pds, 'com.atproto.identity.resolveHandle', { headers: auth(config), query: { handle } });
      return answer.did;
    } catch (err) {
      // A handle nobody has stays plain text; a failure of Bluesky itself is the post's failure.
      if (err instanceof PublishError && err.kind === 'refused') return undefined;
      throw err;
    }
  };
}

export const bluesky: Provider<Config> = {
  identifier: 'bluesky',
  name: 'Bluesky',
  auth: 'credentials',
  urls: { service: 'https://bsky.social', video: 'https://video.bsky.app' },
  readAnswer,
  credentials,
  settings,
  rules: {
    maxLength: MAX_GRAPHEMES,
    counting: 'graphemes',
    maxMedia: 4,
    mediaKinds: ['image', 'video'],
    threads: true,
    media: { imageTypes: IMAGE_TYPES, maxImageBytes: MAX_IMAGE_BYTES, maxImageSide: 2000 },
    // Besides 300 graphemes, the record's text may hold at most 3,000 bytes of UTF-8.
    check: ({ content }) => {
      const size = Buffer.byteLength(content, 'utf8');
      return size > MAX_TEXT_BYTES ? [{ field: 'content', message: `is ${size} bytes of UTF-8; Bluesky takes at most ${MAX_TEXT_BYTES}` }] : [];
    },
  },
  // Bluesky allows 3000 requests per 5 minutes per IP, shared by every account this server posts for;
  // a post with pictures, mentions and a reply makes several requests.
  pacing: { perWindow: { count: 500, windowMs: 5 * 60_000 } },

  async connect(input, ctx) {
    const given = credentials.parse(input);
    const service = (given.service ?? ctx.urls.service).replace(/\/+$/, '');
    try {
      await ctx.outbound.checkReachable(service);
    } catch (err) {
      if (err instanceof OutboundRefused) throw new NetworkRefusal('credentials.service', err.reason, 'address');
      throw err;
    }
    const session = await createSession(ctx, service, given.identifier, given.password);
    const pds = pdsOf(session, service);
    const profile = await xrpc<{ displayName?: string; avatar?: string }>(ctx, pds, 'app.bsky.actor.getProfile', {
      headers: { authorization: `Bearer ${session.accessJwt}` },
      query: { actor: session.did },
    }).catch(() => ({}) as { displayName?: string; avatar?: string });
    const config: Config = {
      service,
      pds,
      did: session.did,
      handle: session.handle,
      identifier: given.identifier,
      password: given.password,
      ...sessionTokens(session),
    };
    const result: ConnectResult = {
      externalId: session.did,
      name: profile.displayName || session.handle,
      picture: profile.avatar ?? null,
      profile: session.handle,
      config: { ...config },
    };
    return result;
  },

  async refresh(ctx) {
    const config = ctx.channel.config;
    try {
      const session = await xrpc<Session>(ctx, config.pds, 'com.atproto.server.refreshSession', {
        method: 'POST',
        headers: { authorization: `Bearer ${config.refreshToken}` },
      });
      return { ...sessionTokens(session), handle: session.handle };
    } catch (err) {
      if (!(err instanceof PublishError) || err.kind === 'retryable' || err.kind === 'unknown') throw err;
      // The refresh token expired or was revoked: log in again with the app password.
      const session = await createSession(ctx, config.service, config.identifier, config.password);
      return { ...sessionTokens(session), handle: session.handle, pds: pdsOf(session, config.service) };
    }
  },

  // The record key is the item's own: a second create of it cannot make a second post.
  repeatDropped: { by: 'the record key is fixed, so Bluesky cannot store it twice' },

  async publish(ctx) {
    const config = ctx.channel.config;
    const text = ctx.item.content;
    const facets = await facetsOf(text, await resolver(ctx, config));
    const embed = (await embedOf(ctx, config)) ?? (await cardOf(ctx, config, facets));
    const reply = ctx.replyTo ? await replyRefs(ctx, config, ctx.replyTo.releaseId) : undefined;
    const langs = settings.shape.langs.safeParse(ctx.item.settings.langs).data;
    const record = {
      $type: POST,
      text,
      createdAt: new Date().toISOString(),
      ...(langs && langs.length > 0 ? { langs } : {}),
      ...(facets.length > 0 ? { facets } : {}),
      ...(embed ? { embed } : {}),
      ...(reply ? { reply } : {}),
    };
    const created = await xrpc<{ uri: string; cid: string }>(ctx, config.pds, 'com.atproto.repo.createRecord', {
      method: 'POST',
      headers: auth(config),
      json: { repo: config.did, collection: POST, rkey: itemRecordKey(ctx.item.publishAt, ctx.item.postId), record },
    });
    return { releaseId: created.uri, releaseUrl: permalink(config.did, created.uri) };
  },

  async recentPosts(ctx) {
    const config = ctx.channel.config;
    const listed = await xrpc<{ records: { uri: string; value: { text?: string; createdAt?: string } }[] }>(ctx, config.pds, 'com.atproto.repo.listRecords', {
      headers: auth(config),
      query: { repo: config.did, collection: POST, limit: 25 },
    });
    return listed.records.map((r) => ({
      id: r.uri,
      url: permalink(config.did, r.uri),
      text: r.value.text ?? '',
      at: Date.parse(r.value.createdAt ?? '') || undefined,
    }));
  },

  analytics: {
    /** The profile's counts as they stand (Bluesky keeps no history per account); read from the AppView through the PDS. */
    async channel(ctx) {
      const config = ctx.channel.config;
      const profile = await xrpc<{ followersCount?: number; followsCount?: number; postsCount?: number }>(ctx, config.pds, 'app.bsky.actor.getProfile', {
        headers: auth(config),
        query: { actor: config.did },
      });
      return currentFigures({ Followers: profile.followersCount, Following: profile.followsCount, Posts: profile.postsCount });
    },
    async post(ctx) {
      const config = ctx.channel.config;
      const found = await xrpc<{ posts: { likeCount?: number; repostCount?: number; replyCount?: number; quoteCount?: number }[] }>(
        ctx,
        config.pds,
        'app.bsky.feed.getPosts',
        { headers: auth(config), query: { uris: ctx.releaseId } },
      );
      const post = found.posts[0];
      if (!post) throw new PublishError('refused', 'Bluesky no longer shows this post (it was deleted)');
      return currentFigures({ Likes: post.likeCount, Reposts: post.repostCount, Replies: post.replyCount, Quotes: post.quoteCount });
    },
  },

  /** The record key is the item's own, so the record is there or it is not. */
  async findPublished(ctx) {
    const config = ctx.channel.config;
    const rkey = itemRecordKey(ctx.item.publishAt, ctx.item.postId);
    try {
      const found = await xrpc<{ uri: string }>(ctx, config.pds, 'com.atproto.repo.getRecord', {
        headers: auth(config),
        query: { repo: config.did, collection: POST, rkey },
      });
      return { releaseId: found.uri, releaseUrl: permalink(config.did, found.uri) };
    } catch (err) {
      if (err instanceof PublishError && (err.code === 'RecordNotFound' || /Could not locate record/i.test(err.message))) return null;
      throw err;
    }
  },
};
