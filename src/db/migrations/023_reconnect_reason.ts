import { sql, type Kysely } from 'kysely';

/**
 * A channel that must be reconnected keeps the network's reason, so every post
 * that fails on it says why, not only the one whose refresh was refused.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE channels ADD COLUMN reconnect_reason TEXT`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE channels DROP COLUMN reconnect_reason`.execute(db);
}
