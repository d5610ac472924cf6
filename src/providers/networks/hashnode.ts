/**
 * Hashnode, through its GraphQL API. The user pastes a Personal Access Token
 * (hashnode.com/settings/developer); a post is an article published with
 * `publishPost` in the publication the post settings name. Since 2026-05-13
 * writes need the publication to be on Hashnode's Pro plan: Hashnode's own
 * FORBIDDEN message then reaches the user. The API moved to gql-beta.hashnode.com
 * (the old host answers 301 and serves no GraphQL); the URL stays configurable
 * with HERALD_HASHNODE_API_URL.
 *
 * GraphQL failures arrive in 200 answers as `errors[].extensions.code`, told
 * apart here. There is no idempotency key: after an unknown outcome the
 * publication's newest posts are searched for the title.
 */
import { z } from 'zod';
import { postSettings } from '../adapter-kit/post-settings.ts';
import { currentFigures } from '../adapter-kit/analytics-series.ts';
import type { NetworkAnswer, Verdict } from '../adapter-kit/http-failures.ts';
import type { NetworkContext, Provider, PublishChannel, PublishItem, RecentPost } from '../types.ts';
import { PublishError, NetworkRefusal } from '../errors.ts';

const NETWORK = 'Hashnode';
/** Hashnode refuses requests over 100 KB; the article's Markdown must leave room for the rest of the request. */
const MAX_CONTENT_BYTES = 95_000;
const MAX_TAGS = 15;
const API = 'https://gql-beta.hashnode.com';

const httpUrl = z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' });

const tag = z.object({
  value: z.string().min(1).describe('The tag slug, e.g. graphql'),
  label: z.string().min(1).describe('The tag name, e.g. GraphQL'),
});

const settings = z.object({
  title: z.string().trim().min(6, 'Hashnode titles have at least 6 characters').max(250).describe('The article title'),
  publication: z
    .string()
    .regex(/^[a-f0-9]{24}$/i, 'must be a Hashnode publication id (the publications tool lists yours)')
    .describe('The publication (blog) to publish in'),
  tags: z.array(tag).min(1, 'Hashnode needs at least one tag').max(MAX_TAGS, `Hashnode takes at most ${MAX_TAGS} tags`).describe('Tags (1-15)'),
  subtitle: z.string().trim().max(250).optional().describe('Subtitle'),
  main_image: z.object({ id: z.string().optional(), path: httpUrl }).optional().describe('Cover image'),
  canonical: httpUrl.optional().describe('Where the article first appeared'),
});

type Settings = z.infer<typeof settings>;

const credentials = z.object({
  apiKey: z
    .string()
    .trim()
    .min(8, 'is required: create a Personal Access Token at hashnode.com/settings/developer')
    .describe('Personal Access Token (hashnode.com → Account settings → Developer)'),
});

interface Config {
  apiKey: string;
  username: string;
}

interface GraphQLError {
  message: string;
  extensions?: { code?: string };
}

const REFUSED = new Set(['FORBIDDEN', 'NOT_FOUND', 'BAD_USER_INPUT', 'GRAPHQL_VALIDATION_FAILED', 'GRAPHQL_PARSE_FAILED']);

/** GraphQL errors, which Hashnode sends in 200 answers. */
function readAnswer({ body }: NetworkAnswer): Verdict | undefined {
  const errors: GraphQLError[] | undefined = body?.errors;
  if (!Array.isArray(errors) || errors.length === 0) return undefined;
  const first = errors[0];
  const code = first.extensions?.code ?? 'UNKNOWN';
  const detail = `${code}: ${first.message}`;
  if (code === 'UNAUTHENTICATED') return { kind: 'auth', detail, code };
  if (REFUSED.has(code)) return { kind: 'refused', detail, code };
  // INTERNAL_SERVER_ERROR and anything unnamed: Hashnode failed while handling it.
  return { kind: 'server', detail, code };
}

async function gql<T = any>(ctx: NetworkContext, apiKey: string, query: string, variables: Record<string, unknown> = {}, write = false): Promise<T> {
  const answer = await ctx.http
    .json<{ data?: T }>(ctx.urls.api, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}` },
      json: { query, variables },
      // Queries are reads, even over POST; only a mutation may have published.
      repeatable: !write,
    })
    .catch((err) => {
      // The retired gql.hashnode.com answers 301 to a web page; a redirect is never followed (a POST would turn into a GET).
      if (err instanceof PublishError && err.kind === 'refused' && /redirect/i.test(err.message)) {
        throw new PublishError('refused', `${NETWORK} redirected the API request: the API has moved, so this server's HERALD_HASHNODE_API_URL must be ${API}`);
      }
      throw err;
    });
  if (!answer?.data) throw new PublishError(write ? 'unknown' : 'retryable', `${NETWORK} answered without data`);
  return answer.data;
}

function configOf(channel: PublishChannel<Config>): Config {
  return channel.config;
}

/** A tag as publishPost takes it: by slug (unknown slugs are created), with its name. */
function tagInput(t: { value: string; label: string }): { slug: string; name: string } {
  // Older clients send Hashnode's tag ObjectIds as values; the slug then comes from the name.
  const slug =
    /^[a-z0-9-]+$/.test(t.value) && !/^[a-f0-9]{24}$/.test(t.value)
      ? t.value
      : t.label
          .toLowerCase()
          .normalize('NFKD')
          .replace(/[^a-z0-9]+/g, '-')
          .replace(/^-|-$/g, '');
  return { slug, name: t.label };
}

/** The Markdown: the text, then the item's pictures by their public URLs. */
function articleBody(item: PublishItem): string {
  const pictures = item.media.map((m) => `![${(m.alt ?? '').replace(/[[\]]/g, '')}](${m.url})`);
  return [item.content, ...pictures].filter((part) => part !== '').join('\n\n');
}

function publishInput(item: PublishItem, s: Settings) {
  return {
    publicationId: s.publication,
    title: s.title,
    contentMarkdown: articleBody(item),
    tags: s.tags.map(tagInput),
    ...(s.subtitle ? { subtitle: s.subtitle } : {}),
    ...(s.main_image ? { coverImage: s.main_image.path } : {}),
    ...(s.canonical ? { originalArticleURL: s.canonical } : {}),
  };
}

const PUBLISH = `mutation PublishPost($input: PublishPostInput!) {
  publishPost(input: $input) { post { id slug url title } }
}`;

const PUBLICATION_POSTS = `query PublicationPosts($id: ObjectId!, $first: Int!) {
  publication(id: $id) { id posts(first: $first) { edges { node { id title url publishedAt author { username } } } } }
}`;

const ME = `query Me {
  me { id username name profilePicture publications(first: 20) { edges { node { id title url } } } }
}`;

interface PostNode {
  id: string;
  title: string;
  url: string;
  publishedAt?: string;
  author?: { username: string };
}

async function publicationPosts(ctx: NetworkContext, config: Config, publication: string, first = 20): Promise<PostNode[]> {
  const data = await gql(ctx, config.apiKey, PUBLICATION_POSTS, { id: publication, first });
  return (data.publication?.posts?.edges ?? []).map((e: { node: PostNode }) => e.node);
}

export const hashnode: Provider<Config> = {
  identifier: 'hashnode',
  name: NETWORK,
  auth: 'credentials',
  urls: { api: API },
  readAnswer,
  credentials,
  connectNote:
    'Publishing through the Hashnode API needs the publication to be on the Pro plan (since May 2026); otherwise Hashnode refuses each post with its ' +
    'Pro-plan message.',
  settings,
  rules: {
    maxLength: MAX_CONTENT_BYTES,
    counting: 'utf8Bytes',
    // Pictures go into the Markdown by their public URLs; the cover is a URL in the settings.
    maxMedia: 10,
    mediaKinds: ['image'],
    media: { imageTypes: ['image/jpeg', 'image/png', 'image/gif', 'image/webp'], maxImageBytes: 8 * 1024 * 1024 },
    threads: false,
  },
  pacing: { concurrent: 3 },

  async connect(input, ctx) {
    const given = credentials.parse(input);
    let me: { id: string; username: string; name?: string; profilePicture?: string } | null;
    try {
      me = (await gql(ctx, given.apiKey, ME)).me;
    } catch (err) {
      if (err instanceof PublishError && err.kind === 'auth')
        throw new NetworkRefusal('credentials.apiKey', `${NETWORK} does not accept this token (${err.message})`);
      throw err;
    }
    if (!me) throw new NetworkRefusal('credentials.apiKey', `${NETWORK} does not know the account of this token`);
    const config: Config = { apiKey: given.apiKey, username: me.username };
    return { externalId: me.id, name: me.name || me.username, picture: me.profilePicture ?? null, profile: me.username, config: { ...config } };
  },

  async publish(ctx) {
    const config = configOf(ctx.channel);
    const s = postSettings(settings, ctx.item, NETWORK);
    const data = await gql(ctx, config.apiKey, PUBLISH, { input: publishInput(ctx.item, s) }, true);
    const post = data.publishPost?.post;
    if (!post?.id) throw new PublishError('unknown', `${NETWORK} answered without the post; check the publication before publishing again`);
    return { releaseId: post.id, releaseUrl: post.url ?? null };
  },

  /** The publication's newest posts by this user, for the item's title. */
  async findPublished(ctx) {
    const config = configOf(ctx.channel);
    const s = postSettings(settings, ctx.item, NETWORK);
    const since = ctx.item.publishAt.getTime() - 60_000;
    const found = (await publicationPosts(ctx, config, s.publication)).find(
      (p) => p.title === s.title && (!p.author || p.author.username === config.username) && (!p.publishedAt || Date.parse(p.publishedAt) >= since),
    );
    return found ? { releaseId: found.id, releaseUrl: found.url } : null;
  },

  /** The newest posts of each of the user's publications on Pro (the others cannot be read through the API). */
  async recentPosts(ctx) {
    const config = configOf(ctx.channel);
    const me = (await gql(ctx, config.apiKey, ME)).me;
    const posts: RecentPost[] = [];
    for (const { node } of me?.publications?.edges ?? []) {
      try {
        for (const p of await publicationPosts(ctx, config, node.id, 10))
          posts.push({ id: p.id, url: p.url, text: p.title, at: p.publishedAt ? Date.parse(p.publishedAt) : undefined });
      } catch (err) {
        if (!(err instanceof PublishError) || err.code !== 'FORBIDDEN') throw err;
      }
    }
    return posts.sort((a, b) => (b.at ?? 0) - (a.at ?? 0));
  },

  analytics: {
    /** A post's views, reactions and replies as they stand. */
    async post(ctx) {
      const data = await gql(ctx, configOf(ctx.channel).apiKey, 'query Post($id: ID!) { post(id: $id) { id views reactionCount responseCount } }', {
        id: ctx.releaseId,
      });
      if (!data.post) throw new PublishError('refused', `${NETWORK} no longer shows this post (it was deleted)`);
      return currentFigures({ Views: data.post.views, Reactions: data.post.reactionCount, Responses: data.post.responseCount });
    },
  },

  tools: {
    publications: {
      description: 'Your Hashnode publications: → [{id, title, url}] (publishing needs the Pro plan on the publication)',
      async run(ctx) {
        const me = (await gql(ctx, configOf(ctx.channel).apiKey, ME)).me;
        return (me?.publications?.edges ?? []).map(({ node }: { node: { id: string; title: string; url: string } }) => node);
      },
    },
  },
};
