import { sql, type Kysely } from 'kysely';

/**
 * A feed's posts carry the person who set the feed up, so a member's feed waits
 * for approval as the member's own posts do. Each remembered item records when a
 * read last saw it in the feed's document, so what a feed keeps can be bounded:
 * the items of its current document and the most recently seen before them.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE feeds ADD COLUMN author_id TEXT`.execute(db);
  await sql`ALTER TABLE feed_items ADD COLUMN last_seen_at BIGINT`.execute(db);
  await sql`UPDATE feed_items SET last_seen_at = seen_at`.execute(db);
  await db.schema.createIndex('feed_items_last_seen').on('feed_items').columns(['feed_id', 'last_seen_at']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('feed_items_last_seen').execute();
  await sql`ALTER TABLE feed_items DROP COLUMN last_seen_at`.execute(db);
  await sql`ALTER TABLE feeds DROP COLUMN author_id`.execute(db);
}
