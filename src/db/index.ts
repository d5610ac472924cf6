/**
 * Opens the store: the embedded SQLite file by default, PostgreSQL when a URL is
 * given. Both speak through Kysely, so the rest of the code has one query path;
 * `dialect` is exposed only for the few statements that differ (claiming work).
 */
import fs from 'node:fs';
import path from 'node:path';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, type Migration } from 'kysely';
import SqliteDatabase from 'libsql';
import pg from 'pg';
import type { Database } from './schema.ts';
import * as initial from './migrations/001_initial.ts';

export type Dialect = 'sqlite' | 'postgres';

export interface Store {
  db: Kysely<Database>;
  dialect: Dialect;
  /** Where the data lives, for log lines (never includes a password). */
  description: string;
  close(): Promise<void>;
}

// Postgres returns BIGINT as strings; every bigint here is an epoch-ms or a byte
// count, well inside Number's exact range.
pg.types.setTypeParser(20, (value) => Number(value));

const migrations: Record<string, Migration> = {
  '001_initial': initial,
};

export function openStore(options: { databaseUrl?: string; dataDir: string }): Store {
  if (options.databaseUrl) {
    const pool = new pg.Pool({ connectionString: options.databaseUrl, max: 10 });
    // An idle client that loses its connection must not crash the process.
    pool.on('error', () => {});
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    const where = new URL(options.databaseUrl);
    return {
      db,
      dialect: 'postgres',
      description: `PostgreSQL ${where.hostname}:${where.port || 5432}${where.pathname}`,
      close: () => db.destroy(),
    };
  }
  fs.mkdirSync(options.dataDir, { recursive: true });
  const file = path.join(options.dataDir, 'herald.db');
  const sqlite = new SqliteDatabase(file);
  sqlite.exec('PRAGMA journal_mode = WAL');
  sqlite.exec('PRAGMA synchronous = NORMAL');
  sqlite.exec('PRAGMA busy_timeout = 5000');
  sqlite.exec('PRAGMA foreign_keys = ON');
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite as never }) });
  return { db, dialect: 'sqlite', description: `SQLite ${file}`, close: () => db.destroy() };
}

/** Brings the schema up to date; safe to run from several processes at once on PostgreSQL. */
export async function migrate(store: Store): Promise<string[]> {
  const migrator = new Migrator({
    db: store.db,
    provider: { getMigrations: async () => migrations },
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error;
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
