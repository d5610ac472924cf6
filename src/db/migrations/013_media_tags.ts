import { sql, type Kysely } from 'kysely';

/** Tags on media files (a JSON array of names), so a large library can be sorted into groups and filtered. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE media ADD COLUMN tags TEXT NOT NULL DEFAULT '[]'`.execute(db);
}
