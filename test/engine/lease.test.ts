/**
 * A publish that outlasts its lease (a long upload, a slow receiver) keeps its
 * claim: the worker renews it while it works, so a second worker never takes
 * the post and sends it again. Only renewals that stall (a frozen process) can
 * lose it, and then the worker that takes the post over finds the attempt that
 * may have gone out. The receiver answers when the test has seen what it waits
 * for, not after a time, and the lease leaves renewals (a third of it) seconds
 * to spare: a busy machine slows the test down, it does not change its outcome.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { renewLease } from '../../src/domain/posts/post-queue.ts';
import { eventually, startHerald, type TestAccount, type TestHerald } from '../helpers/herald.ts';
import { storeSuite, testStores } from '../helpers/stores.ts';
import { addWebhookChannel, createPosts, entry, postBody } from '../helpers/api-fixtures.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../fakes/webhook-receiver.ts';

const LEASE_MS = 6_000;
/** What the tests wait for takes about a lease; this only turns a hang into a failure. */
const WAIT_MS = 20 * LEASE_MS;

for (const store of await testStores()) {
  describe(`a publish longer than the lease (${store})`, storeSuite(store), () => {
    let first: TestHerald;
    let second: TestHerald;
    let receiver: WebhookReceiver;
    let account: TestAccount;
    /** Claims whose renewals are held back, as if their worker had frozen. */
    const stalled = new Set<string>();
    const engine = (herald: () => TestHerald) => ({
      leaseMs: LEASE_MS,
      pollMs: 50,
      renewLease: async (item: { id: string; lease_owner: string | null }, leaseMs: number) => {
        if (!stalled.has(item.lease_owner ?? '')) await renewLease(herald().services.store.db, item, leaseMs);
      },
    });
    /** Answers the receiver holds until the test releases them (all of them when the suite ends, so that closing does not wait). */
    const releases: (() => void)[] = [];
    const hold = () => {
      let release!: () => void;
      const answer = new Promise<void>((resolve) => (release = resolve));
      releases.push(release);
      return { answer, release };
    };

    before(async () => {
      receiver = await startWebhookReceiver();
      first = await startHerald(store, { engine: engine(() => first) });
      // A second worker on the same store, watching the same queue.
      second = await startHerald(store, { engine: engine(() => second), databaseUrl: first.services.config.databaseUrl, dataDir: first.dataDir });
      account = await first.newAccount();
    });
    after(async () => {
      for (const release of releases) release();
      await second.close();
      await first.close();
      await receiver.close();
    });

    const deliveries = (path: string) => receiver.deliveries.filter((d) => d.path.endsWith(path));
    const claimOf = (id: string) =>
      first.services.store.db.selectFrom('posts').select(['state', 'lease_owner', 'lease_until']).where('id', '=', id).executeTakeFirstOrThrow();
    const attemptsOf = (id: string) =>
      first.services.store.db.selectFrom('post_attempts').select(['outcome', 'finished_at']).where('post_id', '=', id).orderBy('started_at').execute();

    /** Once `herald`'s engine has finished a look at the queue that began after `at`: its claim saw the queue as it was then. */
    async function lookedAfter(herald: TestHerald, at: number): Promise<void> {
      const looked = () => herald.services.localEngine.looked()?.at ?? 0;
      const began = await eventually(async () => (looked() > at ? looked() : undefined), WAIT_MS, 'a look at the queue after the lease would have ended');
      // Looks do not overlap: the next one begins after this one's claim.
      await eventually(async () => (looked() > began ? true : undefined), WAIT_MS, 'that look to end');
    }

    it('keeps its claim while it renews it: one delivery, one attempt, although both workers looked after the lease would have ended', async () => {
      const { answer, release } = hold();
      receiver.respond((d) => (d.path.endsWith('?slow') ? { until: answer } : undefined));
      const channel = await addWebhookChannel(account, {}, `${receiver.url}?slow`);
      const [created] = await createPosts(account, postBody('now', [entry(channel.id, ['takes its time'])]));
      await eventually(async () => (deliveries('?slow').length > 0 ? true : undefined), WAIT_MS, 'the delivery');
      // The request is out: the claim's lease ends no later than this unless it is renewed.
      const claimed = Number((await claimOf(created.postId)).lease_until);
      await Promise.all([lookedAfter(first, claimed), lookedAfter(second, claimed)]);
      assert.ok(Number((await claimOf(created.postId)).lease_until) > claimed, 'the lease was renewed');
      release();

      const post = await eventually(
        async () => {
          const p = (await account.callUntyped('GET', `/posts/${created.postId}`)).body;
          return p.state === 'PUBLISHED' || p.state === 'ERROR' ? p : undefined;
        },
        WAIT_MS,
        'the slow publish to end',
      );
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      assert.equal(deliveries('?slow').length, 1, 'delivered once: no second worker took the post');
      assert.deepEqual(
        post.thread[0].attempts.map((a: { outcome: string }) => a.outcome),
        ['published'],
        'one attempt',
      );
    });

    it('renewals that stall lose the claim: the worker taking the post over finds the attempt that may have gone out, and repeats it only as the same delivery', async () => {
      const { answer, release } = hold();
      const hook = await account.callUntyped('POST', '/webhooks', { url: `${receiver.url}/events`, events: ['post.published'] });
      assert.equal(hook.status, 201, JSON.stringify(hook.body));
      // The first delivery waits for the test; the takeover's is answered at once.
      receiver.respond((d) => (d.path.endsWith('?stall') && deliveries('?stall').length === 1 ? { until: answer } : undefined));
      const channel = await addWebhookChannel(account, {}, `${receiver.url}?stall`);
      const [created] = await createPosts(account, postBody('now', [entry(channel.id, ['its worker freezes'])]));
      await eventually(async () => (deliveries('?stall').length > 0 ? true : undefined), WAIT_MS, 'the delivery');
      const { lease_owner } = await claimOf(created.postId);
      // The request is out and its worker stops renewing: the lease runs out, and a worker looking at the queue takes the post.
      stalled.add(lease_owner!);

      const [sent, again] = await eventually(
        async () => (deliveries('?stall').length > 1 ? deliveries('?stall') : undefined),
        WAIT_MS,
        'a worker to take the post over',
      );
      assert.notEqual((await claimOf(created.postId)).lease_owner, lease_owner, 'held by another claim now');
      assert.equal(again.headers['webhook-id'], sent.headers['webhook-id'], 'sent again as the same delivery, which receivers drop: not a new post');
      const [earlier] = await attemptsOf(created.postId);
      assert.equal(earlier.outcome, 'unknown', 'the first attempt was found unfinished: it may have been published');

      // The frozen worker's request is answered after all: the post is published, and nothing more is sent.
      release();
      await eventually(
        async () => {
          const attempts = await attemptsOf(created.postId);
          const idle = first.services.localEngine.inHand() + second.services.localEngine.inHand() === 0;
          return idle && attempts.every((a) => a.finished_at !== null) && (await claimOf(created.postId)).state === 'PUBLISHED' ? true : undefined;
        },
        WAIT_MS,
        'both workers to finish',
      );
      assert.equal(deliveries('?stall').length, 2);
      const announced = await first.services.store.db
        .selectFrom('webhook_deliveries')
        .select('payload')
        .where('webhook_id', '=', hook.body.id)
        .where('event_type', '=', 'post.published')
        .execute();
      assert.equal(
        announced.filter((row) => row.payload.includes(created.postId)).length,
        1,
        'announced as published once, not again when the frozen worker finished',
      );
    });
  });
}
