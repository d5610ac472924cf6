import type { Kysely } from 'kysely';

/**
 * Each person's display preferences (language, zone, week start, clock), on the
 * server so they follow the person to any browser; a row only once they choose.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('person_preferences')
    .addColumn('user_id', 'text', (c) => c.primaryKey().references('users.id').onDelete('cascade'))
    .addColumn('language', 'text')
    .addColumn('zone', 'text')
    .addColumn('week_start', 'integer')
    .addColumn('clock', 'text')
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('person_preferences').execute();
}
