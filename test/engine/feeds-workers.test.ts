/**
 * Three `herald worker` processes on one PostgreSQL store, each running the
 * feed reader every engine runs, with a one-second read interval: the blog is
 * read once per interval whichever worker gets it, and each new item becomes
 * one post, delivered once (the receiver counts deliveries by webhook-id).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { eventually, startHerald, type TestAccount, type TestHerald } from '../helpers/herald.ts';
import { storeSuite, testStores } from '../helpers/stores.ts';
import { startHeraldProcess, type HeraldProcess } from '../helpers/herald-process.ts';
import { addWebhookChannel } from '../helpers/api-fixtures.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../fakes/webhook-receiver.ts';
import { startFeedServer, type FeedServer } from '../fakes/feed-server.ts';
import { teardown } from '../helpers/teardown.ts';

const INTERVAL_MS = 1000;

// Sets whether PostgreSQL is reachable, which storeSuite reads.
await testStores();

describe('three workers reading one feed (postgres)', storeSuite('postgres'), () => {
  let herald: TestHerald;
  let account: TestAccount;
  let site: FeedServer;
  let receiver: WebhookReceiver;
  const workers: HeraldProcess[] = [];

  before(async () => {
    site = await startFeedServer();
    receiver = await startWebhookReceiver();
    herald = await startHerald('postgres');
    account = await herald.newAccount();
  });
  after(() =>
    teardown(
      () => Promise.all(workers.map((w) => w.stop('SIGKILL'))),
      () => herald?.close(),
      () => receiver?.close(),
      () => site?.close(),
    ),
  );

  it('reads the feed once per interval, and posts and delivers each new item exactly once', async () => {
    const channel = await addWebhookChannel(account, {}, `${receiver.url}?feed`);
    const url = site.publish('/shared.xml', { items: [{ guid: 'before', title: 'Before the workers' }] });
    const created = await account.callUntyped('POST', '/feeds', { url, channels: [channel.id], template: '{title}' });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const env = { HERALD_FEED_POLL_SECONDS: String(INTERVAL_MS / 1000) };
    workers.push(...(await Promise.all([1, 2, 3].map(() => startHeraldProcess(herald.services.config, 'worker', env)))));
    await Promise.all(workers.map((w) => w.running));
    await eventually(
      async () => ((await account.callUntyped('GET', `/feeds/${created.body.id}`)).body.state === 'ok' ? true : undefined),
      20_000,
      'the first read',
    );

    const reads = () => site.hits('/shared.xml').length;
    const titles: string[] = [];
    for (let round = 1; round <= 3; round++) {
      const items = [1, 2].map((n) => ({ guid: `r${round}-${n}`, title: `Round ${round} item ${n}` }));
      titles.push(...items.map((i) => i.title));
      const readBefore = reads();
      site.add('/shared.xml', ...items);
      // Each round is seen by a read of its own.
      await eventually(async () => (reads() > readBefore ? true : undefined), 10 * INTERVAL_MS, `a read of the feed after round ${round}`);
    }
    const delivered = () => receiver.deliveries.filter((d) => d.path.endsWith('?feed'));
    await eventually(async () => (delivered().length >= titles.length ? true : undefined), 30_000, 'every item to be delivered');
    // Two more reads, so that a post made twice would have had its chance to show.
    const readsThen = reads();
    await eventually(async () => (reads() >= readsThen + 2 ? true : undefined), 10 * INTERVAL_MS, 'two more reads of the feed');

    const posts = await herald.services.store.db.selectFrom('posts').select(['id', 'content', 'state']).where('channel_id', '=', channel.id).execute();
    assert.deepEqual(posts.map((p) => p.content).sort(), [...titles].sort(), 'one post per new item, none for the item that was there before');
    assert.ok(
      posts.every((p) => p.state === 'PUBLISHED'),
      JSON.stringify(posts),
    );
    const byId = new Map<string, number>();
    for (const d of delivered()) byId.set(String(d.headers['webhook-id']), (byId.get(String(d.headers['webhook-id'])) ?? 0) + 1);
    assert.deepEqual([...byId.values()], Array(titles.length).fill(1), 'each post delivered once');

    const hits = site.hits('/shared.xml');
    const span = hits.at(-1)!.at - hits[0].at;
    // Three workers each looking every interval would read it about three times as often.
    assert.ok(hits.length <= span / (0.8 * INTERVAL_MS) + 1, `${hits.length} reads in ${span} ms: one per interval`);
    for (let i = 1; i < hits.length; i++) {
      assert.ok(hits[i].at - hits[i - 1].at >= INTERVAL_MS / 2, `reads ${i - 1} and ${i} are ${hits[i].at - hits[i - 1].at} ms apart`);
    }
    assert.ok(hits.length >= 4, `the feed was read on schedule (${hits.length} reads)`);
  });
});
