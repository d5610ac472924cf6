/**
 * A publish that outlasts its lease (a long upload, a slow receiver) keeps its
 * claim: the worker renews it while it works, so a second worker never takes
 * the post and sends it again.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { eventually, startHerald, type TestAccount, type TestHerald } from '../helpers/herald.ts';
import { storeSuite, testStores } from '../helpers/stores.ts';
import { addWebhookChannel, createPosts, entry, postBody } from '../helpers/api-fixtures.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../fakes/webhook-receiver.ts';

const LEASE_MS = 1_000;

for (const store of await testStores()) {
  describe(`a publish longer than the lease (${store})`, storeSuite(store), () => {
    let first: TestHerald;
    let second: TestHerald;
    let receiver: WebhookReceiver;
    let account: TestAccount;

    before(async () => {
      receiver = await startWebhookReceiver();
      first = await startHerald(store, { engine: { leaseMs: LEASE_MS, pollMs: 50 } });
      // A second worker on the same store, watching the same queue.
      second = await startHerald(store, { engine: { leaseMs: LEASE_MS, pollMs: 50 }, databaseUrl: first.services.config.databaseUrl, dataDir: first.dataDir });
      account = await first.newAccount();
    });
    after(async () => {
      await second.close();
      await first.close();
      await receiver.close();
    });

    it('keeps its claim: one delivery, one attempt, although the receiver takes four leases to answer', async () => {
      receiver.respond(() => ({ delayMs: 4 * LEASE_MS }));
      const channel = await addWebhookChannel(account, {}, `${receiver.url}?slow`);
      const [created] = await createPosts(account, postBody('now', [entry(channel.id, ['takes its time'])]));
      const post = await eventually(
        async () => {
          const p = (await account.call('GET', `/posts/${created.postId}`)).body;
          return p.state === 'PUBLISHED' || p.state === 'ERROR' ? p : undefined;
        },
        30_000,
        'the slow publish to end',
      );
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      assert.equal(receiver.deliveries.filter((d) => d.path.endsWith('?slow')).length, 1, 'delivered once: no second worker took the post');
      assert.deepEqual(
        post.thread[0].attempts.map((a: { outcome: string }) => a.outcome),
        ['published'],
        'one attempt',
      );
    });
  });
}
