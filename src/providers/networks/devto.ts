/**
 * DEV (dev.to) and other Forem communities: the user pastes an API key from
 * Settings → Extensions; every call carries it in the `api-key` header and asks
 * for API v1 with the versioned Accept header (v0, without it, is deprecated).
 * A post is an article: the item's text is its Markdown body, the title and
 * the rest come from the post settings. There are no comments through the API,
 * so only the first item of a thread is published.
 *
 * DEV keeps no idempotency key but refuses a second article with the same title
 * and body from the same user; after an unknown outcome the article is looked
 * up among the user's own, and a repeat that DEV refuses as taken is that article.
 */
import { z } from 'zod';
import { postSettings } from '../adapter-kit/post-settings.ts';
import { OutboundRefused } from '../../lib/outbound.ts';
import { currentFigures } from '../adapter-kit/analytics-series.ts';
import type { NetworkAnswer, Verdict } from '../adapter-kit/http-failures.ts';
import type { NetworkRequest } from '../adapter-kit/network-http.ts';
import type { NetworkContext, Provider, PublishChannel, PublishContext, PublishItem, PublishResult, RecentPost } from '../types.ts';
import { PublishError, NetworkRefusal } from '../errors.ts';

const NETWORK = 'DEV';
const ACCEPT_V1 = 'application/vnd.forem.api-v1+json';
const MAX_TITLE = 128;
/** Forem's limit on body_markdown, in bytes. */
const MAX_BODY_BYTES = 800 * 1024;
const MAX_TAGS = 4;
const MAX_TAG_LIST = 126;
/** The error DEV gives a second article with the same title and body. */
const TAKEN = /Body markdown has already been taken/i;

const httpUrl = z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' });

const tag = z.object({
  value: z.string().optional(),
  label: z.string().regex(/^[A-Za-z0-9]+$/, 'DEV tags are letters and digits only (no spaces, hyphens or dots)'),
});

const settings = z.object({
  title: z.string().trim().min(2).max(MAX_TITLE).describe(`The article's title (at most ${MAX_TITLE} characters)`),
  main_image: z.object({ id: z.string().optional(), path: httpUrl }).optional().describe('Cover image (DEV recommends 1000×420)'),
  canonical: httpUrl.optional().describe('Where the article first appeared; must be unique on DEV'),
  organization: z
    .union([z.number().int().positive(), z.string().regex(/^\d+$/, 'must be an organization id')])
    .optional()
    .describe('Publish under this organization (its id; see the organizations tool)'),
  tags: z
    .array(tag)
    .max(MAX_TAGS, `DEV takes at most ${MAX_TAGS} tags`)
    .refine((tags) => tags.map((t) => t.label).join(',').length <= MAX_TAG_LIST, `the tag list is longer than ${MAX_TAG_LIST} characters`)
    .optional()
    .describe(`Up to ${MAX_TAGS} tags, letters and digits only`),
});

type Settings = z.infer<typeof settings>;

const credentials = z.object({
  apiKey: z.string().trim().min(8, 'is required: create one at dev.to → Settings → Extensions → DEV Community API Keys').describe('DEV API key'),
  url: httpUrl.optional().describe('Your Forem community, if not dev.to (e.g. https://community.example.com)'),
});

interface Config {
  apiKey: string;
  /** The Forem's API base, e.g. https://dev.to/api. */
  api: string;
  username: string;
}

interface Article {
  id: number;
  title: string;
  url: string;
  body_markdown?: string;
  published?: boolean;
  published_at?: string | null;
  page_views_count?: number;
  public_reactions_count?: number;
  comments_count?: number;
  organization?: { username: string; name: string } | null;
}

/** Forem errors are {"error": "...", "status": 422}; the per-user publish limit says its wait only in words. */
function readAnswer({ ok, status, body }: NetworkAnswer): Verdict | undefined {
  if (ok || typeof body !== 'object' || body === null) return undefined;
  const detail = typeof body.error === 'string' ? body.error : undefined;
  if (status === 429 && detail) {
    const wait = /try again in (\d+) seconds?/i.exec(detail);
    return { detail, ...(wait ? { retryAfterMs: Number(wait[1]) * 1000 } : {}) };
  }
  if (detail && TAKEN.test(detail)) return { kind: 'refused', detail, code: 'taken' };
  return detail ? { detail } : undefined;
}

function api(ctx: NetworkContext, config: Pick<Config, 'apiKey' | 'api'>, path: string, request: NetworkRequest = {}) {
  return ctx.http.json(`${config.api}${path}`, { ...request, headers: { 'api-key': config.apiKey, accept: ACCEPT_V1, ...request.headers } });
}

function configOf(channel: PublishChannel<Config>): Config {
  return channel.config;
}

/**
 * The body as DEV should show it. A body that opens with a front-matter block
 * (---) would be read by DEV as the article's own settings, overriding the
 * title and tags Herald sends: an empty HTML comment before it keeps it text.
 */
export function bodyMarkdown(content: string): string {
  return /^\s*---/.test(content) ? `<!-- -->\n\n${content}` : content;
}

/** The article's Markdown: the text, then the item's pictures by their public URLs (DEV has no upload API; it proxies images itself). */
function articleBody(item: PublishItem): string {
  const pictures = item.media.map((m) => `![${(m.alt ?? '').replace(/[[\]]/g, '')}](${m.url})`);
  return bodyMarkdown([item.content, ...pictures].filter((part) => part !== '').join('\n\n'));
}

function articleJson(ctx: PublishContext<Config>, s: Settings) {
  return {
    title: s.title,
    body_markdown: articleBody(ctx.item),
    published: true,
    ...(s.tags && s.tags.length > 0 ? { tags: s.tags.map((t) => t.label) } : {}),
    ...(s.main_image ? { main_image: s.main_image.path } : {}),
    ...(s.canonical ? { canonical_url: s.canonical } : {}),
    ...(s.organization !== undefined ? { organization_id: Number(s.organization) } : {}),
  };
}

/** The user's articles, newest first (drafts included). */
async function myArticles(ctx: NetworkContext, config: Config, perPage = 30, page = 1): Promise<Article[]> {
  return (await api(ctx, config, '/articles/me/all', { query: { per_page: perPage, page } })) ?? [];
}

/** The user's published article with this title and body, if DEV has it. */
async function findArticle(ctx: PublishContext<Config>, config: Config, title: string, body: string): Promise<PublishResult | null> {
  const found = (await myArticles(ctx, config)).find((a) => a.title === title && (a.body_markdown === undefined || a.body_markdown === body));
  return found ? { releaseId: String(found.id), releaseUrl: found.url } : null;
}

const SENT = 'devto-sent';

export const devto: Provider<Config> = {
  identifier: 'devto',
  name: NETWORK,
  auth: 'credentials',
  urls: { api: 'https://dev.to/api' },
  readAnswer,
  credentials,
  settings,
  rules: {
    // Forem caps the body at 800 KB of UTF-8; the check below counts the bytes.
    maxLength: MAX_BODY_BYTES,
    counting: 'utf8Bytes',
    // No upload API: pictures go into the Markdown by their public URLs; the cover is a URL in the settings.
    maxMedia: 10,
    mediaKinds: ['image'],
    media: { imageTypes: ['image/jpeg', 'image/png', 'image/gif', 'image/webp'] },
    threads: false,
  },
  // Forem allows one write a second per IP and key and says when to come back (429 with Retry-After),
  // before it takes the article: a write that meets the limit is simply retried after that wait.
  pacing: { concurrent: 3 },

  async connect(input, ctx) {
    const given = credentials.parse(input);
    const base = given.url ? `${given.url.replace(/\/+$/, '')}/api` : ctx.urls.api;
    if (given.url) {
      try {
        await ctx.outbound.checkReachable(base);
      } catch (err) {
        if (err instanceof OutboundRefused) throw new NetworkRefusal('credentials.url', err.reason, 'address');
        throw err;
      }
    }
    let me: { id: number; username: string; name?: string; profile_image?: string };
    try {
      me = await api(ctx, { apiKey: given.apiKey, api: base }, '/users/me');
    } catch (err) {
      if (err instanceof PublishError && err.kind === 'auth')
        throw new NetworkRefusal('credentials.apiKey', `${NETWORK} does not accept this API key (${err.message})`);
      throw err;
    }
    const config: Config = { apiKey: given.apiKey, api: base, username: me.username };
    return {
      externalId: `${new URL(base).host}:${me.id}`,
      name: me.name || me.username,
      picture: me.profile_image ?? null,
      profile: me.username,
      config: { ...config },
    };
  },

  // A repeat of the same article is refused as taken, which publish reads as "already there".
  repeatDropped: { by: 'DEV refuses a second article with the same title and body, and Herald then links the first' },

  async publish(ctx) {
    const config = configOf(ctx.channel);
    const s = postSettings(settings, ctx.item, NETWORK);
    const article = articleJson(ctx, s);
    const sentBefore = (await ctx.progress.get(SENT)) !== undefined;
    await ctx.progress.set(SENT, '1');
    try {
      const created = await api(ctx, config, '/articles', { method: 'POST', json: { article } });
      return { releaseId: String(created.id), releaseUrl: created.url ?? null };
    } catch (err) {
      // An attempt of this very item may have made the article: then "taken" means it is there.
      if (sentBefore && err instanceof PublishError && err.code === 'taken') {
        const found = await findArticle(ctx, config, article.title, article.body_markdown);
        if (found) return found;
      }
      if (err instanceof PublishError && err.code === 'taken') {
        throw new PublishError('refused', `${err.message}. You already have an article with this title and body on ${NETWORK}.`, undefined, 'taken');
      }
      throw err;
    }
  },

  async findPublished(ctx) {
    const config = configOf(ctx.channel);
    const s = postSettings(settings, ctx.item, NETWORK);
    return findArticle(ctx, config, s.title, articleBody(ctx.item));
  },

  async recentPosts(ctx) {
    const articles = await myArticles(ctx, configOf(ctx.channel));
    return articles
      .filter((a) => a.published !== false)
      .map((a): RecentPost => ({ id: String(a.id), url: a.url, text: a.title, at: a.published_at ? Date.parse(a.published_at) : undefined }));
  },

  analytics: {
    /** Totals over the user's published articles, as they stand (DEV keeps no daily history in its API). */
    async channel(ctx) {
      const config = configOf(ctx.channel);
      const articles: Article[] = [];
      for (let page = 1; page <= 10; page++) {
        const batch = await myArticles(ctx, config, 1000, page);
        articles.push(...batch.filter((a) => a.published !== false));
        if (batch.length < 1000) break;
      }
      const sum = (f: (a: Article) => number | undefined) => articles.reduce((n, a) => n + (f(a) ?? 0), 0);
      return currentFigures({
        Articles: articles.length,
        Views: sum((a) => a.page_views_count),
        Reactions: sum((a) => a.public_reactions_count),
        Comments: sum((a) => a.comments_count),
      });
    },
    /** One article's views (only its author sees them), reactions and comments. */
    async post(ctx) {
      const config = configOf(ctx.channel);
      for (let page = 1; page <= 10; page++) {
        const batch = await myArticles(ctx, config, 1000, page);
        const found = batch.find((a) => String(a.id) === ctx.releaseId);
        if (found) return currentFigures({ Views: found.page_views_count, Reactions: found.public_reactions_count, Comments: found.comments_count });
        if (batch.length < 1000) break;
      }
      throw new PublishError('refused', `${NETWORK} no longer lists this article among yours (it was deleted)`);
    },
  },

  tools: {
    organizations: {
      description: 'Organizations you have published for: → [{id, name, username}] (DEV lists no memberships, so they come from your articles)',
      async run(ctx) {
        const config = configOf(ctx.channel);
        const names = new Set<string>();
        for (const a of await myArticles(ctx, config, 1000)) if (a.organization?.username) names.add(a.organization.username);
        const found = [];
        for (const name of names) {
          const org = await api(ctx, config, `/organizations/${encodeURIComponent(name)}`);
          found.push({ id: org.id, name: org.name, username: org.username });
        }
        return found;
      },
    },
    tags: {
      description: 'Popular DEV tags: → [{value, label}]',
      async run(ctx) {
        const tags: { name: string }[] = (await api(ctx, configOf(ctx.channel), '/tags', { query: { per_page: 100 } })) ?? [];
        return tags.map((t) => ({ value: t.name, label: t.name }));
      },
    },
  },
};
