import type { Kysely } from 'kysely';

/**
 * What a publish made on the network and a later attempt of the same post item
 * may use again (an Instagram or Threads media container still processing), so
 * a retry resumes instead of starting over.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('publish_progress')
    .addColumn('post_id', 'text', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('publish_progress_pk', ['post_id', 'key'])
    .execute();
  await db.schema.createIndex('publish_progress_by_age').on('publish_progress').column('created_at').execute();
}
