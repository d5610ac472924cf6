import { sql, type Kysely } from 'kysely';

const ms = 'bigint';

/**
 * Repeating posts. A series holds a rule (every N days or weeks, or chosen
 * weekdays, in a time zone, until a date or for a number of times) and the post
 * to repeat, as POST /posts takes it. Each occurrence is an ordinary post group
 * carrying the series' id and its instant; an occurrence row per (series,
 * instant) is written in the same transaction as its posts, and its primary key
 * makes a second creation of the same occurrence fail, whichever worker tries.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('post_series')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('name', 'text')
    .addColumn('author_id', 'text')
    .addColumn('rule', 'text', (c) => c.notNull())
    .addColumn('template', 'text', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('extended_to', ms, (c) => c.notNull())
    .addColumn('next_check_at', ms)
    .addColumn('lease_owner', 'text')
    .addColumn('lease_until', ms)
    .addColumn('last_error', 'text')
    .addColumn('created_at', ms, (c) => c.notNull())
    .addColumn('updated_at', ms, (c) => c.notNull())
    .addColumn('deleted_at', ms)
    .execute();
  await db.schema.createIndex('post_series_due').on('post_series').column('next_check_at').execute();
  await db.schema.createIndex('post_series_by_account').on('post_series').columns(['account_id', 'created_at']).execute();

  await db.schema
    .createTable('post_series_occurrences')
    .addColumn('series_id', 'text', (c) => c.notNull())
    .addColumn('occurrence_at', ms, (c) => c.notNull())
    .addColumn('occurrence_index', 'integer', (c) => c.notNull())
    .addColumn('series_version', 'integer', (c) => c.notNull())
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('created_at', ms, (c) => c.notNull())
    .addPrimaryKeyConstraint('post_series_occurrences_once', ['series_id', 'occurrence_at'])
    .execute();

  await sql`ALTER TABLE posts ADD COLUMN series_id TEXT`.execute(db);
  await sql`ALTER TABLE posts ADD COLUMN occurrence_at BIGINT`.execute(db);
  await db.schema.createIndex('posts_by_series').on('posts').columns(['series_id', 'occurrence_at']).execute();
}
