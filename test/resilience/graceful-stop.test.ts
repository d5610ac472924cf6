/**
 * SIGTERM in the middle of a drain: the worker stops claiming, gives the
 * publishes already sent HERALD_SHUTDOWN_SECONDS, exits cleanly, and leaves
 * everything it had not sent in the queue for the next worker, never marked
 * "may have been published". And a worker holding posts it has claimed but not
 * yet started sending (they wait for a fresh token) hands them back instead of
 * sending them, while what it has in flight finishes.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import net from 'node:net';
import { eventually, freePort, startHerald, type TestAccount, type TestHerald } from '../helpers/herald.ts';
import { startHeraldProcess, type HeraldProcess } from '../helpers/herald-process.ts';
import { testStores, storeSuite } from '../helpers/stores.ts';
import { addWebhookChannel } from '../helpers/api-fixtures.ts';
import { deliveriesById, queuePosts, states } from '../helpers/drain.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../fakes/webhook-receiver.ts';
import { startNetworkFake, type NetworkFake } from '../fakes/network-fake.ts';
import { APP_PASSWORD, HANDLE, startBlueskyFake, type BlueskyFake } from '../fakes/bluesky.ts';
import { UNKNOWN_OUTCOME } from '../../src/scheduler/engine.ts';
import { teardown } from '../helpers/teardown.ts';

const CONCURRENCY = 8;
/** Bluesky's app view is not needed here: nothing may reach the real one. */
const BLUESKY_ENV = { HERALD_BLUESKY_SERVICE_URL: 'https://bsky.invalid' };

/** Whether nothing listens on the port of 127.0.0.1 any more. */
function refusesConnections(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}

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
    after(() =>
      teardown(
        () => Promise.all(processes.map((p) => p.stop('SIGKILL'))),
        () => herald.close(),
        () => receiver.close(),
      ),
    );

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

  describe(`a worker told to stop while it holds posts it has not started sending (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let account: TestAccount;
    let pds: BlueskyFake;
    let hooks: NetworkFake;
    const processes: HeraldProcess[] = [];
    let letRefreshAnswer = () => {};
    let letHooksAnswer = () => {};

    before(async () => {
      // The webhook receiver holds every request until the test lets it answer: those posts are in flight.
      const hooksAnswer = new Promise<void>((resolve) => (letHooksAnswer = resolve));
      hooks = await startNetworkFake({
        'POST /hook': async () => {
          await hooksAnswer;
          return { body: { ok: true } };
        },
      });
      // The PDS holds the renewal of the Bluesky channel's access until the test lets it answer: those posts
      // are claimed but wait for a fresh token, so none of them has been sent.
      pds = await startBlueskyFake();
      const refreshAnswer = new Promise<void>((resolve) => (letRefreshAnswer = resolve));
      pds.route({
        'POST /xrpc/com.atproto.server.refreshSession': async () => {
          await refreshAnswer;
          const session = await fetch(`${pds.url}/xrpc/com.atproto.server.createSession`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ identifier: HANDLE, password: APP_PASSWORD }),
          });
          return { body: await session.json() };
        },
      });
      herald = await startHerald(store, { env: { ...BLUESKY_ENV, HERALD_POSTS_PER_HOUR: '1000000', HERALD_REQUESTS_PER_MINUTE: '1000000' } });
      account = await herald.newAccount();
    });
    after(async () => {
      letRefreshAnswer();
      letHooksAnswer();
      await Promise.all(processes.map((p) => p.stop('SIGKILL')));
      await herald?.close();
      await hooks?.close();
      await pds?.close();
    });

    it('hands back what it had not started, lets what was in flight finish, and the next worker publishes the rest exactly once', async () => {
      const db = herald.services.store.db;
      const hook = await addWebhookChannel(account, {}, `${hooks.url}/hook`);
      const added = await account.call('POST', '/integrations', {
        identifier: 'bluesky',
        credentials: { identifier: HANDLE, password: APP_PASSWORD, service: pds.url },
      });
      assert.equal(added.status, 201, JSON.stringify(added.body));
      // The access token is about to expire: every publish on the channel renews it first.
      const row = await db.selectFrom('channels').selectAll().where('id', '=', added.body.id).executeTakeFirstOrThrow();
      await herald.services.channels.saveTokens(row.id, herald.services.channels.publishView(row).config, { expiresAt: Date.now() });

      const inFlight = await queuePosts(account, hook.id, 4, 'in flight');
      const notStarted = await queuePosts(account, added.body.id, 8, 'not started');
      const all = [...inFlight, ...notStarted];
      const metricsPort = await freePort();
      const first = await startHeraldProcess(herald.services.config, 'worker', {
        ...BLUESKY_ENV,
        HERALD_WORKER_CONCURRENCY: String(all.length),
        HERALD_SHUTDOWN_SECONDS: '30',
        HERALD_METRICS_PORT: String(metricsPort),
      });
      processes.push(first);
      await first.running;
      await eventually(
        async () => {
          const leased = await db
            .selectFrom('posts')
            .select('lease_owner')
            .where('id', 'in', all)
            .where('lease_owner', 'like', `%:${first.child.pid}:%`)
            .execute();
          return leased.length === all.length &&
            hooks.calls('POST /hook').length === inFlight.length &&
            pds.calls('POST /xrpc/com.atproto.server.refreshSession').length > 0
            ? true
            : undefined;
        },
        30_000,
        'the worker to hold every post: the webhook ones in flight, the Bluesky ones waiting for a fresh token',
      );

      const exited = first.stop('SIGTERM');
      // The stop has begun once the metrics listener refuses connections: it is closed in the same step that stops the engine.
      await eventually(async () => ((await refusesConnections(metricsPort)) ? true : undefined), 20_000, 'the worker to begin stopping');
      letRefreshAnswer();
      letHooksAnswer();
      assert.equal(await exited, 0, `the worker exited cleanly: ${first.output()}`);

      const afterStop = await db.selectFrom('posts').select(['id', 'state', 'lease_owner', 'error']).where('id', 'in', all).execute();
      const byId = new Map(afterStop.map((p) => [p.id, p]));
      for (const id of inFlight) assert.equal(byId.get(id)!.state, 'PUBLISHED', `post ${id}, in flight at the stop, finished (${byId.get(id)!.error})`);
      assert.equal(pds.calls('POST /xrpc/com.atproto.repo.createRecord').length, 0, 'nothing the worker had not started was sent after the stop');
      for (const id of notStarted) {
        const post = byId.get(id)!;
        assert.deepEqual(
          { state: post.state, lease_owner: post.lease_owner, error: post.error },
          { state: 'QUEUE', lease_owner: null, error: null },
          `post ${id} was handed back`,
        );
      }
      const attempts = await db.selectFrom('post_attempts').select('post_id').where('post_id', 'in', notStarted).execute();
      assert.deepEqual(attempts, [], 'no attempt was begun for what had not started');

      processes.push(await startHeraldProcess(herald.services.config, 'worker', BLUESKY_ENV));
      await eventually(
        async () => {
          const left = await db.selectFrom('posts').select('state').where('id', 'in', notStarted).where('state', '=', 'QUEUE').execute();
          return left.length === 0 ? true : undefined;
        },
        30_000,
        'the next worker to publish what was handed back',
      );
      const published = await db.selectFrom('posts').select(['id', 'state', 'error']).where('id', 'in', notStarted).execute();
      for (const p of published) assert.equal(p.state, 'PUBLISHED', `post ${p.id}: ${p.error}`);
      const creates = pds.calls('POST /xrpc/com.atproto.repo.createRecord').map((r) => r.json.rkey as string);
      assert.equal(creates.length, notStarted.length, 'each handed-back post was sent once');
      assert.equal(new Set(creates).size, notStarted.length, 'no post was sent twice');
      assert.equal(hooks.calls('POST /hook').length, inFlight.length, 'what was in flight was not sent again');
    });
  });
}
