import type { Kysely } from 'kysely';

/**
 * What Herald last read from a network for a channel (analytics, recent posts),
 * kept a while so a dashboard that asks again does not spend the network's
 * quota; shared by every server on the store.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('network_reads')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('channel_id', 'text', (c) => c.notNull())
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('read_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('network_reads_by_age').on('network_reads').column('read_at').execute();
}
