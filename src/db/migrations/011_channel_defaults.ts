import { sql, type Kysely } from 'kysely';

/** Per-channel defaults for the network's post settings (a Pinterest board, a subreddit), which the composer starts from. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE channels ADD COLUMN default_settings TEXT NOT NULL DEFAULT '{}'`.execute(db);
}
