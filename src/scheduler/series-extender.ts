/**
 * Creating the occurrences of repeating posts ahead of time. Every engine looks
 * now and then (and at once when a series changes: in this process directly, in
 * others through a PostgreSQL NOTIFY) for series due a look, and takes them with
 * a lease in one statement, as claim.ts takes posts (db/lease.ts; FOR UPDATE SKIP
 * LOCKED on PostgreSQL), so one worker extends a series while the others pass.
 * The occurrence's primary key refuses a second creation even if two workers
 * ever held one series (domain/series.ts).
 */
import { sql } from 'kysely';
import type { Services } from '../services.ts';
import type { Store } from '../db/index.ts';
import { claimRows, releaseLease } from '../db/lease.ts';
import type { PostSeriesRow } from '../db/schema.ts';
import { listenTo, type Listener } from '../db/pg-listen.ts';
import { SERIES_CHANNEL, SERIES_LEASE_MS } from '../domain/series/series.ts';
import { errorFields, log } from '../lib/log.ts';
import { Periodic } from './periodic.ts';

/** Series taken per claim; a look claims again while it fills the batch. */
const BATCH = 20;

/** Takes up to `limit` series due a look at `now` that no worker holds (db/lease.ts). */
export async function claimSeries(store: Store, worker: string, now: number, limit = BATCH): Promise<PostSeriesRow[]> {
  return claimRows(store.db, store.dialect, {
    table: 'post_series',
    as: 's',
    due: sql`s.deleted_at IS NULL AND s.next_check_at IS NOT NULL AND s.next_check_at <= ${now}`,
    order: sql`s.next_check_at`,
    limit,
    now,
    hold: { owner: worker, ms: SERIES_LEASE_MS },
  });
}

export class SeriesExtender extends Periodic {
  private listener?: Listener;
  private waking = false;
  private again = false;

  constructor(
    private readonly services: Services,
    /** The engine's name: whose lease a series is under, and who created each occurrence. */
    private readonly worker: string,
    everyMs = services.config.seriesEveryMs,
  ) {
    super('extending repeating posts', everyMs, (now) => this.extendDue(now));
  }

  override start(): void {
    super.start();
    this.services.series.wakeExtender = () => this.wake();
    const { databaseUrl } = this.services.config;
    // `up` runs once listening (and after a reconnect): what changed meanwhile is looked at then.
    if (databaseUrl) this.listener = listenTo(databaseUrl, SERIES_CHANNEL, { notify: () => this.wake(), up: () => this.wake() });
    else this.wake();
  }

  override async stop(): Promise<void> {
    this.services.series.wakeExtender = () => {};
    await this.listener?.stop();
    await super.stop();
  }

  /**
   * Looks now. A look already going may have claimed before the change that woke
   * this one, so a fresh look follows it; wakes during that are folded into one more.
   */
  private wake(): void {
    if (this.waking) {
      this.again = true;
      return;
    }
    this.waking = true;
    void (async () => {
      try {
        do {
          this.again = false;
          await this.run();
          await this.run();
        } while (this.again);
      } finally {
        this.waking = false;
      }
    })();
  }

  /** Extends every series due at `now` this engine manages to claim; resolves to how many occurrences it created. */
  private async extendDue(now: number): Promise<number> {
    const { store, series } = this.services;
    let created = 0;
    // A series let go after a failure is due again at once: it waits for the next look, not this one.
    const seen = new Set<string>();
    for (;;) {
      const claimed = await claimSeries(store, this.worker, now);
      const fresh = claimed.filter((row) => !seen.has(row.id));
      for (const row of claimed) if (seen.has(row.id)) await this.letGo(row.id);
      for (const row of fresh) {
        seen.add(row.id);
        try {
          created += await series.extend(row, this.worker, now);
        } catch (err) {
          // A fault of ours or a store gone for a moment: let the series go, so the next look tries again.
          log.error({ series: row.id, ...errorFields(err) }, 'creating the occurrences of a repeating post failed');
          await this.letGo(row.id).catch(() => {});
        }
      }
      if (claimed.length < BATCH || fresh.length === 0) return created;
    }
  }

  private async letGo(id: string): Promise<void> {
    await releaseLease(this.services.store.db, 'post_series', id, this.worker);
  }
}
