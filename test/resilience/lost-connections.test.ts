/**
 * PostgreSQL connections cut under load (pg_terminate_backend, a database that
 * refuses connections): API requests answer 503 with a retry hint instead of
 * 500, every process stays up, the engine carries on once the store is back, and
 * every post of a drain ends published exactly once or in ERROR as designed.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { eventually, startHerald, type TestAccount, type TestHerald } from '../helpers/herald.ts';
import { startHeraldProcess, type HeraldProcess } from '../helpers/herald-process.ts';
import { ADMIN_URL, storeSuite, testStores } from '../helpers/stores.ts';
import { addWebhookChannel, entry, postBody } from '../helpers/api-fixtures.ts';
import { assertRepeatsFollowUnknown, deliveriesById, queuePosts, states } from '../helpers/drain.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../fakes/webhook-receiver.ts';
import { UNKNOWN_OUTCOME } from '../../src/scheduler/engine.ts';
import { teardown } from '../helpers/teardown.ts';

async function admin<T>(run: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

/** Ends every connection to the test's database, as a restart or an operator would. */
function cutConnections(database: string): Promise<number> {
  return admin(
    async (c) =>
      (await c.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [database])).rowCount ?? 0,
  );
}

for (const store of (await testStores()).filter((s) => s === 'postgres')) {
  describe('lost PostgreSQL connections', storeSuite(store), () => {
    let herald: TestHerald;
    let receiver: WebhookReceiver;
    let account: TestAccount;
    let database: string;
    const processes: HeraldProcess[] = [];

    before(async () => {
      receiver = await startWebhookReceiver();
      herald = await startHerald('postgres', { env: { HERALD_POSTS_PER_HOUR: '1000000', HERALD_REQUESTS_PER_MINUTE: '1000000' } });
      account = await herald.newAccount();
      database = new URL(herald.services.config.databaseUrl!).pathname.slice(1);
    });
    after(() =>
      teardown(
        () => admin((c) => c.query(`ALTER DATABASE ${database} ALLOW_CONNECTIONS true`)),
        () => Promise.all(processes.map((p) => p.stop('SIGKILL'))),
        () => herald.close(),
        () => receiver.close(),
      ),
    );

    it('a request while the database refuses connections gets 503 with Retry-After, and works once it is back', async () => {
      const channel = await addWebhookChannel(account);
      await admin((c) => c.query(`ALTER DATABASE ${database} ALLOW_CONNECTIONS false`));
      await cutConnections(database);
      const refused = await account.callUntyped(
        'POST',
        '/posts',
        postBody('schedule', [entry(channel.id, ['while the database is away'])], { date: '2031-01-01T10:00:00.000Z' }),
      );
      assert.equal(refused.status, 503, JSON.stringify(refused.body));
      assert.equal(refused.body.code, 'store_unavailable');
      assert.match(refused.headers.get('retry-after') ?? '', /^\d+$/, 'a retry hint in seconds');
      await admin((c) => c.query(`ALTER DATABASE ${database} ALLOW_CONNECTIONS true`));
      const accepted = await account.callUntyped(
        'POST',
        '/posts',
        postBody('schedule', [entry(channel.id, ['once it is back'])], { date: '2031-01-01T10:00:00.000Z' }),
      );
      assert.equal(accepted.status, 201, JSON.stringify(accepted.body));
    });

    it('every connection cut during a drain of 2,000 posts on three workers: all processes stay up, each post published once or in ERROR', async () => {
      const channel = await addWebhookChannel(account, {}, `${receiver.url}?cut`);
      receiver.respond(() => ({ delayMs: 5 }));
      const ids = await queuePosts(account, channel.id, 2_000, 'cut');
      const serve = await startHeraldProcess(herald.services.config, 'serve');
      processes.push(serve);
      for (let i = 0; i < 3; i++) processes.push(await startHeraldProcess(herald.services.config, 'worker', { HERALD_LEASE_SECONDS: '3' }));
      await Promise.all(processes.map((p) => p.running));
      const servedKey = untypedCaller(serve, account.key);

      await eventually(async () => (receiver.deliveries.length >= 200 ? true : undefined), 60_000, 'the workers to be busy');
      let cut = 0;
      for (let round = 0; round < 3; round++) {
        cut += await cutConnections(database);
        // The API server is asked while its connections are being cut: never a 500.
        const answer = await servedKey('/integrations');
        assert.ok([200, 503].includes(answer.status), `GET /integrations answered ${answer.status} ${answer.text}`);
        // The next round cuts the connections the workers open again: wait until they publish once more.
        const delivered = receiver.deliveries.length;
        await eventually(
          async () => (receiver.deliveries.length >= delivered + 20 ? true : undefined),
          60_000,
          `the workers to publish again after cut ${round + 1}`,
        );
      }
      assert.ok(cut >= 3, `connections were cut (${cut})`);

      const final = await eventually(
        async () => {
          const dead = processes.find((p) => !p.alive());
          if (dead) throw new Error(`a herald process died: ${dead.output()}`);
          const now = await states(herald, ids);
          return [...now.values()].every((s) => s.state === 'PUBLISHED' || s.state === 'ERROR') ? now : undefined;
        },
        180_000,
        'every post to leave the queue',
      );
      for (const p of processes) assert.ok(p.alive(), `a herald process died: ${p.output()}`);

      const counts = deliveriesById(receiver);
      const published = ids.filter((id) => final.get(id)!.state === 'PUBLISHED');
      const failed = ids.filter((id) => final.get(id)!.state === 'ERROR');
      // Only a post whose request had left when its worker lost the store can be in doubt.
      for (const id of failed) assert.equal(final.get(id)!.error, UNKNOWN_OUTCOME, `post ${id} failed for another reason`);
      assert.ok(failed.length <= 3 * herald.services.config.workerConcurrency, `${failed.length} in doubt, at most what three workers had in flight`);
      for (const id of published) assert.ok((counts.get(id) ?? 0) >= 1, `published post ${id} reached the receiver`);
      // A post is sent a second time (with the same webhook-id, which the receiver drops) only after an attempt of unknown outcome.
      await assertRepeatsFollowUnknown(herald, counts, ids);

      // The processes work on afterwards: the API answers and a new post goes out.
      const later = await servedKey('/integrations');
      assert.equal(later.status, 200, later.text);
      const [next] = await queuePosts(account, channel.id, 1, 'after the cuts');
      await eventually(async () => (deliveriesById(receiver).get(next) === 1 ? true : undefined), 30_000, 'a post queued after the cuts');
    });
  });
}

function untypedCaller(process: HeraldProcess, key: string) {
  return async (path: string) => {
    const response = await fetch(`${process.url}/api/public/v1${path}`, { headers: { authorization: key } });
    return { status: response.status, text: await response.text() };
  };
}
