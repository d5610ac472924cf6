import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { connectionWatcher, fileChangeSignal, tables, type Tables } from '../../src/db/changes.ts';

/** Runs statements through one connection's watcher and returns the table sets it signalled. */
function signalsFor(statements: string[]): Tables[] {
  const signals: Tables[] = [];
  const watch = connectionWatcher({ changed: (set) => void signals.push(set) });
  for (const sql of statements) watch(sql, 1);
  return signals;
}

describe('which statements signal a change to the read caches', () => {
  it('writes to the watched tables, as Kysely and hand-written SQL spell them, name their table', () => {
    for (const [sql, table] of [
      ['insert into "channels" ("id", "name") values (?, ?)', 'channels'],
      ['update "api_keys" set "revoked_at" = ? where "id" = ?', 'api_keys'],
      ['delete from "customers" where "id" = $1', 'customers'],
      ['INSERT OR REPLACE INTO accounts(id) VALUES (1)', 'accounts'],
      ['UPDATE channels SET name = $1 WHERE id = $2', 'channels'],
      ['update "webhooks" set "disabled" = ? where "id" = ? returning *', 'webhooks'],
      ['update "posts" set "state" = ? where "id" = ?', 'posts'],
      ['\n    UPDATE posts SET lease_owner = $1 WHERE id IN (SELECT p.id FROM posts p)', 'posts'],
    ] as const) {
      assert.deepEqual(signalsFor([sql]), [tables(table)], sql);
    }
  });

  it('a statement writing two tables names both', () => {
    assert.deepEqual(
      signalsFor([
        'with gone as (delete from "channels" where "id" = $1 returning "id") ' +
          'update "posts" set "deleted_at" = $2 where "channel_id" in (select "id" from gone)',
      ]),
      [tables('channels', 'posts')],
    );
  });

  it('reads, other tables, and tables whose name only starts like a watched one do not', () => {
    for (const sql of [
      'select * from "channels" where "account_id" = ?',
      'insert into "webhook_deliveries" ("id") values (?)',
      'insert into "channels_archive" ("id") values (?)',
      'insert into "post_attempts" ("id") values (?)',
      'select "id" from "posts" where "lease_until" < $1 for update skip locked',
      'insert into "rate_counters" ("bucket") values (?) on conflict ("bucket") do update set "count" = "rate_counters"."count" + 1',
    ]) {
      assert.deepEqual(signalsFor([sql]), [], sql);
    }
  });

  it('writes inside a transaction signal once, when the transaction ends, naming every table written', () => {
    const signals: Tables[] = [];
    const watch = connectionWatcher({ changed: (set) => void signals.push(set) });
    watch('begin', 0);
    watch('update "channels" set "name" = ? where "id" = ?', 1);
    watch('delete from "customers" where "id" = ?', 1);
    assert.deepEqual(signals, [], 'nothing is signalled before the commit');
    watch('commit', 0);
    assert.deepEqual(signals, [tables('channels', 'customers')]);
    watch('begin', 0);
    watch('insert into "post_attempts" ("id") values (?)', 1);
    watch('commit', 0);
    assert.equal(signals.length, 1, 'a transaction without watched writes signals nothing');
  });

  it('a write that changed no row signals nothing, alone or in a transaction', () => {
    const signals: Tables[] = [];
    const watch = connectionWatcher({ changed: (set) => void signals.push(set) });
    watch('update "posts" set "lease_owner" = ? where "lease_until" < ?', 0);
    watch('begin', 0);
    watch('update "posts" set "state" = ? where "id" = ?', 0);
    watch('commit', 0);
    assert.deepEqual(signals, []);
  });

  it('a savepoint rolled back to does not end the transaction; the rollback of the whole does', () => {
    assert.deepEqual(signalsFor(['begin', 'savepoint a', 'update "channels" set "name" = ?', 'rollback to savepoint a', 'release savepoint a']), []);
    assert.deepEqual(signalsFor(['begin', 'update "channels" set "name" = ?', 'rollback']), [tables('channels')]);
  });
});

/** Another process's change is seen from the next turn of the event loop on. */
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('the SQLite change file, shared by processes', () => {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-changes-'));
  after(() => fs.rmSync(folder, { recursive: true, force: true }));

  it('a change moves the generation of the tables it names, and only theirs, in every process', async () => {
    const database = path.join(folder, 'a.db');
    // Two signals on one file stand for two processes.
    const writer = fileChangeSignal(database);
    const reader = fileChangeSignal(database);
    const posts = tables('posts');
    const keys = tables('api_keys', 'accounts');
    const [postsBefore, keysBefore] = [reader.generation(posts), reader.generation(keys)];
    writer.changed(tables('posts', 'channels'));
    await nextTurn();
    assert.notEqual(reader.generation(posts), postsBefore);
    assert.equal(reader.generation(keys), keysBefore, 'API keys did not change');
    writer.changed(tables('accounts'));
    await nextTurn();
    assert.notEqual(reader.generation(keys), keysBefore);
    const own = reader.generation(keys);
    reader.changed(tables('api_keys'));
    assert.notEqual(reader.generation(keys), own, "a process's own change counts at once");
    await Promise.all([writer.close(), reader.close()]);
    assert.equal(reader.generation(posts), undefined, 'a closed signal follows nothing');
  });

  it("an older Herald's record, which names no table, counts for every table", async () => {
    const database = path.join(folder, 'b.db');
    const reader = fileChangeSignal(database);
    const before = reader.generation(tables('webhooks'));
    fs.appendFileSync(`${database}-changes`, '.');
    await nextTurn();
    assert.notEqual(reader.generation(tables('webhooks')), before);
    await reader.close();
  });
});
