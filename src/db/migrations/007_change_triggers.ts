import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * PostgreSQL: every committed write to a table that in-memory read caches hold
 * sends a NOTIFY on herald_changes (src/db/changes.ts), so the caches of every
 * process drop what they hold. SQLite processes signal through a file instead.
 */
const TABLES = ['accounts', 'api_keys', 'channels', 'customers', 'webhooks'];

export async function up(db: Kysely<unknown>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  await sql`
    CREATE OR REPLACE FUNCTION herald_notify_change() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('herald_changes', TG_TABLE_NAME);
      RETURN NULL;
    END $$`.execute(db);
  for (const table of TABLES) {
    const events = sql`AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON ${sql.table(table)}`;
    await sql`CREATE TRIGGER ${sql.id(`${table}_changes`)} ${events} FOR EACH STATEMENT EXECUTE FUNCTION herald_notify_change()`.execute(db);
  }
}
