/**
 * Tumblr: posts in the Neue Post Format (NPF) on one of the user's blogs,
 * picked after connecting (OAuth 2 with the client secret; access tokens live
 * 42 minutes and every refresh rotates the refresh token). A post is a list of
 * content blocks: an optional heading (the `title` setting), the text one block
 * per paragraph, an optional link block, then images and at most one video,
 * sent as multipart parts named by the blocks' media identifiers.
 *
 * Tumblr wants a stable User-Agent on every call; its errors carry subcodes in
 * `errors[].code` that say whether waiting helps (a video still transcoding) or
 * not (the daily post limit). It has no idempotency key: after an unknown
 * outcome the blog's newest posts are compared with what was sent.
 */
import { z } from 'zod';
import type { NetworkAnswer, Verdict } from '../adapter-kit/http-failures.ts';
import { mediaBlob, mediaFilename } from '../adapter-kit/media-bytes.ts';
import { authorizationUrl, refreshTokens, requestToken, tokenFields } from '../adapter-kit/oauth2-tokens.ts';
import { currentFigures } from '../adapter-kit/analytics-series.ts';
import type { ConnectResult, MediaRef, NetworkContext, Provider, PublishChannel, PublishResult, RecentPost, TokenConfig } from '../types.ts';
import { PublishError } from '../errors.ts';

const SCOPES = ['basic', 'write', 'offline_access'];
/** One stable value: Tumblr may suspend apps whose User-Agent varies. */
const USER_AGENT = 'Herald/1 (+https://github.com/herald-social/herald)';
/** NPF's limit for one text block, in code points. */
const BLOCK_CHARS = 4096;
const MAX_IMAGES = 30;
const MAX_IMAGE_BYTES = 10 * 1024 * 1024;
const MAX_VIDEO_BYTES = 500 * 1024 * 1024;
/** Dimensions NPF requires when the file's own are unknown. */
const FALLBACK_SIZE = { width: 540, height: 405 };

const settings = z.object({
  title: z.string().min(1).max(BLOCK_CHARS).optional().describe('A heading shown above the text'),
  link: z.url().optional().describe('A link shown as a link card under the text'),
  sourceUrl: z.url().optional().describe('Where the content comes from (shown as the source)'),
  tags: z.string().max(BLOCK_CHARS).optional().describe('Tags, separated by commas'),
});
type Settings = z.infer<typeof settings>;

interface Config extends TokenConfig {
  /** The blog's uuid (t:…) where Tumblr gave one, else its name: the {blog-identifier}. */
  blog: string;
  blogName: string;
}

/** Daily limits: waiting minutes does not help, tomorrow does. */
const DAILY = new Map([
  [8004, 'the daily media upload limit'],
  [8011, 'the daily video upload limit'],
  [8022, 'the queue limit of 1,000 posts'],
  [8023, 'the daily limit of 250 posts'],
]);

/** How long Tumblr's hourly or daily window has left, from the headers a 429 names it in. */
function windowReset(headers: Headers): number | undefined {
  for (const window of ['perhour', 'perday']) {
    if (headers.get(`x-ratelimit-${window}-remaining`) !== '0') continue;
    const seconds = Number(headers.get(`x-ratelimit-${window}-reset`));
    if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  }
  return undefined;
}

/** Reads `{meta, errors:[{title, code}]}`; the subcode decides where the status alone would be wrong. */
function readAnswer({ ok, status, body, headers }: NetworkAnswer): Verdict | undefined {
  if (ok) return undefined;
  const error = Array.isArray(body?.errors) ? body.errors[0] : undefined;
  const code = typeof error?.code === 'number' ? error.code : undefined;
  const words = error?.title ?? error?.detail ?? body?.meta?.msg;
  const detail = words ? `${words}${code ? ` (${code})` : ''}` : undefined;
  if (code && DAILY.has(code)) return { kind: 'refused', detail: `${detail}: the blog reached ${DAILY.get(code)}; try again tomorrow`, code };
  // A video of an earlier post still transcoding: minutes, not a day.
  if (code === 8010) return { kind: 'retryable', detail, code, retryAfterMs: 5 * 60_000 };
  // Tumblr failed storing the upload, so the post was not made.
  if (code === 8006 || code === 8009) return { kind: 'retryable', detail, code };
  if (status === 429) return { kind: 'retryable', detail, code, retryAfterMs: windowReset(headers) ?? 60_000 };
  if (status === 404) return { kind: 'refused', detail: `${detail ?? 'Not Found'}: the blog does not exist any more (renamed or deleted?)`, code };
  return detail ? { detail, code } : undefined;
}

function configOf(channel: PublishChannel<Config>): Config {
  return channel.config;
}

function headers(token: string | undefined): Record<string, string> {
  return { authorization: `Bearer ${token}`, 'user-agent': USER_AGENT };
}

/** Post ids are 64-bit: longer than a JSON number keeps, so they are read as strings. */
function bigIntsAsStrings(raw: string): string {
  return raw.replace(/([:[,]\s*)(-?\d{16,})(?=\s*[,\]}])/g, '$1"$2"');
}

async function api<T = any>(ctx: NetworkContext, token: string | undefined, path: string, query?: Record<string, string | number | boolean>): Promise<T> {
  const answer = await ctx.http.json<{ response: T }>(`${ctx.urls.api}/v2${path}`, {
    headers: headers(token),
    query,
    parseJson: (raw) => JSON.parse(bigIntsAsStrings(raw)),
  });
  return answer.response;
}

/** Splits text into NPF text blocks: one per paragraph, a paragraph longer than a block cut into pieces. */
export function textBlocks(text: string): string[] {
  const blocks: string[] = [];
  for (const paragraph of text.split(/\n\s*\n/)) {
    const chars = [...paragraph.trim()];
    for (let i = 0; i < chars.length; i += BLOCK_CHARS) blocks.push(chars.slice(i, i + BLOCK_CHARS).join(''));
  }
  return blocks;
}

/** The NPF content of an item, and the files its media blocks reference by identifier. */
function npfContent(content: string, s: Settings, media: MediaRef[]): { blocks: any[]; files: { identifier: string; media: MediaRef }[] } {
  const blocks: any[] = [];
  if (s.title) blocks.push({ type: 'text', subtype: 'heading1', text: s.title });
  for (const text of textBlocks(content)) blocks.push({ type: 'text', text });
  if (s.link) blocks.push({ type: 'link', url: s.link });
  const files = media.map((m, index) => ({ identifier: `media-${index}`, media: m }));
  for (const { identifier, media: m } of files) {
    const file = { type: m.mimeType, identifier, width: m.width ?? FALLBACK_SIZE.width, height: m.height ?? FALLBACK_SIZE.height };
    if (m.mimeType.startsWith('video/')) blocks.push({ type: 'video', provider: 'tumblr', media: file });
    else blocks.push({ type: 'image', media: [file], ...(m.alt ? { alt_text: m.alt.slice(0, BLOCK_CHARS) } : {}) });
  }
  return { blocks, files };
}

type NpfPost = { id: string; id_string?: string; post_url?: string; timestamp?: number; content?: { type: string; subtype?: string; text?: string }[] };

function textOf(post: NpfPost, withHeading = true): string[] {
  return (post.content ?? []).filter((b) => b.type === 'text' && (withHeading || b.subtype !== 'heading1')).map((b) => b.text ?? '');
}

function release(config: Config, id: string, url?: string): PublishResult {
  return { releaseId: id, releaseUrl: url ?? `https://www.tumblr.com/${config.blogName}/${id}` };
}

async function newestPosts(ctx: NetworkContext, config: Config, limit: number): Promise<NpfPost[]> {
  const answer = await api<{ posts?: NpfPost[] }>(ctx, config.accessToken, `/blog/${encodeURIComponent(config.blog)}/posts`, { limit, npf: true });
  return answer.posts ?? [];
}

interface Blog {
  name: string;
  uuid?: string;
  url?: string;
  title?: string;
  followers?: number;
  posts?: number;
}

async function blogsOf(ctx: NetworkContext, token: string | undefined): Promise<Blog[]> {
  const answer = await api<{ user: { name: string; blogs?: Blog[] } }>(ctx, token, '/user/info');
  return answer.user.blogs ?? [];
}

export const tumblr: Provider<Config> = {
  identifier: 'tumblr',
  name: 'Tumblr',
  auth: 'oauth2',
  readAnswer,
  urls: { auth: 'https://www.tumblr.com', api: 'https://api.tumblr.com' },
  appSettings: ['CLIENT_ID', 'CLIENT_SECRET'],
  connectNote: 'After signing in to Tumblr you pick the blog Herald posts to. Tumblr allows 250 posts a day per account.',
  settings,
  rules: {
    // providers.md's limit; the text goes out one NPF block per paragraph.
    maxLength: BLOCK_CHARS,
    maxMedia: MAX_IMAGES + 1,
    mediaKinds: ['image', 'video'],
    threads: false,
    media: { imageTypes: ['image/jpeg', 'image/png', 'image/gif', 'image/webp'], maxImageBytes: MAX_IMAGE_BYTES },
    check(item) {
      const videos = item.media.filter((m) => m.mimeType.startsWith('video/')).length;
      const problems: { field: 'content' | 'image'; message: string }[] = [];
      if (videos > 1) problems.push({ field: 'image', message: `Tumblr takes at most 1 uploaded video per post; this item has ${videos}` });
      if (item.media.length - videos > MAX_IMAGES) problems.push({ field: 'image', message: `Tumblr takes at most ${MAX_IMAGES} images per post` });
      return problems;
    },
  },
  // The consumer key's quota: 1,000 calls an hour for the whole app.
  pacing: { perWindow: { count: 1000, windowMs: 60 * 60_000 }, perChannel: { count: 250, windowMs: 24 * 60 * 60_000 } },

  oauth: {
    // Tumblr documents no PKCE; the code is exchanged with the client secret.
    pkce: false,
    async start({ urls, app, state, redirectUri }) {
      return { url: authorizationUrl(`${urls.auth}/oauth2/authorize`, { clientId: app.CLIENT_ID, redirectUri, state, scopes: SCOPES }) };
    },

    async finish(ctx) {
      const answer = await requestToken(
        ctx,
        `${ctx.urls.api}/v2/oauth2/token`,
        {
          grant_type: 'authorization_code',
          code: ctx.query.code,
          client_id: ctx.app.CLIENT_ID,
          client_secret: ctx.app.CLIENT_SECRET,
          redirect_uri: ctx.redirectUri,
        },
        { headers: { 'user-agent': USER_AGENT } },
      );
      const granted = String(answer.scope ?? '').split(/[\s,]+/);
      if (answer.scope !== undefined && !granted.includes('write')) {
        throw new PublishError('refused', 'the permission to post (write) was not granted; connect again and allow it');
      }
      const blogs = await blogsOf(ctx, answer.access_token);
      if (blogs.length === 0) throw new PublishError('refused', 'this Tumblr account has no blog to post to');
      return blogs.map(
        (b): ConnectResult => ({
          externalId: b.uuid ?? b.name,
          name: b.title || b.name,
          picture: `${ctx.urls.api}/v2/blog/${b.name}/avatar/128`,
          profile: b.url ?? `https://${b.name}.tumblr.com/`,
          config: { ...tokenFields(answer), blog: b.uuid ?? b.name, blogName: b.name },
        }),
      );
    },
  },

  // Each refresh answers a new refresh token; the spent one stops working.
  refresh: (ctx) => refreshTokens(ctx, `${ctx.urls.api}/v2/oauth2/token`, 'Tumblr', { headers: { 'user-agent': USER_AGENT } }),

  async publish(ctx) {
    const config = configOf(ctx.channel);
    const s = ctx.item.settings as Settings;
    const { blocks, files } = npfContent(ctx.item.content, s, ctx.item.media);
    const body = {
      content: blocks,
      layout: [],
      state: 'published',
      ...(s.tags ? { tags: s.tags } : {}),
      ...(s.sourceUrl ? { source_url: s.sourceUrl } : {}),
    };
    const url = `${ctx.urls.api}/v2/blog/${encodeURIComponent(config.blog)}/posts`;
    const parseJson = (raw: string) => JSON.parse(bigIntsAsStrings(raw));
    let answer: { response?: { id?: string; id_string?: string } };
    if (files.length === 0) {
      answer = await ctx.http.json(url, { method: 'POST', headers: headers(config.accessToken), json: body, parseJson });
    } else {
      // Multipart: the NPF body as the `json` part, then each file under its block's identifier.
      const form = new FormData();
      form.append('json', new Blob([JSON.stringify(body)], { type: 'application/json' }));
      for (const { identifier, media } of files) {
        const max = media.mimeType.startsWith('video/') ? MAX_VIDEO_BYTES : MAX_IMAGE_BYTES;
        form.append(identifier, await mediaBlob(media, max, 'Tumblr'), mediaFilename(media));
      }
      answer = await ctx.http.json(url, { method: 'POST', headers: headers(config.accessToken), body: form, parseJson, timeoutMs: 10 * 60_000 });
    }
    const id = answer?.response?.id_string ?? answer?.response?.id;
    if (!id) throw new PublishError('unknown', 'Tumblr answered without a post id, so the outcome is unknown. Check the blog before retrying.');
    return release(config, String(id));
  },

  /** After an unknown outcome: the blog's newest posts, matched on their text blocks and time. */
  async findPublished(ctx) {
    const config = configOf(ctx.channel);
    const s = ctx.item.settings as Settings;
    const expected = npfContent(ctx.item.content, s, [])
      .blocks.filter((b) => b.type === 'text')
      .map((b) => b.text);
    const since = Math.floor(ctx.item.publishAt.getTime() / 1000) - 60;
    const found = (await newestPosts(ctx, config, 5)).find(
      (p) => (p.timestamp ?? 0) >= since && JSON.stringify(textOf(p).map((t) => t.trim())) === JSON.stringify(expected.map((t) => t.trim())),
    );
    return found ? release(config, String(found.id_string ?? found.id), found.post_url) : null;
  },

  async recentPosts(ctx) {
    const config = configOf(ctx.channel);
    return (await newestPosts(ctx, config, 20)).map((p): RecentPost => {
      const { releaseId, releaseUrl } = release(config, String(p.id_string ?? p.id), p.post_url);
      return { id: releaseId, url: releaseUrl!, text: textOf(p, false).join('\n\n'), ...(p.timestamp ? { at: p.timestamp * 1000 } : {}) };
    });
  },

  // Tumblr gives counts as they stand: the blog's followers and posts, a post's notes.
  analytics: {
    async channel(ctx) {
      const config = configOf(ctx.channel);
      const blog = (await blogsOf(ctx, config.accessToken)).find((b) => b.uuid === config.blog || b.name === config.blogName);
      if (!blog) throw new PublishError('refused', `the Tumblr account no longer lists the blog ${config.blogName}`);
      return currentFigures({ Followers: blog.followers, Posts: blog.posts });
    },
    async post(ctx) {
      const config = configOf(ctx.channel);
      const notes = await api<{ total_notes?: number; total_likes?: number; total_reblogs?: number }>(
        ctx,
        config.accessToken,
        `/blog/${encodeURIComponent(config.blog)}/notes`,
        { id: ctx.releaseId, mode: 'all' },
      );
      return currentFigures({ Notes: notes.total_notes, Likes: notes.total_likes, Reblogs: notes.total_reblogs });
    },
  },

  tools: {
    listBlogs: {
      description: 'The blogs the connected Tumblr account can post to (name, title, url).',
      async run(ctx) {
        const blogs = await blogsOf(ctx, configOf(ctx.channel).accessToken);
        return blogs.map((b) => ({ id: b.uuid ?? b.name, name: b.name, title: b.title ?? b.name, url: b.url ?? null }));
      },
    },
  },
};
