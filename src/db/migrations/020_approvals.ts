import { sql, type Kysely } from 'kysely';

const ms = 'bigint';

/**
 * Approvals, comments and preview links. An account may ask that posts by its
 * members wait for an owner's or admin's approval; a post remembers who wrote it
 * and where it stands (null: never asked). Decisions and feedback are kept as a
 * history; comments are the team's (and a preview link's visitors') discussion
 * of a post; a preview link is a bearer token, stored as its SHA-256 only.
 * Who wrote something is kept as its kind, id and name at the time, so the
 * history still reads right after a person or key is removed.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE accounts ADD COLUMN members_need_approval INTEGER NOT NULL DEFAULT 0`.execute(db);
  await sql`ALTER TABLE posts ADD COLUMN approval TEXT`.execute(db);
  await sql`ALTER TABLE posts ADD COLUMN author_id TEXT`.execute(db);

  await db.schema
    .createTable('post_reviews')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('post_id', 'text', (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('author_kind', 'text', (c) => c.notNull())
    .addColumn('author_id', 'text')
    .addColumn('author_name', 'text', (c) => c.notNull())
    .addColumn('link_id', 'text')
    .addColumn('comment', 'text')
    .addColumn('created_at', ms, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('post_reviews_by_post').on('post_reviews').columns(['post_id', 'created_at']).execute();

  await db.schema
    .createTable('post_comments')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('post_id', 'text', (c) => c.notNull())
    .addColumn('author_kind', 'text', (c) => c.notNull())
    .addColumn('author_id', 'text')
    .addColumn('author_name', 'text', (c) => c.notNull())
    .addColumn('link_id', 'text')
    .addColumn('content', 'text', (c) => c.notNull())
    .addColumn('created_at', ms, (c) => c.notNull())
    .addColumn('deleted_at', ms)
    .execute();
  await db.schema.createIndex('post_comments_by_post').on('post_comments').columns(['post_id', 'created_at']).execute();

  await db.schema
    .createTable('preview_links')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('post_id', 'text', (c) => c.notNull())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('created_at', ms, (c) => c.notNull())
    .addColumn('expires_at', ms, (c) => c.notNull())
    .addColumn('revoked_at', ms)
    .execute();
  await db.schema.createIndex('preview_links_by_post').on('preview_links').columns(['post_id', 'created_at']).execute();
}
