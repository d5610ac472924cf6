/**
 * Claiming due posts (through the store's one claim, db/lease.ts): one statement
 * marks up to `limit` due items as leased by this worker, counting the attempt,
 * and returns them. An item is due when its time has come, nobody holds a live
 * lease on it, and (for replies) the item it answers is published. Ordered by due
 * time alone, so the (state, publish_at) index yields the first rows without
 * sorting the whole queue (a reply is never due before its parent).
 */
import { sql } from 'kysely';
import type { Store } from '../db/index.ts';
import { claimRows, leaseFree, nextClaimable } from '../db/lease.ts';
import type { PostRow } from '../db/schema.ts';
import type { QueueFigures } from '../lib/metrics.ts';

/** Due now: its time has come and (for a reply) the item it answers is published; whether a lease is free is asked apart. */
function isDue(now: number) {
  return sql`p.state = 'QUEUE' AND p.deleted_at IS NULL AND p.publish_at <= ${now}
        AND (p.parent_id IS NULL OR EXISTS (SELECT 1 FROM posts q WHERE q.id = p.parent_id AND q.state = 'PUBLISHED'))`;
}

export async function claimDue(store: Store, worker: string, limit: number, leaseMs: number, now = Date.now()): Promise<PostRow[]> {
  return claimRows(store.db, store.dialect, {
    table: 'posts',
    as: 'p',
    due: isDue(now),
    order: sql`p.publish_at`,
    limit,
    now,
    hold: { owner: worker, ms: leaseMs, countAttempt: true },
  });
}

/** When the next item becomes claimable (due time or lease expiry), if any. */
export async function nextWakeUp(store: Store, now = Date.now()): Promise<number | undefined> {
  return nextClaimable(
    store.db,
    'posts',
    'publish_at',
    sql`state = 'QUEUE' AND deleted_at IS NULL AND (parent_id IS NULL OR lease_until IS NOT NULL OR publish_at > ${now})`,
  );
}

/** Live items by state, and the due work no worker holds (for the metrics). */
export async function queueFigures(store: Store, now = Date.now()): Promise<QueueFigures> {
  const [states, due] = await Promise.all([
    store.db
      .selectFrom('posts')
      .select(['state', (eb) => eb.fn.countAll<number>().as('count')])
      .where('deleted_at', 'is', null)
      .groupBy('state')
      .execute(),
    sql<{
      count: number;
      oldest: number | null;
    }>`SELECT COUNT(*) AS count, MIN(p.publish_at) AS oldest FROM posts p WHERE ${isDue(now)} AND ${leaseFree(now, 'p')}`.execute(store.db),
  ]);
  const { count, oldest } = due.rows[0] ?? { count: 0, oldest: null };
  return {
    byState: Object.fromEntries(states.map((row) => [row.state, Number(row.count)])),
    dueUnclaimed: Number(count),
    oldestDueSeconds: oldest === null ? 0 : Math.max(0, (now - Number(oldest)) / 1000),
  };
}
