/**
 * WordPress sites (self-hosted, REST API `wp/v2`): the user gives the site's
 * address, their username and an application password, sent as HTTP Basic on
 * every call. A post is created in one request (title, HTML content, status,
 * slug, category and tag ids, featured image); the featured image is uploaded
 * to the media library first.
 *
 * WordPress has no idempotency key. Each post is sent with a slug Herald chose,
 * so after an unknown outcome (a 5xx or a timeout once the create was sent) the
 * post is looked up by that slug (or the `-2`, `-3`… WordPress gives a clash)
 * instead of being created twice.
 */
import { z } from 'zod';
import { postSettings } from '../adapter-kit/post-settings.ts';
import { OutboundRefused } from '../../lib/outbound.ts';
import { currentFigures } from '../adapter-kit/analytics-series.ts';
import type { NetworkAnswer, Verdict } from '../adapter-kit/http-failures.ts';
import { mediaFilename, readMedia } from '../adapter-kit/media-bytes.ts';
import type { NetworkRequest } from '../adapter-kit/network-http.ts';
import type { MediaRef, NetworkContext, Provider, PublishChannel, PublishContext, PublishResult } from '../types.ts';
import { PublishError, NetworkRefusal } from '../errors.ts';

const NETWORK = 'WordPress';
/** PHP's upload limits decide on each site; 2 MB is PHP's default, many hosts allow far more. */
const MAX_IMAGE_BYTES = 64 * 1024 * 1024;
const IMAGE_TYPES = ['image/jpeg', 'image/png', 'image/gif', 'image/webp'];
/** Statuses a post may be found in after an unknown outcome (context=edit shows them to their author). */
const ANY_STATUS = 'publish,future,draft,pending,private';
/** Slug variants WordPress makes on a clash that are looked at after an unknown outcome. */
const SLUG_VARIANTS = 10;
/** Clocks of Herald and the site may differ; a post this much older than the item's time is still a candidate. */
const CLOCK_SKEW_MS = 5 * 60_000;

const credentials = z.object({
  url: z
    .url({ protocol: /^https?$/, error: 'must be the http(s) address of the WordPress site, such as https://blog.example.com' })
    .describe('Address of the WordPress site, such as https://blog.example.com'),
  username: z.string().trim().min(1, 'is required: the username you log in to WordPress with').max(200).describe('Your WordPress username'),
  password: z
    .string()
    .trim()
    .min(1, 'is required: an application password from Users → Profile → Application Passwords')
    .max(200)
    .describe('An application password (Users → Profile → Application Passwords), not your login password'),
});

const termIds = z.array(z.number().int().positive());

const settings = z.object({
  title: z.string().trim().min(2, 'needs at least 2 characters').describe('Title of the post'),
  type: z
    .string()
    .regex(/^[a-z0-9_-]+$/i, 'must be the REST base of a post type, such as posts or pages')
    .describe("The post type's REST base: posts, pages, or a custom type (see the types tool)"),
  main_image: z.object({ id: z.string().optional(), path: z.string() }).optional().describe('Uploaded image to use as the featured image'),
  categories: termIds.optional().describe('Category ids (see the categories tool)'),
  tags: termIds.optional().describe('Tag ids (see the tags tool)'),
  status: z
    .enum(['publish', 'draft', 'pending', 'private'])
    .optional()
    .describe('publish (the default), draft, pending (for review: what a Contributor may do) or private'),
});

type Settings = z.infer<typeof settings>;

interface Config {
  /** The site's address, without a trailing slash. */
  site: string;
  /** The REST API root: `{site}/wp-json` or, without pretty permalinks, `{site}/?rest_route=`. */
  api: string;
  username: string;
  password: string;
  userId: number;
}

/** The URL of a REST route (`/wp/v2/posts`) under the site's API root, either form. */
function route(api: string, path: string): string {
  if (api.endsWith('rest_route=')) return `${api}${encodeURIComponent(path)}`;
  return `${api}${path}`;
}

function basic(config: Pick<Config, 'username' | 'password'>): Record<string, string> {
  return { authorization: `Basic ${Buffer.from(`${config.username}:${config.password}`).toString('base64')}` };
}

function rest<T = any>(ctx: NetworkContext, config: Config, path: string, request: NetworkRequest = {}): Promise<T> {
  return ctx.http.json<T>(route(config.api, path), { ...request, headers: { ...basic(config), ...request.headers } });
}

/** Codes of a request WordPress took as anonymous: the password was not accepted, or the Authorization header never arrived. */
const ANONYMOUS = new Set(['rest_not_logged_in', 'rest_cannot_create', 'rest_cannot_edit', 'rest_cannot_view', 'rest_forbidden', 'rest_cannot_read']);
const ANONYMOUS_HINT =
  'WordPress treated the request as anonymous: the application password was revoked or is wrong, or the server (a proxy, CGI or a security plugin) drops ' +
  'the Authorization header';

/**
 * WordPress's error body `{code, message, data: {status, params}}`. Every 401 is
 * the credentials (there is no token to refresh: the user connects again).
 * A page that is not WordPress's JSON comes from a host, firewall or security
 * plugin in front of the site.
 */
function readAnswer({ ok, status, body, isJson, detail }: NetworkAnswer): Verdict | undefined {
  if (ok) return undefined;
  if (!isJson || typeof body !== 'object' || body === null) {
    const snippet = detail
      .replace(/<[^>]*>/g, ' ')
      .replace(/\s+/g, ' ')
      .trim()
      .slice(0, 200);
    return { detail: `not WordPress's own answer (a host, firewall or security plugin in front of the site answered)${snippet ? `: ${snippet}` : ''}` };
  }
  const code = typeof body.code === 'string' ? body.code : undefined;
  const message = typeof body.message === 'string' ? body.message.replace(/<\/?strong>/g, '') : undefined;
  const params = body.data?.params && typeof body.data.params === 'object' ? Object.values(body.data.params as Record<string, string>).join('; ') : '';
  const words = [message, params && `(${params})`].filter(Boolean).join(' ') || undefined;
  if (status === 401) {
    const hint = code && ANONYMOUS.has(code) ? `. ${ANONYMOUS_HINT}` : '';
    return { kind: 'auth', detail: `${words ?? 'not logged in'}${hint}`, code };
  }
  return { detail: words && code ? `${words} [${code}]` : words, code };
}

/** The site's address as the user gave it, tidied: no query, fragment or trailing slash. */
function siteOf(raw: string): string {
  const url = new URL(raw);
  url.search = '';
  url.hash = '';
  return url.toString().replace(/\/+$/, '');
}

interface Me {
  id: number;
  name?: string;
  slug?: string;
  avatar_urls?: Record<string, string>;
}

/** users/me under one API root; undefined when the root is not there (the other form may be). */
async function whoAmI(ctx: NetworkContext, config: Config): Promise<Me | undefined> {
  const answer = await ctx.http.call(route(config.api, '/wp/v2/users/me'), { headers: basic(config), query: { context: 'edit' } }).catch((err: unknown) => {
    // 404: no REST route here (pretty permalinks off, or not WordPress); the caller tries the other root.
    if (err instanceof PublishError && err.kind === 'refused' && /answered 404/.test(err.message)) return undefined;
    throw err;
  });
  if (!answer) return undefined;
  if (!answer.isJson || typeof answer.body?.id !== 'number') return undefined;
  return answer.body as Me;
}

function largestAvatar(urls: Record<string, string> | undefined): string | null {
  const sizes = Object.keys(urls ?? {})
    .map(Number)
    .filter(Number.isFinite)
    .sort((a, b) => b - a);
  return sizes.length > 0 ? urls![String(sizes[0])] : null;
}

/** A slug from the title (lower-case ASCII words joined by "-"), as WordPress would keep it; empty for a title without Latin letters or digits. */
export function slugOf(title: string): string {
  return title
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/&[a-z]+;/g, '')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 180)
    .replace(/-+$/, '');
}

/** The featured image's bytes: the `main_image` setting, else the item's own image. */
async function featuredImage(
  ctx: PublishContext<Config>,
  s: Settings,
): Promise<{ key: string; bytes: Uint8Array; type: string; filename: string; alt?: string | null } | undefined> {
  if (s.main_image) {
    const response = await ctx.http.send(s.main_image.path, { timeoutMs: 120_000 });
    if (!response.ok) {
      await response.body?.cancel();
      throw new PublishError('refused', `the featured image (main_image) could not be read: ${response.status}`);
    }
    const bytes = new Uint8Array(await response.arrayBuffer());
    const filename = decodeURIComponent(new URL(s.main_image.path).pathname.split('/').pop() || 'image');
    return { key: s.main_image.id ?? s.main_image.path, bytes, type: response.headers.get('content-type')?.split(';')[0] ?? 'image/jpeg', filename };
  }
  const media: MediaRef | undefined = ctx.item.media[0];
  if (!media) return undefined;
  const bytes = new Uint8Array(await readMedia(media, MAX_IMAGE_BYTES, NETWORK));
  return { key: media.id, bytes, type: media.mimeType, filename: mediaFilename(media), alt: media.alt };
}

/**
 * Uploads the featured image to the media library (raw body, Content-Disposition)
 * and returns its id. The id is kept for the item, so a retry uses the same
 * attachment instead of adding another one.
 */
async function uploadFeatured(ctx: PublishContext<Config>, config: Config, s: Settings): Promise<number | undefined> {
  const image = await featuredImage(ctx, s);
  if (!image) return undefined;
  const key = `wordpress-media:${config.site}:${image.key}`;
  const kept = await ctx.progress.get(key);
  if (kept) return Number(kept);
  const filename = image.filename.replace(/["\\\r\n]/g, '_');
  const uploaded = await rest<{ id: number }>(ctx, config, '/wp/v2/media', {
    method: 'POST',
    headers: { 'content-type': image.type, 'content-disposition': `attachment; filename="${filename}"` },
    query: { alt_text: image.alt || undefined },
    body: image.bytes,
    timeoutMs: 5 * 60_000,
    // An attachment no post uses publishes nothing.
    repeatable: true,
  });
  await ctx.progress.set(key, String(uploaded.id));
  return uploaded.id;
}

interface WpPost {
  id: number;
  link: string;
  slug?: string;
  author?: number;
  date_gmt?: string | null;
  modified_gmt?: string | null;
  title?: { raw?: string; rendered?: string };
  content?: { raw?: string; rendered?: string };
}

function gmt(value: string | null | undefined): number {
  return value ? Date.parse(`${value}Z`) : Number.NaN;
}

/** Title text as WordPress may have stored it (entities encoded by its filters) compared plainly. */
function plain(text: string): string {
  return text
    .replace(/<[^>]*>/g, '')
    .replace(/&amp;/g, '&')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;|&#0?34;/g, '"')
    .replace(/&#0?39;|&#8217;/g, "'")
    .trim();
}

export const wordpress: Provider<Config> = {
  identifier: 'wordpress',
  name: NETWORK,
  auth: 'credentials',
  readAnswer,
  credentials,
  settings,
  connectNote:
    'Use an application password (wp-admin → Users → Profile → Application Passwords), not your login password. WordPress offers them only on sites ' +
    'served over HTTPS (or marked local). A Contributor cannot publish: choose the status "pending" to send posts for review. WordPress.com sites ' +
    'without plugins use another API and cannot be connected here.',
  rules: {
    // The post is HTML stored in a longtext column; PHP's request size is the practical bound.
    maxLength: 100_000,
    maxMedia: 1,
    mediaKinds: ['image'],
    threads: false,
    media: { imageTypes: IMAGE_TYPES, maxImageBytes: MAX_IMAGE_BYTES },
  },
  pacing: { perChannel: { count: 30, windowMs: 60_000 } },

  async connect(input, ctx) {
    const given = credentials.parse(input);
    const site = siteOf(given.url);
    try {
      await ctx.outbound.checkReachable(site);
    } catch (err) {
      if (err instanceof OutboundRefused) throw new NetworkRefusal('credentials.url', err.reason, 'address');
      throw err;
    }
    const password = given.password.replace(/\s+/g, '');
    let config: Config | undefined;
    let me: Me | undefined;
    try {
      for (const api of [`${site}/wp-json`, `${site}/?rest_route=`]) {
        const candidate: Config = { site, api, username: given.username, password, userId: 0 };
        me = await whoAmI(ctx, candidate);
        if (me) {
          config = { ...candidate, userId: me.id };
          break;
        }
      }
    } catch (err) {
      if (err instanceof PublishError && err.kind === 'auth') {
        const field = err.code === 'invalid_username' || err.code === 'invalid_email' ? 'credentials.username' : 'credentials.password';
        throw new NetworkRefusal(field, `${NETWORK} refused the credentials: ${err.message}`, 'refused');
      }
      throw err;
    }
    if (!config || !me)
      throw new NetworkRefusal('credentials.url', `${site} does not answer as a WordPress site with the REST API (wp-json) enabled`, 'refused');
    // The site's name names the channel; the user's own name where the index is not readable.
    const index = await ctx.http.json<{ name?: string }>(route(config.api, '/'), { headers: basic(config) }).catch(() => undefined);
    return {
      externalId: `${site}#${me.id}`,
      name: index?.name || me.name || given.username,
      picture: largestAvatar(me.avatar_urls),
      profile: me.slug ?? given.username,
      config: { ...config },
    };
  },

  async publish(ctx) {
    const config = ctx.channel.config;
    const s = postSettings(settings, ctx.item, NETWORK);
    const featured = await uploadFeatured(ctx, config, s);
    const slug = slugOf(s.title);
    const created = await rest<WpPost>(ctx, config, `/wp/v2/${s.type}`, {
      method: 'POST',
      json: {
        title: s.title,
        content: ctx.item.content,
        status: s.status ?? 'publish',
        ...(slug ? { slug } : {}),
        ...(s.categories?.length ? { categories: s.categories } : {}),
        ...(s.tags?.length ? { tags: s.tags } : {}),
        ...(featured !== undefined ? { featured_media: featured } : {}),
      },
    });
    if (typeof created?.id !== 'number')
      throw new PublishError('unknown', `${NETWORK} answered without the post's id, so the outcome is unknown. Check the site before retrying.`);
    return { releaseId: String(created.id), releaseUrl: created.link ?? null };
  },

  /**
   * The post by its slug (or a numbered variant) or, for a title without a slug,
   * by a search for the title: this user's, with the same title, no older than the item.
   */
  async findPublished(ctx) {
    const config = ctx.channel.config;
    const s = postSettings(settings, ctx.item, NETWORK);
    const slug = slugOf(s.title);
    const slugs = slug ? [slug, ...Array.from({ length: SLUG_VARIANTS - 1 }, (_, i) => `${slug}-${i + 2}`)].join(',') : undefined;
    const found = await rest<WpPost[]>(ctx, config, `/wp/v2/${s.type}`, {
      query: {
        ...(slugs ? { slug: slugs } : { search: s.title }),
        author: config.userId,
        status: ANY_STATUS,
        context: 'edit',
        orderby: 'date',
        per_page: 20,
      },
    });
    const since = ctx.item.publishAt.getTime() - CLOCK_SKEW_MS;
    const match = (found ?? []).find((p) => {
      const at = Math.max(gmt(p.date_gmt) || 0, gmt(p.modified_gmt) || 0);
      return (p.author === undefined || p.author === config.userId) && at >= since && plain(p.title?.raw ?? p.title?.rendered ?? '') === plain(s.title);
    });
    return match ? ({ releaseId: String(match.id), releaseUrl: match.link ?? null } satisfies PublishResult) : null;
  },

  async recentPosts(ctx) {
    const config = ctx.channel.config;
    const posts = await rest<WpPost[]>(ctx, config, '/wp/v2/posts', {
      query: { author: config.userId, status: 'publish', context: 'edit', orderby: 'date', per_page: 25 },
    });
    return (posts ?? []).map((p) => ({
      id: String(p.id),
      url: p.link,
      text: plain(p.title?.raw ?? p.title?.rendered ?? ''),
      at: gmt(p.date_gmt) || undefined,
    }));
  },

  analytics: {
    /** WordPress keeps no statistics of its own (Jetpack does): the counts it has, as they stand. */
    async channel(ctx) {
      const config = ctx.channel.config;
      const posts = await total(ctx, config, '/wp/v2/posts', { author: config.userId, status: 'publish' });
      return currentFigures({ Posts: posts });
    },
    async post(ctx) {
      const config = ctx.channel.config;
      return currentFigures({ Comments: await total(ctx, config, '/wp/v2/comments', { post: ctx.releaseId }) });
    },
  },

  tools: {
    types: {
      description: 'List the post types this site publishes through the REST API: [{slug, name, rest_base}]',
      async run(ctx) {
        const config = ctx.channel.config;
        const types = await rest<Record<string, { slug: string; name: string; rest_base?: string }>>(ctx, config, '/wp/v2/types', {
          query: { context: 'edit' },
        });
        return Object.values(types ?? {})
          .filter((t) => t.rest_base && t.slug !== 'attachment' && !t.slug.startsWith('wp_') && !t.slug.startsWith('nav_'))
          .map(({ slug, name, rest_base }) => ({ slug, name, rest_base }));
      },
    },
    categories: {
      description: "List the site's categories: [{id, name, parent}]",
      run: (ctx) => terms(ctx, ctx.channel, '/wp/v2/categories', (t) => ({ id: t.id, name: t.name, parent: t.parent ?? 0 })),
    },
    tags: {
      description: "List the site's tags: [{id, name}]",
      run: (ctx) => terms(ctx, ctx.channel, '/wp/v2/tags', (t) => ({ id: t.id, name: t.name })),
    },
  },
};

/** The X-WP-Total of a listing (one item is read). */
async function total(ctx: NetworkContext, config: Config, path: string, query: Record<string, string | number>): Promise<number> {
  const answer = await ctx.http.call(route(config.api, path), { headers: basic(config), query: { ...query, per_page: 1, _fields: 'id' } });
  return Number(answer.headers.get('x-wp-total') ?? (Array.isArray(answer.body) ? answer.body.length : 0));
}

interface Term {
  id: number;
  name: string;
  parent?: number;
}

/** Every term of a taxonomy, page by page (100 a page, as X-WP-TotalPages says), up to 2,000. */
async function terms<T>(ctx: NetworkContext, channel: PublishChannel<Config>, path: string, shape: (t: Term) => T): Promise<T[]> {
  const config = channel.config;
  const all: T[] = [];
  for (let page = 1; page <= 20; page++) {
    const answer = await ctx.http.call(route(config.api, path), { headers: basic(config), query: { per_page: 100, page, orderby: 'name', hide_empty: false } });
    const items = Array.isArray(answer.body) ? (answer.body as Term[]) : [];
    all.push(...items.map(shape));
    if (page >= Number(answer.headers.get('x-wp-totalpages') ?? 1) || items.length === 0) break;
  }
  return all;
}
