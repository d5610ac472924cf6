/**
 * Which stores the suites run on: SQLite always; PostgreSQL when reachable. In
 * CI (CI=true) PostgreSQL is required, so a missing server fails the run instead
 * of silently skipping half the tests.
 */
import pg from 'pg';

export type StoreKind = 'sqlite' | 'postgres';

export const ADMIN_URL = process.env.HERALD_TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';

/** Whether the server answers; a loaded machine (two test files and their Heralds at once) may take seconds to, so it is asked three times. */
async function postgresReachable(): Promise<boolean> {
  for (let attempt = 1; attempt <= 3; attempt++) {
    const client = new pg.Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: 5_000 });
    try {
      await client.connect();
      await client.query('SELECT 1');
      return true;
    } catch {
      if (attempt < 3) await new Promise((r) => setTimeout(r, 1_000));
    } finally {
      await client.end().catch(() => {});
    }
  }
  return false;
}

let cached: Promise<StoreKind[]> | undefined;
let postgresMissing = false;

/**
 * Both stores, always: without a reachable server (outside CI) the PostgreSQL
 * suites are registered skipped (see storeSuite), so the run says how many
 * tests it did not run instead of leaving them out silently.
 */
export function testStores(): Promise<StoreKind[]> {
  cached ??= (async () => {
    if (!(await postgresReachable())) {
      if (process.env.CI === 'true') throw new Error(`CI=true requires PostgreSQL at ${ADMIN_URL}, but it cannot be reached`);
      postgresMissing = true;
    }
    return ['sqlite', 'postgres'];
  })();
  return cached;
}

/** The options of a store's suite: skipped, saying why, when it is PostgreSQL's and no server is reachable. */
export function storeSuite(store: StoreKind): { skip: string | false } {
  return { skip: store === 'postgres' && postgresMissing ? `PostgreSQL not reachable at ${ADMIN_URL} (set HERALD_TEST_DATABASE_URL)` : false };
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
