import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * PostgreSQL: posts join the tables whose committed writes NOTIFY herald_changes
 * (migration 007's function sends the table's name), so every process's cached
 * post lists follow them.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  const events = sql`AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON posts`;
  await sql`CREATE TRIGGER posts_changes ${events} FOR EACH STATEMENT EXECUTE FUNCTION herald_notify_change()`.execute(db);
}
