import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { migrate, openStore, type Store } from '../../src/db/index.ts';
import { hotQuery } from '../../src/db/hot-query.ts';

describe('hotQuery', () => {
  let store: Store;
  let dir: string;
  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-hot-'));
    store = openStore({ dataDir: dir });
    await migrate(store);
    await store.db
      .insertInto('accounts')
      .values([
        { id: 'a', name: 'Ann', created_at: 1 },
        { id: 'b', name: 'Bob', created_at: 2 },
      ])
      .execute();
  });
  after(async () => {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('binds new values on every run, keeping the literal ones', async () => {
    const named = hotQuery<{ name: string }, { id: string }>(store.db, ['name'], (p) =>
      store.db.selectFrom('accounts').select('id').where('name', '=', p.name).where('created_at', '>', 0),
    );
    assert.deepEqual(await named({ name: 'Bob' }), [{ id: 'b' }]);
    assert.deepEqual(await named({ name: 'Ann' }), [{ id: 'a' }]);
    assert.deepEqual(await named({ name: 'Nobody' }), []);
  });

  it('refuses a placeholder the query does not use', () => {
    assert.throws(
      () => hotQuery<{ name: string }, unknown>(store.db, ['name'], () => store.db.selectFrom('accounts').select('id')),
      /placeholder name is not used/,
    );
  });
});
