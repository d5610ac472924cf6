import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { connectionWatcher } from '../../src/db/changes.ts';

/** Runs statements through one connection's watcher and returns how many changes it signalled. */
function signalsFor(statements: string[]): number {
  let signals = 0;
  const watch = connectionWatcher({ changed: () => void signals++ });
  for (const sql of statements) watch(sql);
  return signals;
}

describe('which statements signal a change to the read caches', () => {
  it('writes to the watched tables, as Kysely and hand-written SQL spell them', () => {
    for (const sql of [
      'insert into "channels" ("id", "name") values (?, ?)',
      'update "api_keys" set "revoked_at" = ? where "id" = ?',
      'delete from "customers" where "id" = $1',
      'INSERT OR REPLACE INTO accounts(id) VALUES (1)',
      'UPDATE channels SET name = $1 WHERE id = $2',
      'update "webhooks" set "disabled" = ? where "id" = ? returning *',
    ]) {
      assert.equal(signalsFor([sql]), 1, sql);
    }
  });

  it('reads, other tables, and tables whose name only starts like a watched one do not', () => {
    for (const sql of [
      'select * from "channels" where "account_id" = ?',
      'update "posts" set "state" = ? where "id" = ?',
      'insert into "webhook_deliveries" ("id") values (?)',
      'insert into "channels_archive" ("id") values (?)',
      'select "id" from "posts" where "lease_until" < $1 for update skip locked',
      'insert into "rate_counters" ("bucket") values (?) on conflict ("bucket") do update set "count" = "rate_counters"."count" + 1',
    ]) {
      assert.equal(signalsFor([sql]), 0, sql);
    }
  });

  it('a write inside a transaction signals once, when the transaction ends', () => {
    let signals = 0;
    const watch = connectionWatcher({ changed: () => void signals++ });
    watch('begin');
    watch('update "channels" set "name" = ? where "id" = ?');
    watch('delete from "customers" where "id" = ?');
    assert.equal(signals, 0, 'nothing is signalled before the commit');
    watch('commit');
    assert.equal(signals, 1);
    watch('begin');
    watch('update "posts" set "state" = ?');
    watch('commit');
    assert.equal(signals, 1, 'a transaction without watched writes signals nothing');
  });

  it('a savepoint rolled back to does not end the transaction; the rollback of the whole does', () => {
    assert.equal(signalsFor(['begin', 'savepoint a', 'update "channels" set "name" = ?', 'rollback to savepoint a', 'release savepoint a']), 0);
    assert.equal(signalsFor(['begin', 'update "channels" set "name" = ?', 'rollback']), 1);
  });
});
