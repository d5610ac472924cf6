/**
 * Renewing channels' access in the background, so that a channel that publishes
 * rarely does not die: Instagram Login and Threads tokens can only be renewed
 * while they are valid, and Pinterest's refresh tokens lapse after 60 unused
 * days. Each channel carries the time of its next renewal (`renew_at`, set by
 * `renewalTime` whenever its tokens are stored); every engine looks for channels
 * due now and then, and takes each one by moving its renewal time ahead
 * (db/lease.ts), so one worker renews it while the others pass. A network that
 * refuses marks the channel for reconnection, with a notification and a
 * `channel.needs_reconnect` event; while the token still works, it keeps
 * publishing until it lapses, and its owner is warned 7 days and 1 day ahead.
 */
import { sql } from 'kysely';
import type { Services } from '../services.ts';
import { claimRows } from '../db/lease.ts';
import type { ChannelRow } from '../db/schema.ts';
import { renewalTime } from '../domain/channels.ts';
import { accessLapse, dueWarning, nextLook, timeLeft } from '../domain/access-expiry.ts';
import { channelEventData } from '../domain/events.ts';
import { findProvider } from '../providers/index.ts';
import { PublishError } from '../providers/errors.ts';
import { Periodic } from './periodic.ts';
import { channelNeedsReconnect, ReconnectNeeded, type TokenKeeper } from './tokens.ts';

/** How often an engine looks for channels to renew. */
const LOOK_EVERY_MS = 10 * 60_000;
/** A channel taken for renewal is left to its worker this long before another may try. */
const CLAIM_MS = 10 * 60_000;
/** A renewal the network could not answer is tried again after this long. */
const AGAIN_AFTER_MS = 60 * 60_000;
/** Channels renewed per look; the rest wait for the next one. */
const BATCH = 20;

export class TokenRenewal extends Periodic {
  constructor(
    private readonly services: Services,
    private readonly tokens: TokenKeeper,
    everyMs = LOOK_EVERY_MS,
  ) {
    super('token renewal', everyMs, (now) => this.renewDue(now));
  }

  private async renewDue(now: number): Promise<number> {
    const due = await this.services.store.db
      .selectFrom('channels')
      .selectAll()
      .where('renew_at', 'is not', null)
      .where('renew_at', '<=', now)
      .where('deleted_at', 'is', null)
      .where('disabled', '=', 0)
      .where('needs_reconnect', '=', 0)
      .orderBy('renew_at')
      .limit(BATCH)
      .execute();
    let renewed = 0;
    for (const row of due) if (await this.renew(row, now)) renewed++;
    return renewed;
  }

  /** Takes the channel (another worker may have), then renews it; true when new tokens were stored. */
  private async renew(row: ChannelRow, now: number): Promise<boolean> {
    const { db, dialect } = this.services.store;
    // Taken as it is reached, as the row was read: a channel stored before renewal times were kept shows its 0 only here.
    const [taken] = await claimRows(db, dialect, {
      table: 'channels',
      as: 'c',
      due: sql`c.id = ${row.id} AND c.renew_at = ${row.renew_at}`,
      limit: 1,
      now,
      hold: { postpone: 'renew_at', ms: CLAIM_MS },
    });
    if (!taken) return false;
    const provider = findProvider(row.provider);
    // Known not to renew: only the warnings and the lapse are left to look after.
    if (row.access_lapses_at !== null) return this.expiring(row, row.access_lapses_at, now);
    if (!provider?.refresh) {
      const lapse = provider ? accessLapse(this.services.channels.publishView(row).config) : undefined;
      if (lapse !== undefined) return this.expiring(row, lapse, now);
      await db.updateTable('channels').set({ renew_at: null }).where('id', '=', row.id).execute();
      return false;
    }
    const channel = this.services.channels.publishView(row);
    if (row.renew_at === 0) {
      // Stored before renewal times were kept: its time is set now, and it is renewed now only if that time has come.
      const when = renewalTime(channel.config, now);
      if (when === null || when > now) {
        await db.updateTable('channels').set({ renew_at: when }).where('id', '=', row.id).execute();
        return false;
      }
    }
    try {
      await this.tokens.refresh(provider, row, channel, now);
      return true;
    } catch (err) {
      if (err instanceof ReconnectNeeded) {
        // Refused, but the token still works: it publishes until it lapses, and its owner is warned ahead.
        const lapse = accessLapse(channel.config);
        if (lapse !== undefined && lapse > now) return this.expiring(row, lapse, now);
        await channelNeedsReconnect(this.services, row, err.message);
        return false;
      }
      const wait = err instanceof PublishError ? Math.max(err.retryAfterMs ?? 0, AGAIN_AFTER_MS) : AGAIN_AFTER_MS;
      await db
        .updateTable('channels')
        .set({ renew_at: now + wait })
        .where('id', '=', row.id)
        .execute();
      return false;
    }
  }

  /**
   * A channel whose access cannot be renewed: its owner is warned when a warning
   * is due (a notification and channel.needs_reconnect with `accessExpiresAt`),
   * and once the token has lapsed the channel needs reconnecting.
   */
  private async expiring(row: ChannelRow, lapsesAt: number, now: number): Promise<false> {
    const { store, events, notifications } = this.services;
    const network = findProvider(row.provider)?.name ?? row.provider;
    const lapsedOn = new Date(lapsesAt).toISOString();
    if (lapsesAt <= now) {
      await channelNeedsReconnect(this.services, row, `its access to ${network} ended on ${lapsedOn}, and ${network} does not let Herald renew it`);
      return false;
    }
    const ahead = dueWarning(lapsesAt, now, row.expiry_warned);
    await store.db.transaction().execute(async (tx) => {
      await tx
        .updateTable('channels')
        .set({ access_lapses_at: lapsesAt, renew_at: nextLook(lapsesAt, now), ...(ahead !== undefined ? { expiry_warned: ahead } : {}) })
        .where('id', '=', row.id)
        .execute();
      if (ahead === undefined) return;
      const reason = `its access to ${network} ends ${timeLeft(lapsesAt, now)} (${lapsedOn}), and ${network} does not let Herald renew it: connect it again before then`;
      const data = { ...channelEventData(row, reason), accessExpiresAt: lapsedOn };
      await events.record(tx, row.account_id, [{ type: 'channel.needs_reconnect', data }]);
      await notifications.add(row.account_id, `Channel "${row.name}": ${reason}.`, '/api/public/v1/integrations', tx);
    });
    if (ahead !== undefined) events.announce();
    return false;
  }
}
