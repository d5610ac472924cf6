/**
 * YouTube (Data API v3): a post is one uploaded video. Google OAuth 2 with PKCE
 * and offline access (refresh token); the user picks one of the account's
 * channels. Publishing is a resumable upload: a POST opens an upload session
 * with the video's metadata, a PUT sends the bytes; an interrupted PUT is
 * resumed from what the session says it holds, so a video is never sent twice.
 */
import type { Readable } from 'node:stream';
import { z } from 'zod';
import { errorMessage, type NetworkAnswer, type Verdict } from '../adapter-kit/http-failures.ts';
import type { NetworkRequest } from '../adapter-kit/network-http.ts';
import type { AnalyticsSeries, ConnectResult, NetworkContext, Provider, PublishChannel, PublishContext, TokenConfig } from '../types.ts';
import { PublishError } from '../errors.ts';
import { googleConsentUrl } from '../adapter-kit/oauth2-tokens.ts';
import { dailySeries, day, period } from '../adapter-kit/analytics-series.ts';

const SCOPES = [
  'https://www.googleapis.com/auth/youtube.upload',
  'https://www.googleapis.com/auth/youtube.readonly',
  'https://www.googleapis.com/auth/userinfo.profile',
  // YouTube Analytics reports (views, watch time); reports also need youtube.readonly.
  'https://www.googleapis.com/auth/yt-analytics.readonly',
];
/** Uploading is the one permission Herald cannot work without (users can untick scopes). */
const UPLOAD_SCOPES = [
  'https://www.googleapis.com/auth/youtube.upload',
  'https://www.googleapis.com/auth/youtube',
  'https://www.googleapis.com/auth/youtube.force-ssl',
];
/** People & Blogs: the category YouTube's own examples use when none is chosen. */
const DEFAULT_CATEGORY = '22';
/** How many times an interrupted upload is resumed within one publish. */
const RESUMES = 3;

const settings = z.object({
  title: z
    .string()
    .min(2)
    .max(100)
    .refine((t) => !/[<>]/.test(t), 'must not contain < or >')
    .describe('Video title'),
  type: z.enum(['public', 'private', 'unlisted']).describe('Privacy of the video'),
  selfDeclaredMadeForKids: z.enum(['yes', 'no']).optional().describe('Whether the video is made for kids'),
  thumbnail: z.object({ id: z.string().optional(), path: z.string() }).optional().describe('Uploaded image to use as the thumbnail'),
  tags: z
    .array(z.object({ value: z.string(), label: z.string() }))
    .optional()
    .refine((tags) => tagsLength(tags ?? []) <= 500, 'must be at most 500 characters in total (YouTube counts commas and quotes)')
    .describe('Video tags'),
});
type Settings = z.infer<typeof settings>;

/** YouTube's count for the tag limit: tags joined by commas, a tag with spaces in quotes. */
function tagsLength(tags: { value: string }[]): number {
  return tags.map((t) => t.value.length + (t.value.includes(' ') ? 2 : 0)).reduce((a, b) => a + b, 0) + Math.max(0, tags.length - 1);
}

interface Config extends TokenConfig {
  channelId: string;
}

function bearer(token: string | undefined): Record<string, string> {
  return { authorization: `Bearer ${token}` };
}

/**
 * YouTube's error reasons: quota and rate reasons are 403s, and a 401 for an
 * account without a channel is not a token problem.
 */
function readAnswer({ ok, body }: NetworkAnswer): Verdict | undefined {
  if (ok) return undefined;
  const reason: string | undefined = body?.error?.errors?.[0]?.reason;
  if (!reason) return undefined;
  const detail = `(${reason}) ${errorMessage(body) ?? ''}`.trim();
  if (reason === 'youtubeSignupRequired') return { kind: 'refused', detail: `${detail}. The Google account has no YouTube channel.`, code: reason };
  if (reason === 'rateLimitExceeded' || reason === 'userRateLimitExceeded') return { kind: 'retryable', detail, code: reason };
  if (reason === 'quotaExceeded')
    return { kind: 'refused', detail: `${detail}. The project's daily YouTube quota is used up; it resets at midnight Pacific time.`, code: reason };
  // A scope the user unticked at consent: only connecting again can grant it.
  if (reason === 'insufficientPermissions')
    return { kind: 'refused', detail: `${detail}. Connect the channel again and allow every permission Herald asks for.`, code: reason };
  return { detail, code: reason };
}

/** A YouTube Analytics report (reports.query): columns named in columnHeaders, dimensions first, then metrics. */
interface Report {
  columnHeaders?: { name: string; columnType?: string; dataType?: string }[];
  /** Left out when there is no data; the latest days are missing until YouTube has processed them. */
  rows?: (string | number)[][];
}

/** Channel figures: metric → label. */
const CHANNEL_METRICS = { views: 'Views', estimatedMinutesWatched: 'Minutes watched', likes: 'Likes', subscribersGained: 'Subscribers gained' };
/** One video's figures. */
const VIDEO_METRICS = { views: 'Views', estimatedMinutesWatched: 'Minutes watched', likes: 'Likes', comments: 'Comments', shares: 'Shares' };

/**
 * The metrics day by day over the last `days` days, one series each. The
 * channel is named by its id rather than channel==MINE: a Google account can
 * hold several channels and the user picked one of them.
 */
async function dailyReport(
  ctx: NetworkContext & { channel: PublishChannel<Config>; days: number },
  metrics: Record<string, string>,
  filters?: string,
): Promise<AnalyticsSeries[]> {
  const config = ctx.channel.config;
  const { since, until } = period(ctx.days);
  const report = await ctx.http.json<Report>(`${ctx.urls.analytics}/v2/reports`, {
    headers: bearer(config.accessToken),
    query: {
      ids: `channel==${config.channelId}`,
      startDate: day(since),
      endDate: day(until),
      metrics: Object.keys(metrics).join(','),
      dimensions: 'day',
      sort: 'day',
      filters,
    },
  });
  // Google asks clients to find columns by their header, not by position.
  const columns = (report.columnHeaders ?? []).map((c) => c.name);
  const dayColumn = columns.indexOf('day');
  const rows = dayColumn < 0 ? [] : (report.rows ?? []);
  return Object.entries(metrics).map(([metric, label]) => {
    const column = columns.indexOf(metric);
    return dailySeries(
      label,
      rows.map((row) => ({ date: String(row[dayColumn]), total: column < 0 ? Number.NaN : Number(row[column]) })),
    );
  });
}

async function tokenRequest(ctx: NetworkContext, form: Record<string, string | undefined>) {
  return ctx.http.json<{ access_token: string; expires_in?: number; refresh_token?: string; scope?: string }>(`${ctx.urls.token}/token`, {
    form: { client_id: ctx.app.CLIENT_ID, client_secret: ctx.app.CLIENT_SECRET, ...form },
  });
}

function tokens(answer: { access_token: string; expires_in?: number; refresh_token?: string }): TokenConfig & Record<string, unknown> {
  return {
    accessToken: answer.access_token,
    ...(answer.refresh_token ? { refreshToken: answer.refresh_token } : {}),
    ...(answer.expires_in ? { expiresAt: Date.now() + answer.expires_in * 1000 } : {}),
  };
}

interface ChannelItem {
  id: string;
  snippet?: { title?: string; customUrl?: string; thumbnails?: { default?: { url?: string } } };
}

async function myChannels(ctx: NetworkContext, accessToken: string | undefined): Promise<ChannelItem[]> {
  const answer = await ctx.http.json<{ items?: ChannelItem[] }>(`${ctx.urls.api}/youtube/v3/channels`, {
    query: { part: 'snippet', mine: true, maxResults: 50 },
    headers: bearer(accessToken),
  });
  return answer.items ?? [];
}

/** The bytes of a stream from `offset` on (resuming an upload). */
async function* from(stream: Readable, offset: number): AsyncIterable<Uint8Array> {
  let skipped = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    if (skipped >= offset) {
      yield chunk;
      continue;
    }
    const rest = offset - skipped;
    skipped += chunk.length;
    if (chunk.length > rest) yield chunk.subarray(rest);
  }
}

const SESSION_EXPIRED = 'session_expired';

/** Asks the session how much it holds: the video when the upload completed, else the next byte to send. */
async function probe(ctx: PublishContext<Config>, session: string, total: number): Promise<{ video: { id: string } } | { next: number }> {
  const request: NetworkRequest = { method: 'PUT', headers: { ...bearer(tokenOf(ctx)), 'content-length': '0', 'content-range': `bytes */${total}` } };
  const response = await ctx.http.send(session, request);
  if (response.status === 200 || response.status === 201) return { video: (await response.json()) as { id: string } };
  if (response.status === 308) {
    await response.body?.cancel();
    const range = /bytes=0-(\d+)/.exec(response.headers.get('range') ?? '');
    return { next: range ? Number(range[1]) + 1 : 0 };
  }
  // 404/410: the session is gone; nothing was published, so a later attempt starts over.
  const failure = await ctx.http.failure(session, response, request);
  throw response.status === 404 || response.status === 410
    ? new PublishError('retryable', `${failure.message} (the upload session expired)`, undefined, SESSION_EXPIRED)
    : failure;
}

function tokenOf(ctx: PublishContext<Config>): string | undefined {
  return ctx.channel.config.accessToken;
}

async function upload(ctx: PublishContext<Config>, session: string, media: PublishContext['item']['media'][number]): Promise<{ id: string }> {
  let next = 0;
  for (let resumes = 0; ; resumes++) {
    const headers: Record<string, string> = { ...bearer(tokenOf(ctx)), 'content-type': media.mimeType, 'content-length': String(media.size - next) };
    if (next > 0) headers['content-range'] = `bytes ${next}-${media.size - 1}/${media.size}`;
    let failure: PublishError;
    try {
      // Google's upload guide: resume after 500, 502, 503 and 504. The PUT that brings the last bytes makes the
      // video, so after a server error or a lost answer its outcome is unknown until the session says.
      const request: NetworkRequest = { method: 'PUT', headers, body: from(await media.open(), next), timeoutMs: 30 * 60_000, repeatable: false };
      const response = await ctx.http.send(session, request);
      if (response.status === 200 || response.status === 201) return (await response.json()) as { id: string };
      failure = await ctx.http.failure(session, response, request);
    } catch (err) {
      if (!(err instanceof PublishError)) throw err;
      failure = err;
    }
    // A refused upload (bad file, token) ends here; an interrupted one resumes where the session stands.
    if (failure.kind === 'refused' || failure.kind === 'auth') throw failure;
    let state: Awaited<ReturnType<typeof probe>>;
    try {
      state = await probe(ctx, session, media.size);
    } catch (err) {
      // The session cannot say whether the bytes sent made the video (an expired one made none): never uploaded again blindly.
      if (failure.kind === 'unknown' && !(err instanceof PublishError && err.code === SESSION_EXPIRED)) throw failure;
      throw err;
    }
    if ('video' in state) return state.video;
    // The session holds part of the video: nothing is published yet, so a later attempt may start over.
    if (resumes >= RESUMES) {
      throw new PublishError(
        'retryable',
        `YouTube holds ${state.next} of ${media.size} bytes after ${RESUMES + 1} interrupted uploads; the video was not made yet`,
      );
    }
    next = state.next;
  }
}

/** Optional thumbnail. The video is already on YouTube, so a thumbnail YouTube refuses does not fail the post (a retry would upload the video twice). */
async function setThumbnail(ctx: PublishContext<Config>, videoId: string, thumbnail: NonNullable<Settings['thumbnail']>): Promise<void> {
  try {
    const image = await ctx.http.send(thumbnail.path);
    if (!image.ok) return;
    const bytes = new Uint8Array(await image.arrayBuffer());
    const type = image.headers.get('content-type') ?? 'image/jpeg';
    const response = await ctx.http.send(`${ctx.urls.api}/upload/youtube/v3/thumbnails/set`, {
      method: 'POST',
      query: { videoId },
      headers: { ...bearer(tokenOf(ctx)), 'content-type': type },
      body: bytes,
    });
    await response.body?.cancel();
  } catch {
    /* see above: the video stands without its thumbnail */
  }
}

export const youtube: Provider<Config> = {
  identifier: 'youtube',
  name: 'YouTube',
  readAnswer,
  auth: 'oauth2',
  urls: {
    auth: 'https://accounts.google.com',
    token: 'https://oauth2.googleapis.com',
    api: 'https://www.googleapis.com',
    analytics: 'https://youtubeanalytics.googleapis.com',
  },
  appSettings: ['CLIENT_ID', 'CLIENT_SECRET'],
  settings,
  rules: {
    maxLength: 5000,
    // YouTube limits the description to 5000 bytes.
    counting: 'utf8Bytes',
    maxMedia: 1,
    minMedia: 1,
    mediaKinds: ['video'],
    threads: false,
  },
  // Since 2026-06 video uploads have their own bucket of 100 calls a day per API project.
  pacing: { perWindow: { count: 100, windowMs: 24 * 60 * 60_000 } },

  oauth: {
    pkce: true,
    async start({ urls, app, state, redirectUri, codeChallenge }) {
      return {
        url: googleConsentUrl(urls.auth, { clientId: app.CLIENT_ID, redirectUri, state, scopes: SCOPES, codeChallenge }),
      };
    },

    async finish(ctx) {
      const answer = await tokenRequest(ctx, {
        grant_type: 'authorization_code',
        code: ctx.query.code,
        redirect_uri: ctx.redirectUri,
        code_verifier: ctx.codeVerifier,
      });
      const granted = (answer.scope ?? '').split(' ');
      if (answer.scope !== undefined && !UPLOAD_SCOPES.some((s) => granted.includes(s))) {
        throw new PublishError('refused', 'the permission to upload videos was not granted; connect again and leave "Manage your YouTube videos" ticked');
      }
      const channels = await myChannels(ctx, answer.access_token);
      if (channels.length === 0) throw new PublishError('refused', 'this Google account has no YouTube channel; create one on youtube.com first');
      return channels.map(
        (c): ConnectResult => ({
          externalId: c.id,
          name: c.snippet?.title ?? c.id,
          picture: c.snippet?.thumbnails?.default?.url ?? null,
          profile: c.snippet?.customUrl ?? null,
          config: { ...tokens(answer), channelId: c.id },
        }),
      );
    },
  },

  async refresh(ctx) {
    const { refreshToken } = ctx.channel.config;
    if (!refreshToken) throw new PublishError('auth', 'no refresh token was stored for this channel');
    return tokens(await tokenRequest(ctx, { grant_type: 'refresh_token', refresh_token: refreshToken }));
  },

  async publish(ctx) {
    const video = ctx.item.media.find((m) => m.mimeType.startsWith('video/'));
    if (!video) throw new PublishError('refused', 'YouTube posts need one video');
    const s = ctx.item.settings as Partial<Settings>;
    const metadata = {
      snippet: {
        title: s.title,
        description: ctx.item.content,
        tags: (s.tags ?? []).map((t) => t.value),
        categoryId: DEFAULT_CATEGORY,
      },
      status: { privacyStatus: s.type ?? 'private', selfDeclaredMadeForKids: s.selfDeclaredMadeForKids === 'yes' },
    };
    // Opening the session publishes nothing: the video exists only once all bytes arrived.
    const opened = await ctx.http.call(`${ctx.urls.api}/upload/youtube/v3/videos`, {
      method: 'POST',
      repeatable: true,
      query: { uploadType: 'resumable', part: 'snippet,status', notifySubscribers: true },
      headers: {
        ...bearer(tokenOf(ctx)),
        'content-type': 'application/json; charset=UTF-8',
        'x-upload-content-length': String(video.size),
        'x-upload-content-type': video.mimeType,
      },
      json: metadata,
    });
    const session = opened.headers.get('location');
    if (!session) throw new PublishError('retryable', 'YouTube opened no upload session (no Location header)');

    const uploaded = await upload(ctx, new URL(session, ctx.urls.api).toString(), video);
    if (s.thumbnail) await setThumbnail(ctx, uploaded.id, s.thumbnail);
    return { releaseId: uploaded.id, releaseUrl: `https://www.youtube.com/watch?v=${uploaded.id}` };
  },

  // Daily figures from YouTube Analytics for both; a video's report is the channel's filtered to it (daily too, so a chart shows its course).
  analytics: {
    async channel(ctx) {
      return dailyReport(ctx, CHANNEL_METRICS);
    },
    async post(ctx) {
      return dailyReport(ctx, VIDEO_METRICS, `video==${ctx.releaseId}`);
    },
  },

  tools: {
    listChannels: {
      description: 'The YouTube channels of the connected Google account (id, title, handle, picture).',
      async run(ctx) {
        const channels = await myChannels(ctx, ctx.channel.config.accessToken);
        return channels.map((c) => ({
          id: c.id,
          name: c.snippet?.title ?? c.id,
          handle: c.snippet?.customUrl ?? null,
          picture: c.snippet?.thumbnails?.default?.url ?? null,
        }));
      },
    },
  },
};
