/**
 * Which stores the suites run on: SQLite always; PostgreSQL when reachable. In
 * CI (CI=true) PostgreSQL is required, so a missing server fails the run instead
 * of silently skipping half the tests.
 */
import pg from 'pg';

export type StoreKind = 'sqlite' | 'postgres';

export const ADMIN_URL = process.env.HERALD_TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';

async function postgresReachable(): Promise<boolean> {
  const client = new pg.Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

let cached: Promise<StoreKind[]> | undefined;

export function testStores(): Promise<StoreKind[]> {
  cached ??= (async () => {
    if (await postgresReachable()) return ['sqlite', 'postgres'];
    if (process.env.CI === 'true') throw new Error(`CI=true requires PostgreSQL at ${ADMIN_URL}, but it cannot be reached`);
    console.log(`# PostgreSQL suite SKIPPED: no server at ${ADMIN_URL} (set HERALD_TEST_DATABASE_URL); running on SQLite only`);
    return ['sqlite'];
  })();
  return cached;
}

/** Creates an empty database for one test server and returns its URL and a drop function. */
export async function createTestDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `herald_t_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const client = new pg.Client({ connectionString: ADMIN_URL });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}
