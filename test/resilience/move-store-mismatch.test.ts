/**
 * `herald move-store` refuses a copy that does not match its source: each table's
 * rows and checksum are computed on both sides, and any difference fails the move
 * (README, "Running on PostgreSQL"). The copy is made to differ without touching
 * Herald's code: the target database gets a trigger that changes, or drops, one
 * row on its way in, as a faulty disk, proxy or extension might.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { startHerald } from '../helpers/herald.ts';
import { createTestDatabase, storeSuite, testStores } from '../helpers/stores.ts';
import { addWebhookChannel, createPosts, entry, postBody } from '../helpers/api-fixtures.ts';
import { runHerald } from '../cli/run-herald.ts';
import { migrate, openStore } from '../../src/db/index.ts';
import { sqliteContents } from './sqlite-contents.ts';

const SECRET = 'test-secret-2f9c4e7a1b3d5f8e0a6c9b2d4f7e1a3c';
/** The row the target's trigger gets at. */
const MARKED = 'the row the target alters';

/** A target database with Herald's schema, and a trigger that meddles with the marked post as it is copied in. */
async function meddlingTarget(body: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const target = await createTestDatabase();
  const store = openStore({ databaseUrl: target.url, dataDir: fs.mkdtempSync(path.join(os.tmpdir(), 'herald-move-target-')) });
  try {
    await migrate(store);
  } finally {
    await store.close();
  }
  const client = new pg.Client({ connectionString: target.url });
  await client.connect();
  try {
    await client.query(`CREATE FUNCTION meddle() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN ${body} END $$`);
    await client.query('CREATE TRIGGER meddle BEFORE INSERT ON posts FOR EACH ROW EXECUTE FUNCTION meddle()');
  } finally {
    await client.end();
  }
  return target;
}

/** Rows per table of the target (Herald's tables, not the migrations' bookkeeping). */
async function rowsIn(url: string): Promise<Record<string, number>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const tables = await client.query<{ name: string }>(
      "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' AND table_name NOT LIKE 'kysely_%' ORDER BY table_name",
    );
    const counts: Record<string, number> = {};
    for (const { name } of tables.rows) counts[name] = Number((await client.query(`SELECT COUNT(*) AS n FROM "${name}"`)).rows[0].n);
    return counts;
  } finally {
    await client.end();
  }
}

await testStores();

describe('move-store refuses a copy that does not match', storeSuite('postgres'), () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-move-mismatch-'));
  const file = path.join(dataDir, 'herald.db');
  const targets: { drop: () => Promise<void> }[] = [];

  before(async () => {
    // An embedded store with an account, a channel and a few posts; then every Herald on it stops.
    const embedded = await startHerald('sqlite', { dataDir });
    try {
      const account = await embedded.newAccount();
      const channel = await addWebhookChannel(account);
      for (const content of ['a post that moves as it is', MARKED, 'another post that moves as it is']) {
        await createPosts(account, postBody('draft', [entry(channel.id, [content])]));
      }
    } finally {
      await embedded.close();
    }
  });
  after(async () => {
    for (const target of targets) await target.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  for (const { name, trigger, differs } of [
    {
      name: 'a row changed on its way in',
      trigger: `IF NEW.content = '${MARKED}' THEN NEW.content := NEW.content || ' (changed)'; END IF; RETURN NEW;`,
      differs: /^herald: posts differs after the move \(3 rows, [0-9a-f]{16} here; 3 rows, [0-9a-f]{16} there\)/m,
    },
    {
      name: 'a row lost on its way in',
      trigger: `IF NEW.content = '${MARKED}' THEN RETURN NULL; END IF; RETURN NEW;`,
      differs: /^herald: posts differs after the move \(3 rows, [0-9a-f]{16} here; 2 rows, [0-9a-f]{16} there\)/m,
    },
  ]) {
    it(`${name}: the move fails naming the table, the source is untouched and the target holds nothing`, async () => {
      const target = await meddlingTarget(trigger);
      targets.push(target);
      const source = sqliteContents(file);

      const moved = await runHerald(['move-store', '--to', target.url], { HERALD_DATA_DIR: dataDir, HERALD_SECRET: SECRET });
      assert.equal(moved.code, 1, `the move must fail:\n${moved.stdout}\n${moved.stderr}`);
      assert.match(moved.stderr, differs);
      assert.doesNotMatch(moved.stdout, /Moved \d+ rows|same on both sides/, 'no table is reported as moved');
      assert.equal(sqliteContents(file), source, 'the embedded store is only read');

      // "copies every table ... in one transaction ... any difference fails the move": nothing of it stays behind.
      const left = Object.entries(await rowsIn(target.url)).filter(([, n]) => n > 0);
      assert.deepEqual(left, [], 'the refused copy is rolled back: the target is as empty as it was');
    });
  }
});
