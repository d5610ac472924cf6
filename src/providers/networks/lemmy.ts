/**
 * Lemmy (any instance), through API v3: the stable 0.19 line speaks it, and
 * Lemmy 1.0 keeps it for login, search, posts and comments. The user gives the
 * instance, a username or email and the password; Herald logs in for a JWT and
 * logs in again with the stored password when the instance says `not_logged_in`.
 *
 * A post goes to each community of the settings (community ids are local to
 * the instance), with its own title and optional link. Thread items become
 * comments under each post, each under the previous item's comment. Lemmy
 * answers most failures with HTTP 400 and a snake_case `error`, so failures are
 * told apart by that string. Each community's post is remembered per item, so a
 * retry after one community failed does not post to the others again.
 */
import { z } from 'zod';
import { postSettings } from '../adapter-kit/post-settings.ts';
import { OutboundRefused } from '../../lib/outbound.ts';
import { currentFigures } from '../adapter-kit/analytics-series.ts';
import type { NetworkAnswer, Verdict } from '../adapter-kit/http-failures.ts';
import { mediaBlob, mediaFilename } from '../adapter-kit/media-bytes.ts';
import type { NetworkRequest } from '../adapter-kit/network-http.ts';
import type { MediaRef, NetworkContext, Provider, PublishChannel, PublishContext, TokenConfig } from '../types.ts';
import { PublishError, NetworkRefusal } from '../errors.ts';

const NETWORK = 'Lemmy';
const MAX_POST_BODY = 50_000;
const MAX_COMMENT = 10_000;
/** The admin sets the real cap; this is Lemmy's default. */
const MAX_IMAGE_BYTES = 50 * 1024 * 1024;
const IMAGE_TYPES = ['image/jpeg', 'image/png', 'image/gif', 'image/webp'];

const target = z.object({
  subreddit: z.string().trim().min(2).describe('The community name (name or name@instance)'),
  id: z
    .union([z.number().int().positive(), z.string().regex(/^\d+$/, 'must be the community id on your instance')])
    .optional()
    .describe('The community id on your instance (the communities tool gives it); looked up by name when absent'),
  title: z
    .string()
    .trim()
    .min(3, 'Lemmy titles have at least 3 characters')
    .max(200, 'Lemmy titles have at most 200 characters')
    .regex(/^[^\r\n]*$/, 'a Lemmy title is one line'),
  url: z
    .string()
    .trim()
    .max(2000)
    .regex(/^(https?:\/\/|magnet:)/i, 'must be an http(s) or magnet link')
    .optional()
    .describe('Makes it a link post'),
});

const settings = z.object({
  subreddit: z
    .array(z.object({ value: target }))
    .min(1, 'needs at least one community')
    .max(10)
    .describe('Communities to post to, each with the post title and an optional link'),
});

type Target = z.infer<typeof target>;

const credentials = z.object({
  service: z
    .url({ protocol: /^https?$/, error: 'must be an http(s) URL' })
    .optional()
    .describe('Your Lemmy instance, e.g. https://lemmy.world'),
  identifier: z.string().trim().min(1, 'is required: your username or email on the instance').max(255).describe('Username or email'),
  password: z.string().min(1, 'is required').max(60).describe('Password (accounts with two-factor login cannot be used by a scheduler)'),
});

interface Config extends TokenConfig {
  service: string;
  identifier: string;
  /** Kept sealed: Lemmy has no refresh, so a logged-out session is renewed by logging in again. */
  password: string;
  personId: number;
  username: string;
}

/** Lemmy's `error` strings; 0.19 answers them with 400 (401 only for incorrect_login). */
const AUTH = new Set(['not_logged_in', 'incorrect_login']);
const RATE_LIMITED = new Set(['rate_limit_error', 'too_many_requests']);

function readAnswer({ ok, body }: NetworkAnswer): Verdict | undefined {
  if (ok || typeof body?.error !== 'string') return undefined;
  const code: string = body.error;
  const detail = typeof body.message === 'string' && body.message ? `${code}: ${body.message}` : code;
  if (AUTH.has(code)) return { kind: 'auth', detail, code };
  // Lemmy says no wait; the engine's backoff spaces the retries.
  if (RATE_LIMITED.has(code)) return { kind: 'retryable', detail, code };
  return { kind: 'refused', detail, code };
}

function configOf(channel: PublishChannel<Config>): Config {
  return channel.config;
}

function api<T = any>(ctx: NetworkContext, config: Pick<Config, 'service' | 'accessToken'>, path: string, request: NetworkRequest = {}): Promise<T> {
  const headers = { ...(config.accessToken ? { authorization: `Bearer ${config.accessToken}` } : {}), ...request.headers };
  return ctx.http.json<T>(`${config.service}${path}`, { ...request, headers });
}

async function login(ctx: NetworkContext, service: string, identifier: string, password: string): Promise<string> {
  const answer = await api<{ jwt?: string }>(ctx, { service }, '/api/v3/user/login', {
    method: 'POST',
    json: { username_or_email: identifier, password },
    // Logging in publishes nothing.
    repeatable: true,
  });
  if (!answer?.jwt) throw new PublishError('auth', `${NETWORK} did not log in (no token; the account may await email verification or approval)`);
  return answer.jwt;
}

const postUrl = (config: Config, id: number | string) => `${config.service}/post/${id}`;
const commentUrl = (config: Config, id: number | string) => `${config.service}/comment/${id}`;

/** The picture on the instance's pict-rs, uploaded once per item (uploads are limited to a few an hour). */
async function uploadImage(ctx: PublishContext<Config>, config: Config, media: MediaRef): Promise<string> {
  const key = `lemmy-image:${media.id}`;
  const kept = await ctx.progress.get(key);
  if (kept) return kept;
  const form = new FormData();
  form.append('images[]', await mediaBlob(media, MAX_IMAGE_BYTES, NETWORK), mediaFilename(media));
  const answer = await ctx.http.json<{ msg?: string; files?: { file: string }[] }>(`${config.service}/pictrs/image`, {
    method: 'POST',
    headers: { authorization: `Bearer ${config.accessToken}` },
    body: form,
    timeoutMs: 300_000,
    // A picture no post uses yet publishes nothing.
    repeatable: true,
  });
  const file = answer?.files?.[0]?.file;
  if (!file) throw new PublishError('refused', `${NETWORK} did not store the picture (${answer?.msg ?? 'no file in its answer'})`);
  const url = `${config.service}/pictrs/image/${file}`;
  await ctx.progress.set(key, url);
  return url;
}

function withPicture(text: string, picture: string | undefined): string {
  return picture ? [text, `![](${picture})`].filter((p) => p !== '').join('\n\n') : text;
}

async function communityId(ctx: NetworkContext, config: Config, t: Target): Promise<number> {
  if (t.id !== undefined) return Number(t.id);
  const found = await api<{ community_view: { community: { id: number } } }>(ctx, config, '/api/v3/community', { query: { name: t.subreddit } });
  return found.community_view.community.id;
}

interface PostView {
  post: { id: number; name: string; ap_id?: string; published?: string; creator_id?: number; body?: string };
  counts?: { score?: number; upvotes?: number; downvotes?: number; comments?: number };
}

/** Newest posts of a community, to find one whose answer was lost. */
async function findInCommunity(ctx: NetworkContext, config: Config, community: number, title: string, since: number): Promise<number | undefined> {
  const listed = await api<{ posts: PostView[] }>(ctx, config, '/api/v3/post/list', { query: { community_id: community, sort: 'New', limit: 20 } });
  return listed.posts.find(
    (p) => p.post.name === title && (p.post.creator_id === undefined || p.post.creator_id === config.personId) && Date.parse(p.post.published ?? '') >= since,
  )?.post.id;
}

/** What the item made per community, kept across attempts. */
const madeKey = (community: number) => `lemmy-post:${community}`;

/** Thread items: a comment under each post; under the previous item's comment when it was one ("post/comment"). */
async function comment(ctx: PublishContext<Config>, config: Config, picture: string | undefined) {
  const made: string[] = [];
  for (const parent of ctx.replyTo!.releaseId.split(',')) {
    const [postId, parentId] = parent.split('/').map(Number);
    if (!Number.isSafeInteger(postId)) throw new PublishError('refused', `cannot comment on "${parent}": not a Lemmy post id`);
    const key = `lemmy-comment:${parent}`;
    const kept = await ctx.progress.get(key);
    if (kept) {
      made.push(kept);
      continue;
    }
    const answer = await api<{ comment_view: { comment: { id: number } } }>(ctx, config, '/api/v3/comment', {
      method: 'POST',
      json: { content: withPicture(ctx.item.content, picture), post_id: postId, ...(parentId ? { parent_id: parentId } : {}) },
    });
    const id = `${postId}/${answer.comment_view.comment.id}`;
    await ctx.progress.set(key, id);
    made.push(id);
  }
  return { releaseId: made.join(','), releaseUrl: commentUrl(config, made[0].split('/')[1]) };
}

export const lemmy: Provider<Config> = {
  identifier: 'lemmy',
  name: NETWORK,
  auth: 'credentials',
  urls: { instance: 'https://lemmy.world' },
  readAnswer,
  credentials,
  settings,
  rules: {
    // A post's body; a comment takes at most 10,000 (checked below). Lemmy counts UTF-16 code units.
    maxLength: MAX_POST_BODY,
    counting: 'utf16',
    // One picture a post (its url); uploads of video are off by default on instances.
    maxMedia: 1,
    mediaKinds: ['image'],
    threads: true,
    media: { imageTypes: IMAGE_TYPES, maxImageBytes: MAX_IMAGE_BYTES },
    check: ({ content, threadIndex }) =>
      threadIndex > 0 && content.length > MAX_COMMENT
        ? [{ field: 'content', message: `is ${content.length} characters; a Lemmy comment takes at most ${MAX_COMMENT}` }]
        : [],
  },
  // Lemmy limits posts per client IP (6 per 10 minutes by default): few at once from this server.
  pacing: { concurrent: 2 },

  async connect(input, ctx) {
    const given = credentials.parse(input);
    const service = (given.service ?? ctx.urls.instance).replace(/\/+$/, '');
    try {
      await ctx.outbound.checkReachable(service);
    } catch (err) {
      if (err instanceof OutboundRefused) throw new NetworkRefusal('credentials.service', err.reason, 'address');
      throw err;
    }
    let jwt: string;
    try {
      jwt = await login(ctx, service, given.identifier, given.password);
    } catch (err) {
      if (err instanceof PublishError && err.code === 'incorrect_login')
        throw new NetworkRefusal('credentials.password', `${NETWORK} refused the login: ${err.message}`);
      if (err instanceof PublishError && err.code === 'missing_totp_token')
        throw new NetworkRefusal(
          'credentials.identifier',
          'this account logs in with a second factor (2FA), which a scheduler cannot give; use an account without it',
        );
      throw err;
    }
    const site = await api(ctx, { service, accessToken: jwt }, '/api/v3/site');
    const person = site?.my_user?.local_user_view?.person;
    if (!person) throw new PublishError('auth', `${NETWORK} logged in but does not show the account`);
    const config: Config = { service, identifier: given.identifier, password: given.password, accessToken: jwt, personId: person.id, username: person.name };
    return {
      externalId: person.actor_id ?? `${service}/u/${person.name}`,
      name: person.display_name || person.name,
      picture: person.avatar ?? null,
      profile: `${person.name}@${new URL(service).host}`,
      config: { ...config },
    };
  },

  /** Lemmy has no refresh: a session the instance no longer knows is replaced by logging in again. */
  async refresh(ctx) {
    const config = configOf(ctx.channel);
    return { accessToken: await login(ctx, config.service, config.identifier, config.password) };
  },

  async publish(ctx) {
    const config = configOf(ctx.channel);
    const [media] = ctx.item.media;
    const picture = media ? await uploadImage(ctx, config, media) : undefined;
    if (ctx.replyTo) return comment(ctx, config, picture);

    const targets = postSettings(settings, ctx.item, NETWORK).subreddit.map((s) => s.value);
    const made: number[] = [];
    for (const t of targets) {
      const community = await communityId(ctx, config, t);
      const kept = await ctx.progress.get(madeKey(community));
      if (kept) {
        made.push(Number(kept));
        continue;
      }
      // A link post keeps its link; the picture then goes into the body.
      const link = t.url ?? picture;
      const body = t.url ? withPicture(ctx.item.content, picture) : ctx.item.content;
      const created = await api<{ post_view: PostView }>(ctx, config, '/api/v3/post', {
        method: 'POST',
        json: {
          name: t.title,
          community_id: community,
          ...(body ? { body } : {}),
          ...(link ? { url: link } : {}),
          ...(media?.alt ? { alt_text: media.alt } : {}),
        },
      });
      await ctx.progress.set(madeKey(community), String(created.post_view.post.id));
      made.push(created.post_view.post.id);
    }
    return { releaseId: made.join(','), releaseUrl: postUrl(config, made[0]) };
  },

  /** Each community's newest posts, for a post of this account with the item's title. */
  async findPublished(ctx) {
    if (ctx.replyTo) return null;
    const config = configOf(ctx.channel);
    const since = ctx.item.publishAt.getTime() - 60_000;
    const made: number[] = [];
    for (const t of postSettings(settings, ctx.item, NETWORK).subreddit.map((s) => s.value)) {
      const community = await communityId(ctx, config, t);
      const kept = await ctx.progress.get(madeKey(community));
      const id = kept ? Number(kept) : await findInCommunity(ctx, config, community, t.title, since);
      if (id === undefined) return null;
      made.push(id);
    }
    return { releaseId: made.join(','), releaseUrl: postUrl(config, made[0]) };
  },

  async recentPosts(ctx) {
    const config = configOf(ctx.channel);
    const answer = await api<{ posts: PostView[] }>(ctx, config, '/api/v3/user', { query: { username: config.username, sort: 'New', limit: 20 } });
    return (answer.posts ?? []).map((p) => ({
      id: String(p.post.id),
      url: postUrl(config, p.post.id),
      text: p.post.name,
      at: Date.parse(p.post.published ?? '') || undefined,
    }));
  },

  analytics: {
    /** The account's counts as they stand (Lemmy keeps no history). */
    async channel(ctx) {
      const config = configOf(ctx.channel);
      const answer = await api(ctx, config, '/api/v3/user', { query: { username: config.username, limit: 1 } });
      const counts = answer?.person_view?.counts ?? {};
      return currentFigures({ Posts: counts.post_count, Comments: counts.comment_count });
    },
    /** The first community's post: its score, votes and comments. */
    async post(ctx) {
      const config = configOf(ctx.channel);
      const id = ctx.releaseId.split(',')[0];
      if (id.includes('/')) throw new PublishError('refused', 'Lemmy reports figures for posts, not comments');
      const answer = await api<{ post_view: PostView }>(ctx, config, '/api/v3/post', { query: { id } });
      const counts = answer.post_view.counts ?? {};
      return currentFigures({ Score: counts.score, Upvotes: counts.upvotes, Downvotes: counts.downvotes, Comments: counts.comments });
    },
  },

  tools: {
    communities: {
      description: 'Search communities on your instance: data {word} → [{id, name, title, actorId}] (ids are your instance’s own)',
      async run(ctx) {
        const word = String((ctx.data as { word?: unknown })?.word ?? '').trim();
        if (!word) throw new PublishError('refused', 'data.word is required: the text to search communities for');
        const config = configOf(ctx.channel);
        const answer = await api(ctx, config, '/api/v3/search', { query: { q: word, type_: 'Communities', sort: 'Active', limit: 20 } });
        return (answer?.communities ?? []).map(({ community: c }: any) => ({ id: c.id, name: c.name, title: c.title, actorId: c.actor_id }));
      },
    },
  },
};
