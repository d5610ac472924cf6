/**
 * The one door through which the rest of Herald announces what happened to an
 * account's posts and channels. An event is part of the change it describes: it
 * is recorded (as deliveries to the account's webhooks, see webhooks.ts) in the
 * same transaction, so a change is never stored without its event nor an event
 * without its change, whenever a process dies. The dispatcher sends them. The
 * mails that follow some events are queued in that transaction too.
 */
import type { Kysely } from 'kysely';
import type { ChannelRow, Database, PostRow } from '../db/schema.ts';
import { iso } from '../lib/time.ts';
import type { WebhookEvent } from '../contract/webhooks.ts';
import type { Webhooks } from './webhooks.ts';

export type { WebhookEvent } from '../contract/webhooks.ts';

export interface AccountEvent {
  type: WebhookEvent;
  data: Record<string, unknown>;
}

/** What else follows an event, in its transaction (the mails of mail/mail.ts). */
export type EventFollower = (tx: Kysely<Database>, accountId: string, events: AccountEvent[]) => Promise<void>;

export class Events {
  constructor(
    private readonly webhooks: Webhooks,
    private readonly follow: EventFollower = async () => {},
  ) {}

  /** Records events inside the caller's transaction `tx`; call `announce` once it has committed. */
  async record(tx: Kysely<Database>, accountId: string, events: AccountEvent[]): Promise<void> {
    await this.webhooks.record(accountId, events, Date.now(), tx);
    await this.follow(tx, accountId, events);
  }

  /** After a commit that recorded events: the dispatcher of this process looks at once (others within their poll). */
  announce(): void {
    this.webhooks.wake(Date.now());
  }
}

/**
 * The `data.post` every post event carries, so post.created, post.published and
 * the others describe a post the same way.
 */
export function postEventData(
  post: Pick<PostRow, 'id' | 'group_id' | 'state' | 'publish_at' | 'content'> & Partial<Pick<PostRow, 'release_id' | 'release_url' | 'error' | 'approval'>>,
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
      approval: post.approval ?? null,
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
