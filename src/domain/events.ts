/**
 * The one door through which the rest of Herald announces what happened to an
 * account's posts and channels. Each event is recorded as deliveries to the
 * account's webhooks (see webhooks.ts); the dispatcher sends them.
 */
import type { ChannelRow, PostRow } from '../db/schema.ts';
import { iso } from '../lib/time.ts';
import type { WebhookEvent, Webhooks } from './webhooks.ts';

export type { WebhookEvent } from './webhooks.ts';

export interface EventEmitter {
  emit(accountId: string, type: WebhookEvent, data: Record<string, unknown>): Promise<void>;
  /** Several events of one account at once (one lookup of its webhooks). */
  emitMany(accountId: string, events: { type: WebhookEvent; data: Record<string, unknown> }[]): Promise<void>;
}

export class Events implements EventEmitter {
  constructor(private readonly webhooks: Webhooks) {}

  /**
   * Records the event for every subscribed endpoint. Never throws: the change it
   * reports has already happened, so a failure here is logged rather than
   * turned into an error for that change.
   */
  async emit(accountId: string, type: WebhookEvent, data: Record<string, unknown>): Promise<void> {
    return this.emitMany(accountId, [{ type, data }]);
  }

  async emitMany(accountId: string, events: { type: WebhookEvent; data: Record<string, unknown> }[]): Promise<void> {
    try {
      await this.webhooks.record(accountId, events);
    } catch (err) {
      const types = [...new Set(events.map((e) => e.type))].join(', ');
      console.error(`events: could not record ${types} for account ${accountId}:`, (err as Error).message);
    }
  }
}

/**
 * The `data.post` every post event carries, so post.created, post.published and
 * the others describe a post the same way.
 */
export function postEventData(
  post: Pick<PostRow, 'id' | 'group_id' | 'state' | 'publish_at' | 'content'> & Partial<Pick<PostRow, 'release_id' | 'release_url' | 'error'>>,
  channel: Pick<ChannelRow, 'id' | 'provider' | 'name'>,
): Record<string, unknown> {
  return {
    post: {
      id: post.id,
      group: post.group_id,
      state: post.state,
      publishDate: iso(post.publish_at),
      content: post.content,
      releaseId: post.release_id ?? null,
      releaseURL: post.release_url ?? null,
      error: post.error ?? null,
      integration: { id: channel.id, providerIdentifier: channel.provider, name: channel.name },
    },
  };
}

/** The `data.channel` of channel events (channel.needs_reconnect). */
export function channelEventData(channel: Pick<ChannelRow, 'id' | 'provider' | 'name' | 'profile'>, reason?: string): Record<string, unknown> {
  return {
    channel: { id: channel.id, providerIdentifier: channel.provider, name: channel.name, profile: channel.profile },
    ...(reason ? { reason } : {}),
  };
}
