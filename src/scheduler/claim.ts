/**
 * Claiming due work: one statement marks up to `limit` due items as leased by
 * this worker and returns them. An item is due when its time has come, nobody
 * holds a live lease on it, and (for replies) the item it answers is published.
 * PostgreSQL skips rows other workers are claiming; SQLite serialises writers.
 * Ordered by due time alone, so the (state, publish_at) index yields the first
 * rows without sorting the whole queue (a reply is never due before its parent).
 */
import { sql } from 'kysely';
import type { Store } from '../db/index.ts';
import type { PostRow } from '../db/schema.ts';
import type { QueueFigures } from '../lib/metrics.ts';

/** Due now and free to take: its time has come, nobody holds a live lease, and (for a reply) the item it answers is published. */
function claimable(now: number) {
  return sql`p.state = 'QUEUE' AND p.deleted_at IS NULL AND p.publish_at <= ${now}
        AND (p.lease_until IS NULL OR p.lease_until < ${now})
        AND (p.parent_id IS NULL OR EXISTS (SELECT 1 FROM posts q WHERE q.id = p.parent_id AND q.state = 'PUBLISHED'))`;
}

export async function claimDue(store: Store, worker: string, limit: number, leaseMs: number, now = Date.now()): Promise<PostRow[]> {
  const lock = store.dialect === 'postgres' ? sql`FOR UPDATE SKIP LOCKED` : sql``;
  const result = await sql<PostRow>`
    UPDATE posts SET lease_owner = ${worker}, lease_until = ${now + leaseMs}, attempts = attempts + 1
    WHERE id IN (
      SELECT p.id FROM posts p
      WHERE ${claimable(now)}
      ORDER BY p.publish_at
      LIMIT ${limit}
      ${lock}
    )
    RETURNING *`.execute(store.db);
  return result.rows;
}

/** When the next item becomes claimable (due time or lease expiry), if any. */
export async function nextWakeUp(store: Store, now = Date.now()): Promise<number | undefined> {
  const row = await sql<{ at: number | null }>`
    SELECT MIN(CASE WHEN lease_until IS NOT NULL AND lease_until > publish_at THEN lease_until ELSE publish_at END) AS at
    FROM posts
    WHERE state = 'QUEUE' AND deleted_at IS NULL AND (parent_id IS NULL OR lease_until IS NOT NULL OR publish_at > ${now})`.execute(store.db);
  const at = row.rows[0]?.at;
  return at === null || at === undefined ? undefined : Number(at);
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
    sql<{ count: number; oldest: number | null }>`SELECT COUNT(*) AS count, MIN(p.publish_at) AS oldest FROM posts p WHERE ${claimable(now)}`.execute(store.db),
  ]);
  const { count, oldest } = due.rows[0] ?? { count: 0, oldest: null };
  return {
    byState: Object.fromEntries(states.map((row) => [row.state, Number(row.count)])),
    dueUnclaimed: Number(count),
    oldestDueSeconds: oldest === null ? 0 : Math.max(0, (now - Number(oldest)) / 1000),
  };
}
