/**
 * Opens the store: the embedded SQLite file by default, PostgreSQL when a URL is
 * given. Both speak through Kysely, so the rest of the code has one query path;
 * `dialect` is exposed only for the few statements that differ (claiming work).
 */
import { markStoreUser } from '../lib/data-lock.ts';
import fs from 'node:fs';
import path from 'node:path';
import {
  Kysely,
  Migrator,
  PostgresDialect,
  SqliteDialect,
  sql,
  type Migration,
  type PostgresPool,
  type PostgresPoolClient,
  type SqliteDatabase as KyselySqlite,
  type SqliteStatement,
} from 'kysely';
import SqliteDatabase from 'libsql';
import pg from 'pg';
import type { Database } from './schema.ts';
import { connectionWatcher, fileChangeSignal, notifyChangeSignal, type ChangeSignal } from './changes.ts';
import * as initial from './migrations/001_initial.ts';
import * as pacing from './migrations/002_pacing.ts';
import * as mediaVariants from './migrations/003_media.ts';
import * as accounts from './migrations/004_accounts.ts';
import * as connect from './migrations/005_connect.ts';
import * as webhooks from './migrations/006_webhooks.ts';
import * as changeTriggers from './migrations/007_change_triggers.ts';
import * as postsListOrder from './migrations/008_posts_list_order.ts';
import * as postChangeTrigger from './migrations/009_post_change_trigger.ts';
import * as oneOwner from './migrations/010_one_owner.ts';
import * as channelDefaults from './migrations/011_channel_defaults.ts';
import * as templates from './migrations/012_templates.ts';
import * as mediaTags from './migrations/013_media_tags.ts';
import * as publishProgress from './migrations/014_publish_progress.ts';
import * as tokenRenewal from './migrations/015_token_renewal.ts';
import * as postFollowUps from './migrations/016_post_follow_ups.ts';
import * as networkReads from './migrations/017_network_reads.ts';
import * as feeds from './migrations/018_feeds.ts';
import * as postSeries from './migrations/019_post_series.ts';
import * as approvals from './migrations/020_approvals.ts';
import * as imports from './migrations/021_imports.ts';
import * as feedAuthors from './migrations/022_feed_authors.ts';
import * as reconnectReason from './migrations/023_reconnect_reason.ts';
import * as personPreferences from './migrations/024_person_preferences.ts';
import * as quietChangesInvitationLinks from './migrations/025_quiet_changes_invitation_links.ts';
import * as accessExpiry from './migrations/026_access_expiry.ts';
import * as mail from './migrations/027_mail.ts';
import * as oidc from './migrations/028_oidc.ts';
import * as mcpClients from './migrations/029_mcp_clients.ts';

export type Dialect = 'sqlite' | 'postgres';

export interface Store {
  db: Kysely<Database>;
  dialect: Dialect;
  /** Where the data lives, for log lines (never includes a password). */
  description: string;
  /** Changes to the tables that in-memory read caches hold, from every process. */
  changes: ChangeSignal;
  close(): Promise<void>;
}

// Postgres returns BIGINT as strings; every bigint here is an epoch-ms or a byte
// count, well inside Number's exact range.
pg.types.setTypeParser(20, (value) => Number(value));

const migrations: Record<string, Migration> = {
  '001_initial': initial,
  '002_pacing': pacing,
  '003_media': mediaVariants,
  '004_accounts': accounts,
  '005_connect': connect,
  '006_webhooks': webhooks,
  '007_change_triggers': changeTriggers,
  '008_posts_list_order': postsListOrder,
  '009_post_change_trigger': postChangeTrigger,
  '010_one_owner': oneOwner,
  '011_channel_defaults': channelDefaults,
  '012_templates': templates,
  '013_media_tags': mediaTags,
  '014_publish_progress': publishProgress,
  '015_token_renewal': tokenRenewal,
  '016_post_follow_ups': postFollowUps,
  '017_network_reads': networkReads,
  '018_feeds': feeds,
  '019_post_series': postSeries,
  '020_approvals': approvals,
  '021_imports': imports,
  '022_feed_authors': feedAuthors,
  '023_reconnect_reason': reconnectReason,
  '024_person_preferences': personPreferences,
  '025_quiet_changes_invitation_links': quietChangesInvitationLinks,
  '026_access_expiry': accessExpiry,
  '027_mail': mail,
  '028_oidc': oidc,
  '029_mcp_clients': mcpClients,
};

/**
 * Makes sure the PostgreSQL database of `databaseUrl` exists: when it does not,
 * it is created through the server's maintenance database where the user may
 * create databases; otherwise the error says what to do. Returns whether it was created.
 */
export async function ensureDatabase(databaseUrl: string): Promise<boolean> {
  const probe = new pg.Client({ connectionString: databaseUrl });
  try {
    await probe.connect();
    return false;
  } catch (err) {
    // 3D000: the database does not exist; anything else (a wrong password, no server) is for the caller to report.
    if ((err as { code?: string }).code !== '3D000') throw err;
  } finally {
    await probe.end().catch(() => {});
  }
  const name = decodeURIComponent(new URL(databaseUrl).pathname.slice(1));
  const maintenance = new URL(databaseUrl);
  maintenance.pathname = '/postgres';
  const admin = new pg.Client({ connectionString: maintenance.toString() });
  try {
    await admin.connect();
    await admin.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`);
    return true;
  } catch (err) {
    throw new Error(
      `database "${name}" does not exist, and Herald could not create it (${(err as Error).message}). ` +
        `Create it (createdb ${name}), or let this user create databases (ALTER ROLE … CREATEDB), then run "herald migrate" again.`,
    );
  } finally {
    await admin.end().catch(() => {});
  }
}

/** Asks the store the smallest question there is: it answers when it is reachable. */
export async function ping(db: Kysely<Database>): Promise<void> {
  await sql`SELECT 1`.execute(db);
}

export function openStore(options: { databaseUrl?: string; dataDir: string }): Store {
  if (options.databaseUrl) {
    const pool = new pg.Pool({ connectionString: options.databaseUrl, max: 10 });
    // A connection lost (the server restarted, pg_terminate_backend) must not end the process. The pool
    // listens for errors only while a client is idle; this listener holds from the client's creation on,
    // also while a request holds it. The query in flight fails on its own, and the pool drops the client.
    pool.on('error', () => {});
    pool.on('connect', (client) => client.on('error', () => {}));
    const changes = notifyChangeSignal(options.databaseUrl);
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: watchingPool(pool, changes) }) });
    const where = new URL(options.databaseUrl);
    return {
      db,
      dialect: 'postgres',
      description: `PostgreSQL ${where.hostname}:${where.port || 5432}${where.pathname}`,
      changes,
      close: async () => {
        await changes.close();
        await db.destroy();
      },
    };
  }
  fs.mkdirSync(options.dataDir, { recursive: true, mode: 0o700 });
  const file = path.join(options.dataDir, 'herald.db');
  ownOnly(options.dataDir, file);
  const sqlite = new SqliteDatabase(file);
  sqlite.exec('PRAGMA journal_mode = WAL');
  sqlite.exec('PRAGMA synchronous = NORMAL');
  sqlite.exec('PRAGMA busy_timeout = 5000');
  sqlite.exec('PRAGMA foreign_keys = ON');
  const changes = fileChangeSignal(file);
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: reusingStatements(sqlite, connectionWatcher(changes)) }) });
  const unmark = markStoreUser(options.dataDir);
  return {
    db,
    dialect: 'sqlite',
    description: `SQLite ${file}`,
    changes,
    close: async () => {
      await db.destroy();
      await changes.close();
      unmark();
    },
  };
}

/**
 * The data folder and the database files are readable by Herald's user only, also
 * where an earlier version created them readable by everyone.
 */
function ownOnly(dataDir: string, file: string): void {
  fs.chmodSync(dataDir, 0o700);
  for (const name of [file, `${file}-wal`, `${file}-shm`, `${file}-changes`]) {
    if (fs.existsSync(name)) fs.chmodSync(name, 0o600);
  }
}

/** Pooled PostgreSQL connections whose writes to watched tables are signalled (see changes.ts). */
function watchingPool(pool: pg.Pool, changes: ChangeSignal): PostgresPool {
  const wrapped = new WeakMap<pg.PoolClient, PostgresPoolClient>();
  const wrap = (client: pg.PoolClient): PostgresPoolClient => {
    const watch = connectionWatcher(changes);
    // Kysely passes (sql, parameters), or a cursor object for .stream() (reads only; no cursor is configured here).
    const query = ((sql: string, parameters: unknown[]) => {
      if (typeof sql !== 'string') return client.query(sql as never);
      return client.query(sql, parameters).then(
        (result) => {
          watch(sql, result.rowCount ?? 0);
          return result;
        },
        (err: unknown) => {
          watch(sql, 0);
          throw err;
        },
      );
    }) as unknown as PostgresPoolClient['query'];
    return { query, release: () => client.release() };
  };
  return {
    async connect() {
      const client = await pool.connect();
      let own = wrapped.get(client);
      if (!own) {
        own = wrap(client);
        wrapped.set(client, own);
      }
      return own;
    },
    end: () => pool.end(),
  };
}

const STATEMENT_CACHE_SIZE = 500;

/**
 * Kysely prepares every query it runs, and preparing costs libsql about as much as
 * running a small query. The queries of a request come from a handful of SQL texts,
 * so prepared statements are kept (least recently used dropped first) and run again
 * with new parameters. Kysely runs one query at a time on this connection, and
 * all()/run() step a statement to its end, so a reused statement never holds a
 * read snapshot open; iterate() (which a caller may stop early) gets its own.
 */
function reusingStatements(sqlite: SqliteDatabase.Database, watch: (sql: string, changedRows: number) => void): KyselySqlite {
  const cache = new Map<string, SqliteStatement>();
  return {
    close: () => sqlite.close(),
    prepare(sql) {
      let statement = cache.get(sql);
      if (statement) {
        cache.delete(sql);
      } else {
        statement = reusable(sqlite, sql, watch);
        if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value!);
      }
      cache.set(sql, statement);
      return statement;
    },
  };
}

/** Raw rows give blobs as Buffers; row objects give them as ArrayBuffers. */
function asObjectModeValue(value: unknown): unknown {
  if (value instanceof Uint8Array) return value.buffer.slice(value.byteOffset, value.byteOffset + value.byteLength);
  return value;
}

/**
 * A prepared statement that reads rows as arrays and names their fields here:
 * libsql builds a row object one property at a time through N-API, which costs
 * more than the query itself on long lists (GET /posts). The rows are the same
 * objects: one field per column, in column order (a repeated name keeps the last).
 */
function reusable(sqlite: SqliteDatabase.Database, sql: string, watch: (sql: string, changedRows: number) => void): SqliteStatement {
  const prepared = sqlite.prepare(sql);
  const reader = prepared.reader;
  const names = () => prepared.columns().map((c) => c.name);
  let columns = reader ? names() : [];
  if (reader) prepared.raw(true);
  return {
    reader,
    all: (parameters) => {
      let rows: unknown[][] = [];
      try {
        rows = prepared.all(parameters) as unknown[][];
      } finally {
        // A write read back with RETURNING answers one row per row it changed.
        watch(sql, rows.length);
      }
      // SQLite prepares a statement again when another process changed the schema; `*` may then give other columns.
      if (rows.length > 0 && rows[0].length !== columns.length) columns = names();
      return rows.map((values) => {
        const row: Record<string, unknown> = {};
        for (let i = 0; i < columns.length; i++) row[columns[i]] = asObjectModeValue(values[i]);
        return row;
      });
    },
    run: (parameters) => {
      let changes = 0;
      try {
        const result = prepared.run(parameters);
        changes = Number(result.changes);
        return result;
      } finally {
        watch(sql, changes);
      }
    },
    iterate: (parameters) => sqlite.prepare(sql).iterate(parameters) as IterableIterator<unknown>,
  };
}

/** Brings the schema up to date; safe to run from several processes at once on PostgreSQL. */
function migrator(store: Store): Migrator {
  return new Migrator({
    db: store.db,
    provider: { getMigrations: async () => migrations },
    // Features land in parallel, each with its own numbered migration.
    allowUnorderedMigrations: true,
  });
}

/** The migrations this code knows that the store has not applied. */
export async function pendingMigrations(store: Store): Promise<string[]> {
  return (await migrator(store).getMigrations()).filter((m) => m.executedAt === undefined).map((m) => m.name);
}

export async function migrate(store: Store): Promise<string[]> {
  const { error, results } = await migrator(store).migrateToLatest();
  if (error) throw error;
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
