import type { Kysely } from 'kysely';

/**
 * The rows a CSV import created, by a key made from each row's content: importing
 * the same file again (tomorrow or next year, or twice at once) creates nothing
 * new. An idempotency key lives a day; these keys live as long as their post.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('post_imports')
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('row_key', 'text', (c) => c.notNull())
    // The root post the row became; a key whose post was deleted since no longer counts.
    .addColumn('post_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('post_imports_pk', ['account_id', 'row_key'])
    .execute();
}
