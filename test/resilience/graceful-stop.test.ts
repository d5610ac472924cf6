/**
 * SIGTERM in the middle of a drain: the worker stops claiming, gives the
 * publishes already sent HERALD_SHUTDOWN_SECONDS, exits cleanly, and leaves
 * everything it had not sent in the queue for the next worker, never marked
 * "may have been published".
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { eventually, startHerald, type TestAccount, type TestHerald } from '../helpers/herald.ts';
import { startHeraldProcess, type HeraldProcess } from '../helpers/herald-process.ts';
import { testStores, storeSuite } from '../helpers/stores.ts';
import { addWebhookChannel } from '../helpers/api-fixtures.ts';
import { deliveriesById, queuePosts, states } from '../helpers/drain.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../fakes/webhook-receiver.ts';
import { UNKNOWN_OUTCOME } from '../../src/scheduler/engine.ts';

const CONCURRENCY = 8;

for (const store of await testStores()) {
  describe(`a worker told to stop during a drain (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let receiver: WebhookReceiver;
    let account: TestAccount;
    const processes: HeraldProcess[] = [];

    before(async () => {
      receiver = await startWebhookReceiver();
      herald = await startHerald(store, { env: { HERALD_POSTS_PER_HOUR: '1000000', HERALD_REQUESTS_PER_MINUTE: '1000000' } });
      account = await herald.newAccount();
    });
    after(async () => {
      await Promise.all(processes.map((p) => p.stop('SIGKILL')));
      await herald.close();
      await receiver.close();
    });

    it('exits within HERALD_SHUTDOWN_SECONDS although a receiver hangs, and the next worker sends what it had not sent', async () => {
      const channel = await addWebhookChannel(account, {}, `${receiver.url}?stop`);
      const ids = await queuePosts(account, channel.id, 100, 'stop');
      // The receiver holds every request of the first worker far longer than the stop may take.
      let hanging = true;
      receiver.respond(() => (hanging ? { delayMs: 60_000 } : undefined));
      const env = { HERALD_WORKER_CONCURRENCY: String(CONCURRENCY), HERALD_SHUTDOWN_SECONDS: '1', HERALD_LEASE_SECONDS: '4' };
      const first = await startHeraldProcess(herald.services.config, 'worker', env);
      processes.push(first);
      await first.running;
      await eventually(async () => (receiver.deliveries.length >= CONCURRENCY ? true : undefined), 30_000, 'the first worker to have requests in flight');

      const code = await Promise.race([first.stop('SIGTERM'), new Promise((resolve) => setTimeout(() => resolve('still running'), 20_000))]);
      assert.equal(code, 0, `the worker exited cleanly, without waiting for the hanging requests: ${first.output()}`);
      const sentBeforeStop = new Set(deliveriesById(receiver).keys());
      assert.equal(sentBeforeStop.size, CONCURRENCY, 'no new claims once told to stop');

      const afterStop = await states(herald, ids);
      const leased = await herald.services.store.db
        .selectFrom('posts')
        .select('id')
        .where('id', 'in', ids)
        .where('state', '=', 'QUEUE')
        .where('lease_owner', 'is not', null)
        .execute();
      const notSent = ids.filter((id) => !sentBeforeStop.has(id));
      assert.deepEqual(
        leased.map((r) => r.id).filter((id) => notSent.includes(id)),
        [],
        'what was not sent holds no claim',
      );
      assert.deepEqual(
        notSent.filter((id) => afterStop.get(id)!.state !== 'QUEUE'),
        [],
        'what was not sent is still queued',
      );

      hanging = false;
      processes.push(await startHeraldProcess(herald.services.config, 'worker', { HERALD_LEASE_SECONDS: '2' }));
      const final = await eventually(
        async () => {
          const now = await states(herald, ids);
          return [...now.values()].every((s) => s.state !== 'QUEUE') ? now : undefined;
        },
        60_000,
        'every post to leave the queue',
      );
      for (const id of notSent)
        assert.equal(final.get(id)!.state, 'PUBLISHED', `post ${id}, never sent before the stop, was published (${final.get(id)!.error})`);
      for (const id of sentBeforeStop) {
        // Sent and never answered: only these may be in doubt.
        const { state, error } = final.get(id)!;
        assert.ok(state === 'PUBLISHED' || error === UNKNOWN_OUTCOME, `post ${id}: ${state} ${error}`);
      }
      const counts = deliveriesById(receiver);
      for (const id of notSent) assert.equal(counts.get(id), 1, `post ${id} delivered once`);
    });
  });
}
