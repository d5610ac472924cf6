/**
 * Reading from a network on a person's behalf rather than publishing: a
 * channel's analytics, one post's figures, the channel's recent posts. Answers
 * are kept for a while in the store (`network_reads`), so a dashboard that asks
 * again, from any server, does not spend the network's quota. Networks without
 * the figures, posts not yet out and network failures are clear 4xx answers.
 */
import crypto from 'node:crypto';
import type { Kysely } from 'kysely';
import type { ChannelRow, Database } from '../db/schema.ts';
import type { AnalyticsSeries, NetworkContext, Provider, PublishChannel, RecentPost } from '../providers/types.ts';
import { PublishError } from '../providers/errors.ts';
import type { Channels } from './channels.ts';
import { ApiError } from './errors.ts';
import type { Posts } from './posts/posts.ts';

/** How long an answer is kept: figures move slowly, and quotas are per day or per hour. */
export const READ_KEPT_MS = 30 * 60_000;
/** Recent posts are kept less long: a person matching a post they just published by hand looks again soon. */
const RECENT_KEPT_MS = 60_000;
const READ_TIMEOUT_MS = 30_000;

export interface TokenSource {
  /** The channel with a token that is not about to expire. */
  fresh(provider: Provider, row: ChannelRow): Promise<PublishChannel>;
  /** New tokens after the network refused the ones used. */
  refresh(provider: Provider, row: ChannelRow, used: PublishChannel): Promise<PublishChannel>;
}

export class NetworkReads {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly channels: Channels,
    private readonly posts: Posts,
    private readonly network: (provider: Provider, signal?: AbortSignal) => NetworkContext,
    private readonly tokens: () => TokenSource,
  ) {}

  /** GET /analytics/{channel}?date=days */
  async channelAnalytics(accountId: string, channelId: string, days: number): Promise<AnalyticsSeries[]> {
    const row = await this.channels.row(accountId, channelId);
    const provider = this.channels.provider(row);
    const read = provider.analytics?.channel;
    if (!read) throw noFigures(provider, 'for a channel');
    return this.kept(row, ['channel', days], READ_KEPT_MS, (ctx, channel) => read({ ...ctx, channel, days }));
  }

  /** GET /analytics/post/{post}?date=days: the figures of the post's first item on its network. */
  async postAnalytics(accountId: string, postId: string, days: number): Promise<AnalyticsSeries[]> {
    const post = await this.posts.root(accountId, postId);
    const row = await this.channels.row(accountId, post.channel_id);
    const provider = this.channels.provider(row);
    const read = provider.analytics?.post;
    if (!read) throw noFigures(provider, 'for a post');
    const releaseId = post.release_id;
    if (post.state !== 'PUBLISHED' || !releaseId) {
      throw new ApiError('post_not_published', `The post is ${post.state.toLowerCase()}, so ${provider.name} has no figures for it yet`);
    }
    return this.kept(row, ['post', releaseId, days], READ_KEPT_MS, (ctx, channel) => read({ ...ctx, channel, releaseId, days }));
  }

  /** GET /posts/{id}/missing: the channel's recent posts, for networks that list them ([] for others). */
  async recentPosts(accountId: string, postId: string): Promise<RecentPost[]> {
    const post = await this.posts.root(accountId, postId);
    const row = await this.channels.row(accountId, post.channel_id);
    const list = this.channels.provider(row).recentPosts;
    if (!list) return [];
    return this.kept(row, ['recent'], RECENT_KEPT_MS, (ctx, channel) => list({ ...ctx, channel }));
  }

  async prune(now = Date.now()): Promise<void> {
    await this.db
      .deleteFrom('network_reads')
      .where('read_at', '<', now - READ_KEPT_MS)
      .execute();
  }

  /** The kept answer for (channel, what) when it is young enough, else a new read, kept. */
  private async kept<T>(row: ChannelRow, what: unknown[], keptMs: number, read: (ctx: NetworkContext, channel: PublishChannel) => Promise<T>): Promise<T> {
    const key = crypto
      .createHash('sha256')
      .update(JSON.stringify([row.id, ...what]))
      .digest('base64url');
    const now = Date.now();
    const stored = await this.db.selectFrom('network_reads').select(['value', 'read_at']).where('key', '=', key).executeTakeFirst();
    if (stored && now - stored.read_at < keptMs) return JSON.parse(stored.value) as T;
    const value = await this.read(row, read);
    await this.db
      .insertInto('network_reads')
      .values({ key, channel_id: row.id, value: JSON.stringify(value), read_at: now })
      .onConflict((oc) => oc.column('key').doUpdateSet({ value: JSON.stringify(value), read_at: now }))
      .execute();
    return value;
  }

  /** Reads with a fresh token, once more with a refreshed one after a 401; network failures become 4xx/502 answers. */
  private async read<T>(row: ChannelRow, read: (ctx: NetworkContext, channel: PublishChannel) => Promise<T>): Promise<T> {
    const provider = this.channels.provider(row);
    if (row.needs_reconnect) throw reconnect(provider, row, row.reconnect_reason ?? undefined);
    const tokens = this.tokens();
    try {
      let channel = await tokens.fresh(provider, row);
      for (let refreshed = false; ; refreshed = true) {
        try {
          return await read(this.network(provider, AbortSignal.timeout(READ_TIMEOUT_MS)), channel);
        } catch (err) {
          if (!(err instanceof PublishError) || err.kind !== 'auth' || refreshed || !provider.refresh) throw err;
          channel = await tokens.refresh(provider, row, channel);
        }
      }
    } catch (err) {
      if (err instanceof ApiError) throw err;
      if (err instanceof PublishError) {
        if (err.kind === 'auth') throw reconnect(provider, row, err.message);
        if (err.kind === 'refused') throw new ApiError('network_refused', err.message);
        throw new ApiError('network_unavailable', `${err.message}. Try again later.`);
      }
      // Renewing access was refused (ReconnectNeeded) or failed for now.
      throw new ApiError('network_unavailable', `${provider.name} could not be read: ${(err as Error).message}`);
    }
  }
}

function noFigures(provider: Provider, what: string): ApiError {
  return new ApiError('analytics_unavailable', `${provider.name} does not report analytics ${what} through its API, so Herald has no figures`);
}

function reconnect(provider: Provider, row: ChannelRow, detail?: string): ApiError {
  return new ApiError('reconnect_needed', `Channel "${row.name}" must be reconnected before ${provider.name} can be read${detail ? ` (${detail})` : ''}`);
}
