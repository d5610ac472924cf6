/**
 * `herald move-store --to postgres://...`: copies the embedded store, every
 * table and row (people, keys, applications, channels with their sealed tokens,
 * posts with their attempts, media references, webhooks and deliveries, limits,
 * short links), into an empty PostgreSQL database with the same schema, then
 * checks each table's row count and a checksum of its rows on both sides. The
 * source is only read. Media files and the secret that seals tokens stay in the
 * data folder, where a Herald on PostgreSQL keeps finding them.
 */
import crypto from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { Config } from '../config.ts';
import { ensureDatabase, openStore, pendingMigrations, migrate, type Store } from '../db/index.ts';
import { otherStoreUsers } from '../lib/data-lock.ts';
import { createSecretBox, existingSecret } from '../lib/secrets.ts';
import { secretMismatch } from '../domain/sealed-values.ts';

export interface MovedTable {
  table: string;
  rows: number;
  checksum: string;
}

/** Rows per INSERT: well under PostgreSQL's 65,535 parameters for the widest table. */
const BATCH_ROWS = 200;

type AnyDb = Kysely<any>;

/** The source's tables, each after the tables its foreign keys point at. */
async function tablesInOrder(db: AnyDb): Promise<{ name: string; key: string[] }[]> {
  const names = (
    await sql<{ name: string }>`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'kysely_%'`.execute(db)
  ).rows.map((r) => r.name);
  const info = new Map<string, { key: string[]; needs: string[] }>();
  for (const name of names) {
    const columns = (await sql<{ name: string; pk: number }>`SELECT name, pk FROM pragma_table_info(${name})`.execute(db)).rows;
    const key = columns.filter((c) => c.pk > 0).sort((a, b) => a.pk - b.pk);
    const needs = (await sql<{ table: string }>`SELECT "table" FROM pragma_foreign_key_list(${name})`.execute(db)).rows.map((r) => r.table);
    info.set(name, { key: (key.length > 0 ? key : columns).map((c) => c.name), needs: needs.filter((t) => t !== name) });
  }
  const ordered: { name: string; key: string[] }[] = [];
  const placed = new Set<string>();
  const place = (name: string) => {
    if (placed.has(name)) return;
    placed.add(name);
    for (const needed of info.get(name)?.needs ?? []) place(needed);
    ordered.push({ name, key: info.get(name)!.key });
  };
  for (const name of [...names].sort()) place(name);
  return ordered;
}

/** A value as both stores give it back: epoch-ms bigints and counters as numbers, text as text. */
function canonical(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (Buffer.isBuffer(value) || value instanceof Uint8Array) return `b:${Buffer.from(value).toString('base64')}`;
  if (typeof value === 'number' || typeof value === 'bigint') return `n:${Number(value)}`;
  return `s:${String(value)}`;
}

/**
 * Row count and a SHA-256 over every row, each value written canonically, rows
 * in the order of their key as written so (the two stores collate text differently).
 */
async function tableChecksum(db: AnyDb, table: string, key: string[], columns: string[]): Promise<{ rows: number; checksum: string }> {
  const rows = (await db.selectFrom(table).select(columns).execute()).map((row) => ({
    key: key.map((c) => canonical(row[c])).join('\u0001'),
    line: columns.map((c) => canonical(row[c])).join('\u0001'),
  }));
  rows.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const hash = crypto.createHash('sha256');
  for (const row of rows) hash.update(`${row.line}\u0002`);
  return { rows: rows.length, checksum: hash.digest('hex').slice(0, 16) };
}

async function columnsOf(db: AnyDb, table: string): Promise<string[]> {
  return (await sql<{ name: string }>`SELECT name FROM pragma_table_info(${table})`.execute(db)).rows.map((r) => r.name);
}

async function refuseUnlessEmpty(target: Store, tables: string[]): Promise<void> {
  for (const table of tables) {
    const { count } = await (target.db as AnyDb)
      .selectFrom(table)
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .executeTakeFirstOrThrow();
    if (Number(count) > 0) throw new Error(`The target database already holds data (${table} has ${count} rows): move into a new, empty database.`);
  }
}

export async function moveStore(config: Config, targetUrl: string, progress: (line: string) => void = () => {}): Promise<MovedTable[]> {
  if (config.databaseUrl) throw new Error('HERALD_DATABASE_URL is set: move-store copies the embedded store; unset it, and give the target with --to.');
  if (!/^postgres(ql)?:\/\//.test(targetUrl)) throw new Error('--to must be a postgres:// URL');
  const users = otherStoreUsers(config.dataDir);
  if (users.length > 0)
    throw new Error(`Herald processes use the store in ${config.dataDir} (pid ${users.join(', ')}): stop them first, so nothing changes during the move.`);

  const source = openStore({ dataDir: config.dataDir });
  let target: Store | undefined;
  try {
    const pending = await pendingMigrations(source);
    if (pending.length > 0) throw new Error(`The embedded store is not up to date (${pending.join(', ')}): run "herald migrate" on it first.`);
    // The moved store is started with this environment's secret: one that opens none of its tokens is refused now, not after the move.
    const secret = existingSecret(config.secret, config.dataDir);
    const mismatch = secret ? await secretMismatch(source.db, createSecretBox(secret), config) : undefined;
    if (mismatch) throw new Error(`${mismatch} Nothing was moved.`);
    await ensureDatabase(targetUrl);
    target = openStore({ databaseUrl: targetUrl, dataDir: config.dataDir });
    await migrate(target);
    const tables = await tablesInOrder(source.db as AnyDb);
    await refuseUnlessEmpty(
      target,
      tables.map((t) => t.name),
    );

    // One transaction, checked before it commits: a move that fails half-way, or whose copy
    // does not match, leaves the target as empty as it was.
    return await (target.db as AnyDb).transaction().execute(async (trx) => {
      for (const { name } of tables) {
        const rows = await (source.db as AnyDb).selectFrom(name).selectAll().execute();
        for (let start = 0; start < rows.length; start += BATCH_ROWS) {
          await trx
            .insertInto(name)
            .values(rows.slice(start, start + BATCH_ROWS))
            .execute();
        }
        progress(`copied ${name}: ${rows.length} rows`);
      }
      const moved: MovedTable[] = [];
      for (const { name, key } of tables) {
        const columns = await columnsOf(source.db as AnyDb, name);
        const from = await tableChecksum(source.db as AnyDb, name, key, columns);
        const to = await tableChecksum(trx, name, key, columns);
        if (from.rows !== to.rows || from.checksum !== to.checksum) {
          throw new Error(
            `${name} differs after the move (${from.rows} rows, ${from.checksum} here; ${to.rows} rows, ${to.checksum} there): nothing was moved.`,
          );
        }
        moved.push({ table: name, rows: from.rows, checksum: from.checksum });
      }
      const during = otherStoreUsers(config.dataDir);
      if (during.length > 0)
        throw new Error(`A Herald process (pid ${during.join(', ')}) opened the store during the move: stop it and move again; nothing was moved.`);
      return moved;
    });
  } finally {
    await source.close();
    await target?.close();
  }
}
