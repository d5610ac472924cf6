/**
 * Checking channels' tokens where a network's policy asks for it (Twitch wants
 * apps that keep sessions to validate tokens on start and every hour). Each
 * engine checks the channels of such networks once after it starts and then
 * every `tokenCheck.everyMs`; when the network no longer takes a token, access
 * is renewed, and a channel that cannot be renewed is marked for reconnection
 * (a notification and a `channel.needs_reconnect` event), as when publishing.
 */
import type { Services } from '../services.ts';
import type { ChannelRow } from '../db/schema.ts';
import { allProviders } from '../providers/index.ts';
import type { Provider } from '../providers/types.ts';
import { PublishError } from '../providers/errors.ts';
import { errorFields, log } from '../lib/log.ts';
import { Periodic } from './periodic.ts';
import { channelNeedsReconnect, ReconnectNeeded, type TokenKeeper } from './tokens.ts';

/** How often an engine looks for channels whose check is due. */
const LOOK_EVERY_MS = 5 * 60_000;
const CHECK_TIMEOUT_MS = 30_000;

export class TokenChecks extends Periodic {
  /** When this process last checked each channel: a start counts as never, as the policies want. */
  private readonly checkedAt = new Map<string, number>();

  constructor(
    private readonly services: Services,
    private readonly tokens: TokenKeeper,
    everyMs = LOOK_EVERY_MS,
  ) {
    super('token checks', everyMs, (now) => this.checkDue(now));
  }

  private async checkDue(now: number): Promise<number> {
    const checked = allProviders().filter((p) => p.tokenCheck);
    if (checked.length === 0) return 0;
    const rows = await this.services.store.db
      .selectFrom('channels')
      .selectAll()
      .where(
        'provider',
        'in',
        checked.map((p) => p.identifier),
      )
      .where('deleted_at', 'is', null)
      .where('disabled', '=', 0)
      .where('needs_reconnect', '=', 0)
      .execute();
    let done = 0;
    for (const row of rows) {
      const provider = checked.find((p) => p.identifier === row.provider)!;
      const last = this.checkedAt.get(row.id);
      if (last !== undefined && now - last < provider.tokenCheck!.everyMs) continue;
      if (await this.check(provider, row)) {
        this.checkedAt.set(row.id, now);
        done++;
      }
    }
    return done;
  }

  /** Checks one channel's token, renewing it when refused; true once the channel's state is known. */
  private async check(provider: Provider, row: ChannelRow): Promise<boolean> {
    const ask = async (channel: Awaited<ReturnType<TokenKeeper['fresh']>>) =>
      provider.tokenCheck!.check({ ...this.services.network(provider, AbortSignal.timeout(CHECK_TIMEOUT_MS)), channel });
    try {
      const channel = await this.tokens.fresh(provider, row);
      try {
        await ask(channel);
      } catch (err) {
        if (!(err instanceof PublishError) || err.kind !== 'auth') throw err;
        await ask(await this.tokens.refresh(provider, row, channel));
      }
      return true;
    } catch (err) {
      if (err instanceof ReconnectNeeded || (err instanceof PublishError && err.kind === 'auth')) {
        await channelNeedsReconnect(this.services, row, err.message);
        return true;
      }
      // The network did not answer: checked again at the next look.
      log.warn({ channel: row.id, provider: provider.identifier, ...errorFields(err) }, 'token check failed');
      return false;
    }
  }
}
