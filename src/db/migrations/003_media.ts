import type { Kysely } from 'kysely';

const ms = 'bigint';

/**
 * Files made from an uploaded file and kept next to it: its thumbnail (or video
 * poster) and the copies converted for networks that need another format or size.
 * `spec` names what the copy is, so a second publish to the same kind of network
 * finds the copy made by the first.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('media_variants')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('media_id', 'text', (c) => c.notNull().references('media.id'))
    .addColumn('spec', 'text', (c) => c.notNull())
    .addColumn('storage_key', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('mime_type', 'text', (c) => c.notNull())
    .addColumn('size', ms, (c) => c.notNull())
    .addColumn('width', 'integer')
    .addColumn('height', 'integer')
    .addColumn('created_at', ms, (c) => c.notNull())
    .addUniqueConstraint('media_variants_one_per_spec', ['media_id', 'spec'])
    .execute();
  // The media library lists an account's files newest first.
  await db.schema.createIndex('media_by_account_date').on('media').columns(['account_id', 'created_at']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('media_by_account_date').execute();
  await db.schema.dropTable('media_variants').execute();
}
