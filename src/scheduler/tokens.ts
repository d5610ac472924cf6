/**
 * Keeping a channel's access token good: refreshed ahead of expiry and once after
 * a 401. Only one process refreshes a channel at a time (networks that rotate
 * refresh tokens would otherwise see the second refresh as a stolen token); the
 * others wait and use what it stored.
 */
import type { Services } from '../services.ts';
import type { ChannelRow } from '../db/schema.ts';
import { channelEventData } from '../domain/events.ts';
import { accessLapse } from '../domain/access-expiry.ts';
import type { Provider, PublishChannel, TokenConfig } from '../providers/types.ts';
import { PublishError } from '../providers/errors.ts';
import type { Pacing } from './pacing.ts';

/** Refresh when the token has less than this left. */
export const REFRESH_MARGIN_MS = 5 * 60_000;
const LOCK_MS = 60_000;
const LOCK_WAIT_MS = 15_000;
const LOCK_POLL_MS = 100;

/** The network refused the refresh: only the user can fix this, by connecting again. */
export class ReconnectNeeded extends Error {}

/** Why a post cannot go out on a channel that must be reconnected. */
export function reconnectReason(channel: Pick<ChannelRow, 'name' | 'reconnect_reason'>): string {
  const name = `Channel "${channel.name}" must be reconnected`;
  return channel.reconnect_reason ? `${name}: ${channel.reconnect_reason}` : `${name} before it can publish.`;
}

/**
 * The network no longer accepts the channel's tokens: the channel waits for its
 * owner to connect it again, who is told (a notification and channel.needs_reconnect).
 * Returns the reason its posts fail with.
 */
export async function channelNeedsReconnect(services: Services, channel: ChannelRow, detail: string): Promise<string> {
  const reason = reconnectReason({ name: channel.name, reconnect_reason: detail });
  await services.store.db.transaction().execute(async (tx) => {
    await services.channels.markNeedsReconnect(channel.id, detail, tx);
    await services.events.record(tx, channel.account_id, [{ type: 'channel.needs_reconnect', data: channelEventData(channel, detail) }]);
  });
  services.events.announce();
  await services.notifications.add(channel.account_id, reason, '/api/public/v1/integrations');
  return reason;
}

export class TokenKeeper {
  constructor(
    private readonly services: Services,
    private readonly pacing: Pacing,
    private readonly holder: string,
  ) {}

  /** The channel as the adapter sees it, with a token that is not about to expire. */
  async fresh(provider: Provider, row: ChannelRow): Promise<PublishChannel> {
    const channel = this.services.channels.publishView(row);
    const { expiresAt } = channel.config as TokenConfig;
    if (!provider.refresh || !expiresAt || expiresAt - Date.now() > REFRESH_MARGIN_MS) return channel;
    try {
      return await this.refresh(provider, row, channel);
    } catch (err) {
      // A token that cannot be renewed still publishes until it lapses.
      if (err instanceof ReconnectNeeded && (accessLapse(channel.config) ?? 0) > Date.now()) return channel;
      throw err;
    }
  }

  /** New tokens for the channel (after a 401, or ahead of expiry), as of `now`. */
  async refresh(provider: Provider, row: ChannelRow, used: PublishChannel, now = Date.now()): Promise<PublishChannel> {
    if (!provider.refresh) throw new ReconnectNeeded(`${provider.name} does not let Herald renew access`);
    const release = await this.lock(row.id);
    try {
      // Another process may have refreshed while we waited for the lock.
      const current = this.services.channels.publishView(await this.reread(row));
      const token = (current.config as TokenConfig).accessToken;
      if (token && token !== (used.config as TokenConfig).accessToken) return current;
      let fresh;
      try {
        fresh = await provider.refresh({ ...this.services.network(provider, AbortSignal.timeout(30_000)), channel: current });
      } catch (err) {
        const retrying = err instanceof PublishError && (err.kind === 'retryable' || err.kind === 'unknown');
        this.services.metrics.refresh(provider.identifier, retrying ? 'retrying' : 'reconnect');
        if (retrying) {
          throw new PublishError('retryable', `Renewing access to ${provider.name} failed for now: ${err.message}`, err.retryAfterMs);
        }
        throw new ReconnectNeeded(`${provider.name} refused to renew access (${(err as Error).message})`);
      }
      this.services.metrics.refresh(provider.identifier, 'renewed');
      const config = await this.services.channels.saveTokens(row.id, current.config, fresh, now);
      return { ...current, config };
    } finally {
      await release();
    }
  }

  private async reread(row: ChannelRow): Promise<ChannelRow> {
    return (await this.services.store.db.selectFrom('channels').selectAll().where('id', '=', row.id).executeTakeFirst()) ?? row;
  }

  private async lock(channelId: string): Promise<() => Promise<void>> {
    const deadline = Date.now() + LOCK_WAIT_MS;
    for (;;) {
      const release = await this.pacing.slot(`refresh:${channelId}`, 1, this.holder, LOCK_MS);
      if (release) return release;
      if (Date.now() > deadline) throw new PublishError('retryable', 'Another worker is renewing this channel’s access; trying again shortly');
      await new Promise((r) => setTimeout(r, LOCK_POLL_MS));
    }
  }
}
