import type { Kysely } from 'kysely';

// Column types that mean the same on SQLite and PostgreSQL.
const ms = 'bigint';

/**
 * RSS and Atom subscriptions that post their new items, and every item each
 * subscription has seen: the primary key (feed, item key) is what makes an item
 * post once, ever, whichever worker reads it and however often.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('feeds')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('name', 'text')
    .addColumn('title', 'text')
    .addColumn('channels', 'text', (c) => c.notNull())
    .addColumn('template', 'text', (c) => c.notNull())
    .addColumn('mode', 'text', (c) => c.notNull())
    .addColumn('attach_image', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('paused', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('primed', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('etag', 'text')
    .addColumn('last_modified', 'text')
    .addColumn('next_fetch_at', ms, (c) => c.notNull())
    .addColumn('lease_owner', 'text')
    .addColumn('lease_until', ms)
    .addColumn('last_fetched_at', ms)
    .addColumn('last_success_at', ms)
    .addColumn('last_error', 'text')
    .addColumn('failures', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', ms, (c) => c.notNull())
    .addColumn('updated_at', ms, (c) => c.notNull())
    .addColumn('deleted_at', ms)
    .execute();
  await db.schema.createIndex('feeds_by_account').on('feeds').columns(['account_id', 'deleted_at']).execute();
  await db.schema.createIndex('feeds_due').on('feeds').column('next_fetch_at').execute();

  await db.schema
    .createTable('feed_items')
    .addColumn('feed_id', 'text', (c) => c.notNull().references('feeds.id'))
    .addColumn('item_key', 'text', (c) => c.notNull())
    .addColumn('title', 'text')
    .addColumn('link', 'text')
    .addColumn('post_ids', 'text')
    .addColumn('note', 'text')
    .addColumn('seen_at', ms, (c) => c.notNull())
    .addPrimaryKeyConstraint('feed_items_pk', ['feed_id', 'item_key'])
    .execute();
  await db.schema.createIndex('feed_items_recent').on('feed_items').columns(['feed_id', 'seen_at']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('feed_items').execute();
  await db.schema.dropTable('feeds').execute();
}
