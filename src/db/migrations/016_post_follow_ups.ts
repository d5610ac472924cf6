import type { Kysely } from 'kysely';

/**
 * Published posts a network finishes later (TikTok processes and moderates after
 * it took the post): followed until the network says how it ended, so a late
 * failure moves the post to ERROR with the network's reason.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('post_follow_ups')
    .addColumn('post_id', 'text', (c) => c.primaryKey())
    .addColumn('next_at', 'bigint', (c) => c.notNull())
    .addColumn('until_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('post_follow_ups_due').on('post_follow_ups').column('next_at').execute();
}
