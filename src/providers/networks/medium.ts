/**
 * Medium, through its legacy API (frozen since 2023: no new integrations, and
 * newer accounts cannot create integration tokens). A person who still holds a
 * self-issued integration token pastes it; it never expires and has no refresh.
 * A post is a Markdown article on the user's profile or in a publication.
 *
 * Medium does not show the API's `title` in the post, so the title and
 * subtitle open the Markdown. There is no list of one's posts in the API: after
 * an unknown outcome the profile's public RSS feed is searched for the title.
 */
import { z } from 'zod';
import { postSettings } from '../adapter-kit/post-settings.ts';
import type { NetworkAnswer, Verdict } from '../adapter-kit/http-failures.ts';
import type { NetworkRequest } from '../adapter-kit/network-http.ts';
import type { NetworkContext, Provider, PublishChannel, PublishContext, PublishResult, RecentPost } from '../types.ts';
import { PublishError, NetworkRefusal } from '../errors.ts';

const NETWORK = 'Medium';
const MAX_CONTENT = 100_000;
/** Medium uses the first three tags and ignores longer ones than 25 characters. */
const USED_TAGS = 3;
const MAX_TAG_LENGTH = 25;

const httpUrl = z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' });

const settings = z.object({
  title: z.string().trim().min(2).max(100, 'Medium ignores titles over 100 characters').describe('The article title (shown at the top of the post)'),
  subtitle: z.string().trim().min(2).max(200).describe('The subtitle (shown under the title)'),
  canonical: httpUrl.optional().describe('Where the article first appeared'),
  publication: z.string().min(1).optional().describe('Publish in this publication (its id; the publications tool lists yours)'),
  tags: z
    .array(z.object({ value: z.string().min(1).max(MAX_TAG_LENGTH, `Medium ignores tags over ${MAX_TAG_LENGTH} characters`), label: z.string().optional() }))
    .max(4, 'at most 4 tags (Medium uses the first 3)')
    .optional()
    .describe('Tags; Medium uses the first 3'),
});

type Settings = z.infer<typeof settings>;

const credentials = z.object({
  apiKey: z
    .string()
    .trim()
    .min(8, 'is required: an integration token from Medium → Settings → Security and apps → Integration tokens')
    .describe('Integration token (only accounts that already have one: Medium makes no new ones)'),
});

interface Config {
  apiKey: string;
  userId: string;
  username: string;
}

/** Medium's errors: {"errors":[{"message","code"}]}; its numeric code travels with the failure. */
function readAnswer({ ok, body }: NetworkAnswer): Verdict | undefined {
  if (ok) return undefined;
  const first = Array.isArray(body?.errors) ? body.errors[0] : undefined;
  if (!first?.message) return undefined;
  return { detail: first.code !== undefined ? `${first.message} (code ${first.code})` : first.message, code: first.code };
}

function configOf(channel: PublishChannel<Config>): Config {
  return channel.config;
}

function api<T = any>(ctx: NetworkContext, apiKey: string, path: string, request: NetworkRequest = {}): Promise<T> {
  return ctx.http.json<T>(`${ctx.urls.api}${path}`, {
    ...request,
    headers: { authorization: `Bearer ${apiKey}`, accept: 'application/json', 'accept-charset': 'utf-8', ...request.headers },
  });
}

/** The article: title and subtitle on top (Medium shows no title of its own), the text, then the pictures, which Medium fetches. */
function articleContent(ctx: PublishContext<Config>, s: Settings): string {
  const pictures = ctx.item.media.map((m) => `![${(m.alt ?? '').replace(/[[\]]/g, '')}](${m.url})`);
  return [`# ${s.title}`, `## ${s.subtitle}`, ctx.item.content, ...pictures].filter((part) => part.trim() !== '').join('\n\n');
}

/** A writer of a publication may only submit drafts; an editor publishes. */
async function publicationStatus(ctx: PublishContext<Config>, config: Config, publication: string): Promise<'public' | 'draft'> {
  const answer = await api<{ data: { userId: string; role: string }[] }>(ctx, config.apiKey, `/publications/${encodeURIComponent(publication)}/contributors`);
  const me = answer.data.find((c) => c.userId === config.userId);
  if (!me) throw new PublishError('refused', `this Medium account is not a contributor of publication ${publication}`);
  return me.role === 'editor' ? 'public' : 'draft';
}

interface FeedItem {
  id: string;
  title: string;
  url: string;
  at?: number;
}

function unwrap(text: string): string {
  return text
    .replace(/^<!\[CDATA\[([\s\S]*)\]\]>$/, '$1')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&')
    .trim();
}

/** The profile's RSS feed (public posts only): Medium's one listing of a user's posts. */
async function feed(ctx: NetworkContext, username: string): Promise<FeedItem[]> {
  const answer = await ctx.http.call(`${ctx.urls.feed}/feed/@${encodeURIComponent(username)}`, { headers: { accept: 'application/rss+xml' } });
  const items: FeedItem[] = [];
  for (const [, item] of answer.raw.matchAll(/<item>([\s\S]*?)<\/item>/g)) {
    const field = (name: string) => {
      const m = new RegExp(`<${name}\\b[^>]*>([\\s\\S]*?)</${name}>`).exec(item);
      return m ? unwrap(m[1]) : '';
    };
    const url = field('link');
    const id = /\/p\/([0-9a-f]+)/.exec(field('guid'))?.[1] ?? /-([0-9a-f]{8,})(?:\?|$)/.exec(url)?.[1];
    if (!id) continue;
    const at = Date.parse(field('pubDate'));
    items.push({ id, title: field('title'), url: url.split('?')[0], at: Number.isNaN(at) ? undefined : at });
  }
  return items;
}

export const medium: Provider<Config> = {
  identifier: 'medium',
  name: NETWORK,
  auth: 'credentials',
  urls: { api: 'https://api.medium.com/v1', feed: 'https://medium.com' },
  readAnswer,
  credentials,
  connectNote:
    'Medium no longer supports its API: it accepts no new integrations, and accounts created since about 2023 cannot create integration tokens. Connect ' +
    'Medium only if you already have an integration token; Medium may stop accepting it without notice.',
  settings,
  rules: {
    maxLength: MAX_CONTENT,
    maxMedia: 10,
    mediaKinds: ['image'],
    // Medium fetches pictures by URL and takes these types.
    media: { imageTypes: ['image/jpeg', 'image/png', 'image/gif'] },
    threads: false,
  },
  pacing: { concurrent: 3 },

  async connect(input, ctx) {
    const { apiKey } = credentials.parse(input);
    let me: { id: string; username: string; name?: string; imageUrl?: string; url?: string };
    try {
      me = (await api(ctx, apiKey, '/me')).data;
    } catch (err) {
      if (err instanceof PublishError && err.kind === 'auth')
        throw new NetworkRefusal('credentials.apiKey', `${NETWORK} does not accept this token (${err.message})`);
      throw err;
    }
    const config: Config = { apiKey, userId: me.id, username: me.username };
    return { externalId: me.id, name: me.name || me.username, picture: me.imageUrl ?? null, profile: me.username, config: { ...config } };
  },

  async publish(ctx) {
    const config = configOf(ctx.channel);
    const s = postSettings(settings, ctx.item, NETWORK);
    const status = s.publication ? await publicationStatus(ctx, config, s.publication) : 'public';
    const path = s.publication ? `/publications/${encodeURIComponent(s.publication)}/posts` : `/users/${encodeURIComponent(config.userId)}/posts`;
    const created = await api<{ data: { id: string; url: string } }>(ctx, config.apiKey, path, {
      method: 'POST',
      json: {
        title: s.title,
        contentFormat: 'markdown',
        content: articleContent(ctx, s),
        ...(s.tags && s.tags.length > 0 ? { tags: s.tags.slice(0, USED_TAGS).map((t) => t.value) } : {}),
        ...(s.canonical ? { canonicalUrl: s.canonical } : {}),
        publishStatus: status,
      },
    });
    return { releaseId: created.data.id, releaseUrl: created.data.url };
  },

  /** Only public posts on the profile are in its feed; a publication's post cannot be looked up. */
  async findPublished(ctx): Promise<PublishResult | null> {
    const config = configOf(ctx.channel);
    const s = postSettings(settings, ctx.item, NETWORK);
    if (s.publication) throw new PublishError('unknown', 'Medium lists no posts of a publication through its API');
    const since = ctx.item.publishAt.getTime() - 60_000;
    const found = (await feed(ctx, config.username)).find((p) => p.title === s.title && (p.at === undefined || p.at >= since - 60_000));
    return found ? { releaseId: found.id, releaseUrl: found.url } : null;
  },

  async recentPosts(ctx) {
    return (await feed(ctx, configOf(ctx.channel).username)).map((p): RecentPost => ({ id: p.id, url: p.url, text: p.title, at: p.at }));
  },

  // Medium's API reports no figures, so there is no `analytics`.

  tools: {
    publications: {
      description: 'Publications you belong to: → [{id, name, url}]',
      async run(ctx) {
        const config = configOf(ctx.channel);
        const answer = await api<{ data: { id: string; name: string; url: string }[] }>(
          ctx,
          config.apiKey,
          `/users/${encodeURIComponent(config.userId)}/publications`,
        );
        return answer.data.map((p) => ({ id: p.id, name: p.name, url: p.url }));
      },
    },
  },
};
