import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { eventually, startHerald, type TestHerald } from '../helpers/herald.ts';
import { testStores, storeSuite } from '../helpers/stores.ts';
import { teardown } from '../helpers/teardown.ts';

const ready = async (herald: TestHerald) => {
  const response = await fetch(`${herald.url}/api/ready`);
  return { status: response.status, body: (await response.json()) as { status: string; checks: Record<string, string> } };
};

for (const store of await testStores()) {
  describe(`readiness (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let apiOnly: TestHerald;

    before(async () => {
      herald = await startHerald(store, { engine: { pollMs: 100 } });
      apiOnly = await startHerald(store);
    });
    after(() =>
      teardown(
        () => herald?.close(),
        () => apiOnly?.close(),
      ),
    );

    it('is ready when the store answers, its schema is current, its secret opens the store, the disk has room and the engine looks at its queue', async () => {
      await eventually(async () => ((herald.services.localEngine.looked()?.at ?? 0) > 0 ? true : undefined), 5_000, 'the engine to look at its queue');
      assert.deepEqual(await ready(herald), {
        status: 200,
        body: { status: 'ready', checks: { store: 'ok', migrations: 'ok', secret: 'ok', disk: 'ok', engine: 'ok' } },
      });
      assert.deepEqual((await ready(apiOnly)).body.checks.engine, 'not running here');
      assert.equal((await ready(apiOnly)).status, 200);
    });

    it('is not ready while a migration is not applied, naming it and what to run', async () => {
      const { db } = apiOnly.services.store;
      const last = await db
        .selectFrom('kysely_migration' as never)
        .select('name' as never)
        .orderBy('name' as never, 'desc')
        .executeTakeFirstOrThrow();
      await db
        .deleteFrom('kysely_migration' as never)
        .where('name' as never, '=', (last as { name: string }).name as never)
        .execute();
      const answer = await ready(apiOnly);
      assert.equal(answer.status, 503);
      assert.equal(answer.body.status, 'not ready');
      assert.match(answer.body.checks.migrations, new RegExp(`1 migration\\(s\\) not applied \\(${(last as { name: string }).name}\\): run "herald migrate"`));
      assert.equal((await fetch(`${apiOnly.url}/api/health`)).status, 200, 'still alive');
    });

    it('is not ready when the engine of this process stopped looking at the queue', async (t) => {
      const engine = herald.services.localEngine;
      const looked = engine.looked()!;
      const stale = t.mock.method(engine, 'looked', () => ({ ...looked, at: Date.now() - 60_000 }));
      const answer = await ready(herald);
      stale.mock.restore();
      assert.equal(answer.status, 503);
      assert.match(answer.body.checks.engine, /last looked at the queue 60 s ago/);
    });
  });
}
