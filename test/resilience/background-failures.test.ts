/**
 * A write that fails in the background (the per-key request counter's periodic
 * sync) must not end the process. The store is made to refuse those writes the
 * way a full disk does (SQLite answers "database or disk is full"), and a real
 * `herald serve` must stay up, keep answering, log the failure, and write the
 * counts it kept once the store takes writes again.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { caller, eventually, startHerald, type TestHerald } from '../helpers/herald.ts';
import { startHeraldProcess, type HeraldProcess } from '../helpers/herald-process.ts';
import { teardown } from '../helpers/teardown.ts';

describe('a background write that fails (sqlite)', () => {
  let herald: TestHerald;
  let serve: HeraldProcess;
  let key: string;

  before(async () => {
    herald = await startHerald('sqlite');
    ({ key } = await herald.newAccount());
    serve = await startHeraldProcess(herald.services.config, 'serve');
    await serve.running;
  });
  after(() =>
    teardown(
      () => serve.stop('SIGKILL'),
      () => herald.close(),
    ),
  );

  it('is logged, the process stays up, and the counts are written once the store takes writes again', async () => {
    const db = herald.services.store.db;
    for (const event of ['INSERT', 'UPDATE']) {
      await sql
        .raw(`CREATE TRIGGER disk_full_${event.toLowerCase()} BEFORE ${event} ON rate_counters BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END`)
        .execute(db);
    }
    const call = caller(`${serve.url}/api/public/v1`, key);
    for (let i = 0; i < 5; i++) assert.equal((await call('GET', '/integrations')).status, 200, 'reads are answered while writes fail');
    await eventually(async () => (serve.output().includes('rate limits: could not write') ? true : undefined), 10_000, 'the failed sync to be logged');
    assert.ok(serve.alive(), `herald serve is still running; it wrote: ${serve.output()}`);
    assert.equal((await call('GET', '/integrations')).status, 200, 'still answering after the failed sync');

    for (const event of ['insert', 'update']) await sql.raw(`DROP TRIGGER disk_full_${event}`).execute(db);
    // Six requests were counted while the writes failed; none of them is lost.
    const written = await eventually(
      async () => {
        const rows = await db.selectFrom('rate_counters').select(['bucket', 'count']).execute();
        const total = rows.reduce((sum, r) => sum + r.count, 0);
        return total >= 6 ? total : undefined;
      },
      20_000,
      'the kept counts to be written',
    );
    assert.equal(written, 6, 'every request counted exactly once');
    assert.ok(serve.alive(), 'herald serve is still running');
  });
});
