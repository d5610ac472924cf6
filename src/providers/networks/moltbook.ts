/**
 * Moltbook, the social network for AI agents. A channel is an agent: the person
 * pastes the agent's API key (the agent must be claimed). A post is a text post
 * in a submolt; later items of a thread become comments, each replying to the
 * one before.
 *
 * Always the `www.` host: the bare domain redirects and the redirect drops the
 * Authorization header. Moltbook may answer a post or comment with a
 * verification challenge (lobster arithmetic) that must be answered before the
 * post counts; Herald answers it when it can read it with confidence and fails
 * the post plainly otherwise (a wrong answer counts against the agent). What a
 * post made is kept in the item's progress, so a retry answers the challenge of
 * the post already made instead of posting again.
 */
import { z } from 'zod';
import { currentFigures } from '../adapter-kit/analytics-series.ts';
import type { NetworkAnswer, Verdict } from '../adapter-kit/http-failures.ts';
import { solveChallenge } from './moltbook-challenge.ts';
import type { NetworkRequest } from '../adapter-kit/network-http.ts';
import type { NetworkContext, Provider, PublishChannel, PublishContext, PublishResult } from '../types.ts';
import { PublishError } from '../errors.ts';

const NETWORK = 'Moltbook';
const MAX_TITLE = 100;
const DEFAULT_SUBMOLT = 'general';
/** Progress keys: what the item made on Moltbook, and that its challenge was answered. */
const MADE_KEY = 'made';
const VERIFIED_KEY = 'verified';

const credentials = z.object({
  apiKey: z
    .string()
    .trim()
    .regex(/^[A-Za-z0-9_-]{16,200}$/, 'must be the agent API key Moltbook gave at registration (moltbook_…)')
    .describe("The agent's API key (moltbook_…); the agent must be claimed by its owner"),
});

const settings = z.object({
  submolt: z
    .string()
    .trim()
    .regex(/^[A-Za-z0-9_-]{2,64}$/, 'must be a submolt name such as general')
    .optional()
    .describe('The submolt to post in (general when empty)'),
});

interface Config {
  apiKey: string;
  name: string;
}

interface MoltbookAnswer {
  success?: boolean;
  error?: string;
  hint?: string;
  retry_after_minutes?: number;
  retry_after_seconds?: number;
}

interface Challenge {
  code: string;
  text: string;
}

/**
 * Moltbook answers {success:false, error, hint?}; a rate limit says how long to
 * wait in retry_after_minutes (posts) or retry_after_seconds (comments). A 403 is
 * an agent not claimed or suspended: its owner must act, reconnecting would not help.
 */
function readAnswer({ ok, status, body }: NetworkAnswer): Verdict | undefined {
  const answer = (typeof body === 'object' && body ? body : {}) as MoltbookAnswer;
  if (ok && answer.success !== false) return undefined;
  const detail = answer.error ? `${answer.error}${answer.hint ? ` (${answer.hint})` : ''}` : undefined;
  const wait =
    answer.retry_after_seconds !== undefined
      ? answer.retry_after_seconds * 1000
      : answer.retry_after_minutes !== undefined
        ? answer.retry_after_minutes * 60_000
        : undefined;
  if (status === 429 || wait !== undefined) return { kind: 'retryable', detail, retryAfterMs: wait };
  if (status === 401) return { kind: 'auth', detail };
  if (ok || status === 403) return { kind: 'refused', detail };
  return detail ? { detail } : undefined;
}

function configOf(channel: PublishChannel<Config>): Config {
  return channel.config;
}

async function api<T = any>(ctx: NetworkContext, apiKey: string, path: string, request: NetworkRequest = {}): Promise<T> {
  return ctx.http.json<T>(`${ctx.urls.api}/api/v1${path}`, { ...request, headers: { authorization: `Bearer ${apiKey}`, ...request.headers } });
}

/** The post's title: its first line, cut to Moltbook's 100 characters. */
function titleOf(content: string): string {
  const first = content.trim().split('\n')[0].trim();
  const chars = [...first];
  return chars.length <= MAX_TITLE ? first : `${chars.slice(0, MAX_TITLE - 1).join('')}…`;
}

function submoltOf(ctx: PublishContext<Config>): string {
  return settings.shape.submolt.safeParse(ctx.item.settings.submolt).data ?? DEFAULT_SUBMOLT;
}

function postUrl(postId: string): string {
  return `https://www.moltbook.com/post/${postId}`;
}

/** A comment is known as "<post id>/<comment id>": a later comment needs both. */
function splitRelease(releaseId: string): { postId: string; commentId?: string } {
  const [postId, commentId] = releaseId.split('/');
  return { postId, commentId };
}

/** The challenge an answer carries, where integrators have seen it: at the top or beside the post or comment. */
function challengeOf(answer: Record<string, any>, made: Record<string, any> | undefined): Challenge | undefined {
  for (const place of [answer, made, answer.verification, made?.verification]) {
    if (!place || typeof place !== 'object') continue;
    const text = place.verification_challenge ?? place.challenge ?? place.challenge_text;
    const code = place.verification_code ?? place.code;
    if (typeof text === 'string' && typeof code === 'string') return { text, code };
  }
  return undefined;
}

/** Answers the challenge of what was just made; only a sure answer is sent. */
async function verify(ctx: PublishContext<Config>, config: Config, challenge: Challenge): Promise<void> {
  const answer = solveChallenge(challenge.text);
  if (!answer) {
    throw new PublishError(
      'refused',
      `Moltbook asked for a verification Herald cannot answer with confidence ("${challenge.text.slice(0, 300)}"), ` +
        'so the post stays unpublished. Answer it on Moltbook, or post again later.',
    );
  }
  try {
    await api(ctx, config.apiKey, '/verify', { method: 'POST', json: { verification_code: challenge.code, answer }, repeatable: true });
  } catch (err) {
    if (err instanceof PublishError && err.kind === 'refused')
      throw new PublishError('refused', `Moltbook did not accept the verification answer ${answer}, so the post stays unpublished: ${err.message}`);
    throw err;
  }
  await ctx.progress.set(VERIFIED_KEY, '1');
}

function releaseOf(made: { postId: string; commentId?: string }): PublishResult {
  return made.commentId
    ? { releaseId: `${made.postId}/${made.commentId}`, releaseUrl: postUrl(made.postId) }
    : { releaseId: made.postId, releaseUrl: postUrl(made.postId) };
}

export const moltbook: Provider<Config> = {
  identifier: 'moltbook',
  name: NETWORK,
  auth: 'credentials',
  urls: { api: 'https://www.moltbook.com' },
  readAnswer,
  credentials,
  connectNote:
    'Paste the API key of a Moltbook agent that its owner has claimed. Moltbook lets an agent post once every 30 minutes and comment once every 20 ' +
    'seconds (50 a day); Herald waits as Moltbook asks. Moltbook may ask a verification question before a post counts: Herald answers the arithmetic ' +
    'ones it can read with confidence and otherwise fails the post saying so.',
  settings,
  rules: {
    maxLength: 300,
    maxMedia: 0,
    mediaKinds: [],
    threads: true,
  },
  // 100 requests a minute per agent.
  pacing: { perChannel: { count: 100, windowMs: 60_000 } },

  async connect(input, ctx) {
    const { apiKey } = credentials.parse(input);
    const me = await api<{ agent: { id?: string; name: string; display_name?: string; avatar_url?: string } }>(ctx, apiKey, '/agents/me');
    const status = await api<{ status?: string }>(ctx, apiKey, '/agents/status');
    if (status.status === 'pending_claim')
      throw new PublishError('refused', `the agent ${me.agent.name} is not claimed yet: its owner must open the claim link first`);
    const config: Config = { apiKey, name: me.agent.name };
    return {
      externalId: me.agent.id ?? me.agent.name,
      name: me.agent.display_name || me.agent.name,
      picture: me.agent.avatar_url ?? null,
      profile: me.agent.name,
      config: { ...config },
    };
  },

  async publish(ctx) {
    const config = configOf(ctx.channel);
    const kept = await ctx.progress.get(MADE_KEY);
    if (kept) {
      // An earlier attempt made it: only its verification can be missing.
      const made = JSON.parse(kept) as { postId: string; commentId?: string; challenge?: Challenge };
      if (made.challenge && !(await ctx.progress.get(VERIFIED_KEY))) await verify(ctx, config, made.challenge);
      return releaseOf(made);
    }

    let made: { postId: string; commentId?: string };
    let answer: Record<string, any>;
    if (!ctx.replyTo) {
      answer = await api(ctx, config.apiKey, '/posts', {
        method: 'POST',
        json: { submolt: submoltOf(ctx), title: titleOf(ctx.item.content), content: ctx.item.content },
      });
      made = { postId: String(answer.post?.id) };
    } else {
      const parent = splitRelease(ctx.replyTo.releaseId);
      answer = await api(ctx, config.apiKey, `/posts/${encodeURIComponent(parent.postId)}/comments`, {
        method: 'POST',
        json: { content: ctx.item.content, ...(parent.commentId ? { parent_id: parent.commentId } : {}) },
      });
      made = { postId: parent.postId, commentId: String(answer.comment?.id) };
    }
    if (made.postId === 'undefined' || made.commentId === 'undefined')
      throw new PublishError('unknown', 'Moltbook answered without the post, so the outcome is unknown. Check the agent before retrying.');
    const challenge = challengeOf(answer, answer.post ?? answer.comment);
    await ctx.progress.set(MADE_KEY, JSON.stringify({ ...made, ...(challenge ? { challenge } : {}) }));
    if (challenge) await verify(ctx, config, challenge);
    return releaseOf(made);
  },

  /** The agent's newest posts in the submolt (or the post's newest comments), matched by author and text. */
  async findPublished(ctx) {
    const config = configOf(ctx.channel);
    const content = ctx.item.content;
    if (!ctx.replyTo) {
      const listed = await api<{ posts: { id: string; title?: string; content?: string; author?: { name?: string } }[] }>(ctx, config.apiKey, '/posts', {
        query: { sort: 'new', submolt: submoltOf(ctx), limit: 25 },
      });
      const found = listed.posts.find((p) => p.author?.name === config.name && p.title === titleOf(content) && p.content === content);
      return found ? releaseOf({ postId: found.id }) : null;
    }
    const { postId } = splitRelease(ctx.replyTo.releaseId);
    const listed = await api<{ comments: { id: string; content?: string; author?: { name?: string } }[] }>(
      ctx,
      config.apiKey,
      `/posts/${encodeURIComponent(postId)}/comments`,
      { query: { sort: 'new' } },
    );
    const found = listed.comments.find((c) => c.author?.name === config.name && c.content === content);
    return found ? releaseOf({ postId, commentId: found.id }) : null;
  },

  analytics: {
    /** The agent's karma and followers as they stand. */
    async channel(ctx) {
      const { agent } = await api<{ agent: { karma?: number; follower_count?: number } }>(ctx, configOf(ctx.channel).apiKey, '/agents/me');
      return currentFigures({ Karma: agent.karma, Followers: agent.follower_count });
    },
    /** A post's votes and comments (a comment's figures are its post's). */
    async post(ctx) {
      const { postId } = splitRelease(ctx.releaseId);
      const { post } = await api<{ post: { upvotes?: number; downvotes?: number; comment_count?: number } }>(
        ctx,
        configOf(ctx.channel).apiKey,
        `/posts/${encodeURIComponent(postId)}`,
      );
      return currentFigures({ Upvotes: post.upvotes, Downvotes: post.downvotes, Comments: post.comment_count });
    },
  },
};
