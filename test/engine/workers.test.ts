/**
 * Workers as separate processes (`herald worker`), the way a deployment runs
 * them: one killed with SIGKILL in the middle of its work, and three sharing one
 * PostgreSQL queue. The receiver counts deliveries by webhook-id (the post item's
 * id), so a post sent twice cannot hide.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { eventually, startHerald, type TestAccount, type TestHerald } from '../helpers/herald.ts';
import { testStores, storeSuite } from '../helpers/stores.ts';
import { assertRepeatsFollowUnknown, deliveriesById, queuePosts, states } from '../helpers/drain.ts';
import { startHeraldProcess, type HeraldProcess } from '../helpers/herald-process.ts';
import { addWebhookChannel, createPosts, entry, postBody } from '../helpers/api-fixtures.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../fakes/webhook-receiver.ts';
import { teardown } from '../helpers/teardown.ts';

const LEASE_SECONDS = 3;

function startWorker(herald: TestHerald): Promise<HeraldProcess> {
  return startHeraldProcess(herald.services.config, 'worker', { HERALD_LEASE_SECONDS: String(LEASE_SECONDS) });
}

for (const store of await testStores()) {
  describe(`workers in their own processes (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let receiver: WebhookReceiver;
    let account: TestAccount;
    const workers: HeraldProcess[] = [];

    before(async () => {
      receiver = await startWebhookReceiver();
      // The receiver takes a little time, as real ones do, so a kill finds posts in flight.
      receiver.respond(() => ({ delayMs: 5 }));
      herald = await startHerald(store, { env: { HERALD_POSTS_PER_HOUR: '1000000', HERALD_REQUESTS_PER_MINUTE: '1000000' } });
      account = await herald.newAccount();
    });
    after(() =>
      teardown(
        () => Promise.all(workers.map((w) => w.stop('SIGKILL'))),
        () => herald.close(),
        () => receiver.close(),
      ),
    );

    it('a worker with nothing to do stays up and publishes what is queued later', async () => {
      const channel = await addWebhookChannel(account, {}, `${receiver.url}?later`);
      const worker = await startWorker(herald);
      workers.push(worker);
      await worker.running;
      const [created] = await createPosts(
        account,
        postBody('schedule', [entry(channel.id, ['queued after the worker started'])], { date: new Date(Date.now() + 1_500).toISOString() }),
      );
      await eventually(async () => (receiver.deliveries.some((d) => d.headers['webhook-id'] === created.postId) ? true : undefined), 20_000, 'the later post');
      assert.ok(worker.alive(), 'the worker is still running');
      await worker.stop();
    });

    it(
      'kill -9 in the middle of 800 posts: another worker finishes; every post published, ' +
        'only those in flight sent again (the receiver drops the repeat), one post.published event each',
      async () => {
        const channel = await addWebhookChannel(account, {}, `${receiver.url}?crash`);
        // An account webhook hears of every publish: the event is part of the change, so a kill loses none.
        const hook = await account.call('POST', '/webhooks', { url: `${receiver.url}?events`, events: ['post.published'] });
        assert.equal(hook.status, 201, JSON.stringify(hook.body));
        const ids = await queuePosts(account, channel.id, 800, 'crash');
        await Promise.all(workers.splice(0).map((w) => w.stop()));
        const first = await startWorker(herald);
        workers.push(first);
        await eventually(async () => (receiver.deliveries.length >= 150 ? true : undefined), 60_000, 'the first worker to be busy');
        await first.stop('SIGKILL');
        const deliveredBeforeKill = receiver.deliveries.length;
        assert.ok(deliveredBeforeKill < 800, 'killed in the middle');

        workers.push(await startWorker(herald));
        const final = await eventually(
          async () => {
            const now = await states(herald, ids);
            return [...now.values()].some((s) => s.state === 'QUEUE') ? undefined : now;
          },
          120_000,
          'every post to leave the queue',
        );

        const counts = deliveriesById(receiver);
        const published = ids.filter((id) => final.get(id)!.state === 'PUBLISHED');
        // A webhook receiver drops a repeated webhook-id, so what the killed worker had in flight is
        // sent again rather than left "in doubt": every post is published, and reaches the receiver.
        assert.deepEqual(
          ids.filter((id) => final.get(id)!.state !== 'PUBLISHED').map((id) => final.get(id)),
          [],
          'every post published',
        );
        for (const id of ids) assert.ok((counts.get(id) ?? 0) >= 1, `post ${id} reached the receiver`);
        const repeated = await assertRepeatsFollowUnknown(herald, counts, ids);
        assert.ok(repeated <= herald.services.config.workerConcurrency, `${repeated} sent again, at most what the killed worker had in flight`);
        const byWorker = await herald.services.store.db.selectFrom('post_attempts').select('worker').distinct().where('post_id', 'in', ids).execute();
        assert.equal(byWorker.length, 2, 'both workers published some');

        const recorded = await herald.services.store.db
          .selectFrom('webhook_deliveries')
          .select(['payload', 'message_id'])
          .where('webhook_id', '=', hook.body.id)
          .execute();
        const eventsPerPost = new Map<string, number>();
        for (const r of recorded) {
          const id = JSON.parse(r.payload).data.post.id as string;
          eventsPerPost.set(id, (eventsPerPost.get(id) ?? 0) + 1);
        }
        assert.deepEqual(
          published.filter((id) => eventsPerPost.get(id) !== 1),
          [],
          'every published post has exactly one post.published event',
        );
        assert.equal(eventsPerPost.size, published.length, 'no event for a post that was not published');
        const heard = await eventually(
          async () => {
            const messages = new Set(receiver.deliveries.filter((d) => d.path.endsWith('?events')).map((d) => d.headers['webhook-id']));
            return messages.size >= published.length ? messages : undefined;
          },
          60_000,
          'every post.published event to be delivered',
        );
        assert.equal(heard.size, published.length, 'each event delivered under one webhook-id');
      },
    );

    if (store === 'postgres') {
      it('three workers drain 2,000 due posts together: each delivered exactly once, none missed', async () => {
        await Promise.all(workers.splice(0).map((w) => w.stop()));
        const channel = await addWebhookChannel(account, {}, `${receiver.url}?three`);
        receiver.respond(() => undefined);
        const ids = await queuePosts(account, channel.id, 2_000, 'three');
        const toChannel = () => receiver.deliveries.filter((d) => d.path.endsWith('?three')).length;
        for (let i = 0; i < 3; i++) workers.push(await startWorker(herald));
        const final = await eventually(
          async () => {
            const now = await states(herald, ids);
            return [...now.values()].every((s) => s.state === 'PUBLISHED' || s.state === 'ERROR') ? now : undefined;
          },
          180_000,
          'all 2,000 posts to be published',
        );
        assert.deepEqual(
          ids.filter((id) => final.get(id)!.state !== 'PUBLISHED'),
          [],
          'every post published',
        );
        const counts = deliveriesById(receiver);
        assert.equal(toChannel(), 2_000, 'exactly 2,000 deliveries');
        for (const id of ids) assert.equal(counts.get(id), 1, `post ${id} delivered once`);
        const byWorker = await herald.services.store.db.selectFrom('post_attempts').select('worker').distinct().where('post_id', 'in', ids).execute();
        assert.equal(byWorker.length, 3, 'all three workers took a share');
      });
    }
  });
}
