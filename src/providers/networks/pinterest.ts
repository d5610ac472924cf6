/**
 * Pinterest (API v5): OAuth 2 with the client in HTTP Basic; refresh tokens
 * rotate (continuous refresh), so each refresh stores the new one. A pin goes
 * on a board (a required setting; the `boards` tool lists them): one image or a
 * carousel of 2–5 by URL (Pinterest fetches them), or one video registered,
 * uploaded to Pinterest's upload URL and processed first. Analytics are the
 * account's and a pin's daily metrics (Pinterest keeps 90 days); recent posts
 * are the user's pins.
 */
import { z } from 'zod';
import { mediaBlob, mediaFilename } from '../adapter-kit/media-bytes.ts';
import { authorizationUrl, needRefreshToken, requestToken, tokenFields } from '../adapter-kit/oauth2-tokens.ts';
import { waitForProcessing } from '../adapter-kit/processing-wait.ts';
import { dailySeries, day, period } from '../adapter-kit/analytics-series.ts';
import type { AnalyticsSeries, MediaRef, NetworkContext, Provider, PublishChannel, PublishContext } from '../types.ts';
import { PublishError } from '../errors.ts';

const SCOPES = ['user_accounts:read', 'boards:read', 'boards:write', 'pins:read', 'pins:write'];
const VIDEO_BYTES = 2 * 1024 * 1024 * 1024;

const settings = z.object({
  board: z.string().regex(/^\d+$/, { error: 'must be a board id (digits); list them with the "boards" tool' }).describe('The board to pin to'),
  title: z.string().max(100).optional().describe('Pin title (up to 100 characters)'),
  link: z
    .url({ protocol: /^https?$/, error: 'must be an http(s) URL' })
    .max(2048)
    .optional()
    .describe('Where the pin links to'),
  dominant_color: z
    .string()
    .regex(/^#[0-9a-fA-F]{6}$/, { error: 'must be a hex colour such as #6E7874' })
    .optional()
    .describe('Placeholder colour while the pin loads'),
});

type PinterestSettings = z.infer<typeof settings>;

function bearer(channel: PublishChannel): Record<string, string> {
  return { authorization: `Bearer ${String(channel.config.accessToken)}` };
}

async function token(ctx: NetworkContext, form: Record<string, string>) {
  return requestToken(ctx, `${ctx.urls.api}/v5/oauth/token`, form, { basic: { id: ctx.app.CLIENT_ID, secret: ctx.app.CLIENT_SECRET } });
}

async function uploadVideo(ctx: PublishContext, video: MediaRef): Promise<string> {
  const headers = bearer(ctx.channel);
  const registered = await ctx.http.json<{ media_id: string; upload_url: string; upload_parameters: Record<string, string> }>(`${ctx.urls.api}/v5/media`, {
    method: 'POST',
    headers,
    json: { media_type: 'video' },
    // A registered upload publishes nothing.
    repeatable: true,
  });
  // The upload URL is a storage endpoint: its form fields first, the file last, no token.
  const form = new FormData();
  for (const [name, value] of Object.entries(registered.upload_parameters ?? {})) form.append(name, value);
  form.append('file', await mediaBlob(video, VIDEO_BYTES, 'Pinterest'), mediaFilename(video));
  await ctx.http.call(registered.upload_url, { method: 'POST', body: form, timeoutMs: 300_000, repeatable: true });
  await waitForProcessing(
    async () => {
      const status = await ctx.http.json<{ status: string }>(`${ctx.urls.api}/v5/media/${encodeURIComponent(registered.media_id)}`, { headers });
      if (status.status === 'succeeded') return { done: true };
      if (status.status === 'failed') return { done: false, failed: 'the video was rejected' };
      return { done: false, checkAfterMs: 5_000 };
    },
    { network: 'Pinterest', what: mediaFilename(video), signal: ctx.signal },
  );
  return registered.media_id;
}

async function mediaSource(ctx: PublishContext): Promise<Record<string, unknown>> {
  const media = ctx.item.media;
  const videos = media.filter((m) => m.mimeType.startsWith('video/'));
  const images = media.filter((m) => m.mimeType.startsWith('image/'));
  if (videos.length > 1 || (videos.length === 1 && images.length > 1)) {
    throw new PublishError('refused', 'Pinterest takes 1–5 images, or one video with at most one image as its cover');
  }
  if (videos.length === 1) {
    const mediaId = await uploadVideo(ctx, videos[0]);
    // A cover is required: the image given with the video, else the first frame.
    return images.length === 1
      ? { source_type: 'video_id', media_id: mediaId, cover_image_url: images[0].url }
      : { source_type: 'video_id', media_id: mediaId, cover_image_key_frame_time: 0 };
  }
  if (images.length === 1) return { source_type: 'image_url', url: images[0].url };
  return { source_type: 'multiple_image_urls', items: images.map((m) => ({ url: m.url })) };
}

/** Pinterest answers analytics for start dates up to 90 days back only. */
const ANALYTICS_DAYS = 90;
const ACCOUNT_METRICS: [string, string][] = [
  ['IMPRESSION', 'Impressions'],
  ['SAVE', 'Saves'],
  ['PIN_CLICK', 'Pin clicks'],
  ['OUTBOUND_CLICK', 'Outbound clicks'],
  ['ENGAGEMENT', 'Engagements'],
];
const PIN_METRICS = ACCOUNT_METRICS.slice(0, 4);

type DailyMetrics = { date: string; data_status?: string; metrics?: Record<string, number> }[];

/** GET an analytics endpoint over the last `days` days (at most 90) and turn daily_metrics into series. */
async function dailyMetrics(
  ctx: NetworkContext & { channel: PublishChannel; days: number },
  path: string,
  metrics: [string, string][],
): Promise<AnalyticsSeries[]> {
  const { since, until } = period(Math.min(ctx.days, ANALYTICS_DAYS));
  // Keyed by split ("all" without split_field).
  const answer = await ctx.http.json<Record<string, { daily_metrics?: DailyMetrics }>>(`${ctx.urls.api}${path}`, {
    headers: bearer(ctx.channel),
    query: { start_date: day(since), end_date: day(until), metric_types: metrics.map(([type]) => type).join(',') },
  });
  const rows = answer?.all?.daily_metrics ?? [];
  // Days without a figure (before the pin existed, still processing) are left out rather than counted as 0.
  return metrics.map(([type, label]) =>
    dailySeries(
      label,
      rows.filter((r) => typeof r.metrics?.[type] === 'number').map((r) => ({ date: r.date, total: r.metrics![type] })),
    ),
  );
}

export const pinterest: Provider = {
  identifier: 'pinterest',
  name: 'Pinterest',
  auth: 'oauth2',
  urls: { auth: 'https://www.pinterest.com', api: 'https://api.pinterest.com' },
  appSettings: ['CLIENT_ID', 'CLIENT_SECRET'],
  settings,
  // description ≤ 800 characters (v5.12+); a pin needs media.
  rules: {
    maxLength: 800,
    maxMedia: 5,
    minMedia: 1,
    mediaKinds: ['image', 'video'],
    threads: false,
    media: { imageTypes: ['image/jpeg', 'image/png', 'image/gif', 'image/webp'], maxImageBytes: 20 * 1024 * 1024 },
  },
  // Pins are in the org_write category: 100 per minute per user on Standard access.
  pacing: { perWindow: { count: 100, windowMs: 60_000 } },

  oauth: {
    async start(ctx) {
      return {
        url: authorizationUrl(`${ctx.urls.auth}/oauth/`, {
          clientId: ctx.app.CLIENT_ID,
          redirectUri: ctx.redirectUri,
          state: ctx.state,
          scopes: SCOPES,
          scopeSeparator: ',',
        }),
      };
    },
    async finish(ctx) {
      if (!ctx.query.code) throw new PublishError('refused', 'Pinterest sent no authorization code');
      // continuous_refresh: apps older than 2025-09-25 get rotating 60-day refresh tokens only when they ask.
      const tokens = tokenFields(
        await token(ctx, { grant_type: 'authorization_code', code: ctx.query.code, redirect_uri: ctx.redirectUri, continuous_refresh: 'true' }),
      );
      const me = await ctx.http.json<{ id?: string; username: string; profile_image?: string; business_name?: string }>(`${ctx.urls.api}/v5/user_account`, {
        headers: { authorization: `Bearer ${tokens.accessToken}` },
      });
      return [
        {
          externalId: me.id ?? me.username,
          name: me.business_name || me.username,
          picture: me.profile_image ?? null,
          profile: me.username,
          config: { ...tokens, username: me.username },
        },
      ];
    },
  },

  async refresh(ctx) {
    const refreshToken = needRefreshToken(ctx.channel.config, 'Pinterest');
    return tokenFields(await token(ctx, { grant_type: 'refresh_token', refresh_token: refreshToken, continuous_refresh: 'true' }));
  },

  async publish(ctx) {
    const s = ctx.item.settings as Partial<PinterestSettings>;
    if (!s.board) throw new PublishError('refused', 'Pinterest needs a board: set settings.board');
    if (ctx.item.media.length === 0) throw new PublishError('refused', 'Pinterest pins need an image or a video');
    const pin = await ctx.http.json<{ id: string }>(`${ctx.urls.api}/v5/pins`, {
      method: 'POST',
      headers: bearer(ctx.channel),
      json: {
        board_id: s.board,
        ...(s.title ? { title: s.title } : {}),
        description: ctx.item.content,
        ...(s.link ? { link: s.link } : {}),
        ...(s.dominant_color ? { dominant_color: s.dominant_color } : {}),
        media_source: await mediaSource(ctx),
      },
    });
    return { releaseId: pin.id, releaseUrl: `https://www.pinterest.com/pin/${pin.id}/` };
  },

  analytics: {
    channel: (ctx) => dailyMetrics(ctx, '/v5/user_account/analytics', ACCOUNT_METRICS),
    post: (ctx) => dailyMetrics(ctx, `/v5/pins/${encodeURIComponent(ctx.releaseId)}/analytics`, PIN_METRICS),
  },

  /** The user's latest pins (Pinterest lists them newest first). */
  async recentPosts(ctx) {
    const page = await ctx.http.json<{ items: { id: string; title?: string | null; description?: string | null; created_at?: string }[] }>(
      `${ctx.urls.api}/v5/pins`,
      {
        headers: bearer(ctx.channel),
        query: { page_size: 50 },
      },
    );
    return (page.items ?? []).map((pin) => {
      const at = Date.parse(pin.created_at ?? '');
      // Herald publishes the post's text as the description.
      return {
        id: pin.id,
        url: `https://www.pinterest.com/pin/${pin.id}/`,
        text: pin.description || pin.title || undefined,
        at: Number.isFinite(at) ? at : undefined,
      };
    });
  },

  tools: {
    boards: {
      description: 'List the boards this account can pin to: [{id, name, privacy}]',
      async run(ctx) {
        const boards: { id: string; name: string; privacy?: string }[] = [];
        let bookmark: string | undefined;
        do {
          const page = await ctx.http.json<{ items: { id: string; name: string; privacy?: string }[]; bookmark?: string | null }>(`${ctx.urls.api}/v5/boards`, {
            headers: bearer(ctx.channel),
            query: { page_size: 250, bookmark },
          });
          boards.push(...page.items.map(({ id, name, privacy }) => ({ id, name, privacy })));
          bookmark = page.bookmark ?? undefined;
        } while (bookmark && boards.length < 5_000);
        return boards;
      },
    },
  },
};
