/**
 * Small building blocks for tests that create posts: a webhook channel to post to,
 * a valid POST /posts body, and row counts read straight from the store.
 */
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import type { TestAccount, TestHerald } from './herald.ts';

/** Adds a webhook channel (nothing is delivered unless an engine runs and a post falls due). */
export async function addWebhookChannel(account: TestAccount, url = 'http://127.0.0.1:9/hook'): Promise<string> {
  const added = await account.call('POST', '/integrations', { identifier: 'webhook', credentials: { url } });
  assert.equal(added.status, 201, JSON.stringify(added.body));
  return added.body.id;
}

/** A valid POST /posts body scheduling one thread (one item per text) a day ahead. */
export function scheduledPost(channelId: string, texts: string | string[], extra: Record<string, unknown> = {}) {
  const value = (Array.isArray(texts) ? texts : [texts]).map((content) => ({ content, image: [] }));
  return {
    type: 'schedule',
    date: new Date(Date.now() + 86_400_000).toISOString(),
    shortLink: false,
    tags: [],
    posts: [{ integration: { id: channelId }, value }],
    ...extra,
  };
}

/** Rows of `table` belonging to the account (every counted table has account_id). */
export async function countRows(herald: TestHerald, table: 'posts' | 'media' | 'short_links' | 'idempotency_keys', accountId: string): Promise<number> {
  const { rows } = await sql<{ n: number | string }>`SELECT COUNT(*) AS n FROM ${sql.table(table)} WHERE account_id = ${accountId}`.execute(herald.services.store.db);
  return Number(rows[0].n);
}
