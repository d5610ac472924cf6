import type { Kysely } from 'kysely';

// Column types that mean the same on SQLite and PostgreSQL.
const ms = 'bigint';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('accounts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('created_at', ms, (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('key_hash', 'text', (c) => c.notNull().unique())
    .addColumn('key_sealed', 'text', (c) => c.notNull())
    .addColumn('key_hint', 'text', (c) => c.notNull())
    .addColumn('created_at', ms, (c) => c.notNull())
    .addColumn('last_used_at', ms)
    .addColumn('revoked_at', ms)
    .execute();

  await db.schema
    .createTable('customers')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('created_at', ms, (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('channels')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('picture', 'text')
    .addColumn('profile', 'text')
    .addColumn('external_id', 'text', (c) => c.notNull())
    .addColumn('customer_id', 'text', (c) => c.references('customers.id'))
    .addColumn('config_sealed', 'text', (c) => c.notNull())
    .addColumn('time_zone', 'text', (c) => c.notNull())
    .addColumn('posting_times', 'text', (c) => c.notNull())
    .addColumn('disabled', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('needs_reconnect', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', ms, (c) => c.notNull())
    .addColumn('deleted_at', ms)
    .execute();
  await db.schema.createIndex('channels_by_account').on('channels').columns(['account_id', 'deleted_at']).execute();

  await db.schema
    .createTable('media')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('original_name', 'text', (c) => c.notNull())
    .addColumn('storage_key', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('mime_type', 'text', (c) => c.notNull())
    .addColumn('size', ms, (c) => c.notNull())
    .addColumn('width', 'integer')
    .addColumn('height', 'integer')
    .addColumn('duration', 'real')
    .addColumn('alt', 'text')
    .addColumn('thumbnail_url', 'text')
    .addColumn('created_at', ms, (c) => c.notNull())
    .addColumn('deleted_at', ms)
    .execute();
  await db.schema.createIndex('media_by_url').on('media').column('url').execute();

  await db.schema
    .createTable('posts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('channel_id', 'text', (c) => c.notNull().references('channels.id'))
    .addColumn('group_id', 'text', (c) => c.notNull())
    .addColumn('root_id', 'text')
    .addColumn('parent_id', 'text')
    .addColumn('thread_index', 'integer', (c) => c.notNull())
    .addColumn('content', 'text', (c) => c.notNull())
    .addColumn('media', 'text', (c) => c.notNull())
    .addColumn('settings', 'text', (c) => c.notNull())
    .addColumn('tags', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('publish_at', ms, (c) => c.notNull())
    .addColumn('delay_minutes', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('release_id', 'text')
    .addColumn('release_url', 'text')
    .addColumn('error', 'text')
    .addColumn('warning', 'text')
    .addColumn('creation_method', 'text', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('lease_owner', 'text')
    .addColumn('lease_until', ms)
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', ms, (c) => c.notNull())
    .addColumn('updated_at', ms, (c) => c.notNull())
    .addColumn('deleted_at', ms)
    .execute();
  await db.schema.createIndex('posts_due').on('posts').columns(['state', 'publish_at']).execute();
  await db.schema.createIndex('posts_by_account_date').on('posts').columns(['account_id', 'publish_at']).execute();
  await db.schema.createIndex('posts_by_group').on('posts').column('group_id').execute();
  await db.schema.createIndex('posts_by_channel_date').on('posts').columns(['channel_id', 'publish_at']).execute();

  await db.schema
    .createTable('post_attempts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('post_id', 'text', (c) => c.notNull())
    .addColumn('worker', 'text', (c) => c.notNull())
    .addColumn('started_at', ms, (c) => c.notNull())
    .addColumn('finished_at', ms)
    .addColumn('outcome', 'text', (c) => c.notNull())
    .addColumn('detail', 'text')
    .execute();
  await db.schema.createIndex('post_attempts_by_post').on('post_attempts').column('post_id').execute();

  await db.schema
    .createTable('short_links')
    .addColumn('code', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('clicks', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', ms, (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('idempotency_keys')
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('route', 'text', (c) => c.notNull())
    .addColumn('request_hash', 'text')
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('response', 'text')
    .addColumn('created_at', ms, (c) => c.notNull())
    .addPrimaryKeyConstraint('idempotency_keys_pk', ['account_id', 'key'])
    .execute();

  await db.schema
    .createTable('rate_counters')
    .addColumn('bucket', 'text', (c) => c.notNull())
    .addColumn('window_start', ms, (c) => c.notNull())
    .addColumn('count', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('rate_counters_pk', ['bucket', 'window_start'])
    .execute();

  await db.schema
    .createTable('notifications')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('content', 'text', (c) => c.notNull())
    .addColumn('link', 'text')
    .addColumn('created_at', ms, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('notifications_by_account').on('notifications').columns(['account_id', 'created_at']).execute();
}
