import { sql, type Kysely } from 'kysely';

/**
 * When a channel's access is renewed in the background (epoch ms; NULL: never,
 * its tokens do not expire). The tokens themselves are sealed, so the time is
 * kept beside them. Existing channels get 0: the renewal looks at each once.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE channels ADD COLUMN renew_at BIGINT`.execute(db);
  await sql`UPDATE channels SET renew_at = 0`.execute(db);
  await db.schema.createIndex('channels_by_renewal').on('channels').column('renew_at').execute();
}
