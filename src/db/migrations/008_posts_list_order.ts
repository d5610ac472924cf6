import type { Kysely } from 'kysely';

/**
 * GET /posts lists an account's posts by time, then id. With the id in the index
 * the rows come out in that order, with no sort per request.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('posts_by_account_date_id').on('posts').columns(['account_id', 'publish_at', 'id']).execute();
  await db.schema.dropIndex('posts_by_account_date').execute();
}
