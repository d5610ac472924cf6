import { sql, type Kysely } from 'kysely';

/**
 * A channel whose access Herald cannot renew (the network gives no refresh, or
 * refused it) keeps publishing until its token lapses: `access_lapses_at` says
 * when (epoch ms; NULL while it renews itself), `expiry_warned` how far ahead
 * its owner was last warned (ms), so each warning is sent once.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE channels ADD COLUMN access_lapses_at BIGINT`.execute(db);
  await sql`ALTER TABLE channels ADD COLUMN expiry_warned BIGINT`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE channels DROP COLUMN expiry_warned`.execute(db);
  await sql`ALTER TABLE channels DROP COLUMN access_lapses_at`.execute(db);
}
