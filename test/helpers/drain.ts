/**
 * A queue of many due posts drained by workers, and what a receiver saw of it:
 * shared by the suites that crash, stop or cut off workers in the middle.
 */
import assert from 'node:assert/strict';
import type { TestAccount, TestHerald } from './herald.ts';
import { createPosts, entry, postBody } from './api-fixtures.ts';
import type { WebhookReceiver } from '../fakes/webhook-receiver.ts';

/** Queues `count` posts due now, 50 per request (the most one request takes). */
export async function queuePosts(account: TestAccount, channelId: string, count: number, label: string): Promise<string[]> {
  const ids: string[] = [];
  for (let start = 0; start < count; start += 50) {
    const entries = Array.from({ length: Math.min(50, count - start) }, (_, i) => entry(channelId, [`${label} ${start + i}`]));
    ids.push(...(await createPosts(account, postBody('now', entries))).map((c) => c.postId));
  }
  return ids;
}

export async function states(herald: TestHerald, ids: string[]): Promise<Map<string, { state: string; error: string | null }>> {
  const rows = await herald.services.store.db.selectFrom('posts').select(['id', 'state', 'error']).where('id', 'in', ids).execute();
  return new Map(rows.map((r) => [r.id, { state: r.state, error: r.error }]));
}

export function deliveriesById(receiver: WebhookReceiver): Map<string, number> {
  const counts = new Map<string, number>();
  for (const d of receiver.deliveries) {
    const id = String(d.headers['webhook-id']);
    counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  return counts;
}

/**
 * Posts the receiver got more than once (the same webhook-id, which it drops):
 * each must follow an attempt of unknown outcome, the one case in which Herald
 * sends again. Returns how many there were.
 */
export async function assertRepeatsFollowUnknown(herald: TestHerald, counts: Map<string, number>, ids: string[]): Promise<number> {
  const repeated = [...counts].filter(([id, n]) => n > 1 && ids.includes(id)).map(([id]) => id);
  for (const id of repeated) {
    const attempts = await herald.services.store.db.selectFrom('post_attempts').select('outcome').where('post_id', '=', id).execute();
    assert.ok(
      attempts.some((a) => a.outcome === 'unknown'),
      `post ${id} was sent again without an attempt of unknown outcome`,
    );
  }
  return repeated.length;
}
