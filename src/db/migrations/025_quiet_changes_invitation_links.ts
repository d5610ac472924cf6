import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * Two changes of issue 30 (one migration number was set aside for them).
 *
 * Invitations keep their token sealed with the secret box (token_sealed), so an
 * owner can copy an open invitation's link again after a reload; older
 * invitations have none and show no link.
 *
 * PostgreSQL: a watched table NOTIFYs herald_changes only when a statement
 * changed at least one of its rows. Statement triggers fire also for writes that
 * match nothing (the engine's poll runs such an UPDATE every few seconds), and
 * each of those made every open page fetch what it shows again (issue 30). The
 * statement's changed rows are read from its transition tables; TRUNCATE, which
 * has none, keeps notifying as before.
 */
const TABLES = ['accounts', 'api_keys', 'channels', 'customers', 'webhooks', 'posts'];

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE invitations ADD COLUMN token_sealed TEXT`.execute(db);
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  await sql`
    CREATE OR REPLACE FUNCTION herald_notify_rows_changed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF EXISTS (SELECT 1 FROM changed_rows) THEN
        PERFORM pg_notify('herald_changes', TG_TABLE_NAME);
      END IF;
      RETURN NULL;
    END $$`.execute(db);
  for (const table of TABLES) {
    await sql`DROP TRIGGER IF EXISTS ${sql.id(`${table}_changes`)} ON ${sql.table(table)}`.execute(db);
    // A trigger with transition tables fires for one kind of write; the changed rows are the new ones, or the old ones of a delete.
    for (const [event, rows] of [
      ['INSERT', 'NEW'],
      ['UPDATE', 'NEW'],
      ['DELETE', 'OLD'],
    ] as const) {
      await sql`CREATE TRIGGER ${sql.id(`${table}_${event.toLowerCase()}_changes`)}
        AFTER ${sql.raw(event)} ON ${sql.table(table)} REFERENCING ${sql.raw(rows)} TABLE AS changed_rows
        FOR EACH STATEMENT EXECUTE FUNCTION herald_notify_rows_changed()`.execute(db);
    }
    await sql`CREATE TRIGGER ${sql.id(`${table}_truncate_changes`)} AFTER TRUNCATE ON ${sql.table(table)}
      FOR EACH STATEMENT EXECUTE FUNCTION herald_notify_change()`.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE invitations DROP COLUMN token_sealed`.execute(db);
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  for (const table of TABLES) {
    for (const event of ['insert', 'update', 'delete', 'truncate']) {
      await sql`DROP TRIGGER IF EXISTS ${sql.id(`${table}_${event}_changes`)} ON ${sql.table(table)}`.execute(db);
    }
    const events = sql`AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON ${sql.table(table)}`;
    await sql`CREATE TRIGGER ${sql.id(`${table}_changes`)} ${events} FOR EACH STATEMENT EXECUTE FUNCTION herald_notify_change()`.execute(db);
  }
  await sql`DROP FUNCTION IF EXISTS herald_notify_rows_changed()`.execute(db);
}
