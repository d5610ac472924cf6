/**
 * The publishing engine against a network that counts every publish request:
 * order, exactly-once, retries, unknown outcomes, tokens, pacing, changing plans
 * while publishing, and what the user is told.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { eventually, startHerald, type TestAccount, type TestHerald } from '../helpers/herald.ts';
import { testStores, storeSuite } from '../helpers/stores.ts';
import { addWebhookChannel, assertError, createPosts, entry, postBody } from '../helpers/api-fixtures.ts';
import { startTestnet, type TestnetFake } from '../fakes/testnet.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../fakes/webhook-receiver.ts';
import { createServices } from '../../src/app.ts';
import type { Services } from '../../src/services.ts';
import { Engine } from '../../src/scheduler/engine.ts';
import { claimDue } from '../../src/scheduler/claim.ts';
import { teardown } from '../helpers/teardown.ts';

const MINUTE = 60_000;

for (const store of await testStores()) {
  describe(`publishing engine (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let net: TestnetFake;
    let account: TestAccount;

    before(async () => {
      net = await startTestnet();
      herald = await startHerald(store, {
        env: { HERALD_TESTNET_API_URL: net.url, HERALD_POSTS_PER_HOUR: '100000' },
        engine: { pollMs: 100, leaseMs: 4_000, retryDeadlineMs: 60_000, successDigestMs: 100 },
      });
      account = await herald.newAccount();
    });
    after(() =>
      teardown(
        () => herald.close(),
        () => net.close(),
      ),
    );

    /** A testnet channel; each gets its own network account so channels do not share tokens. */
    async function channel(credentials: Record<string, unknown> = {}) {
      const name = `acct-${Math.random().toString(36).slice(2, 8)}`;
      const added = await account.callUntyped('POST', '/integrations', {
        identifier: 'testnet',
        credentials: { accessToken: net.validToken, refreshToken: [...net.refreshTokens][0], account: name, ...credentials },
      });
      assert.equal(added.status, 201, JSON.stringify(added.body));
      return added.body as { id: string; name: string };
    }

    const detail = async (id: string) => (await account.callUntyped('GET', `/posts/${id}`)).body;
    const settled = (id: string, what = 'the post to settle') =>
      eventually(
        async () => {
          const post = await detail(id);
          return post.thread.every((t: any) => t.state === 'PUBLISHED' || t.state === 'ERROR') ? post : undefined;
        },
        20_000,
        what,
      );
    const publishes = (text: string) => [...net.posts.values()].filter((p) => p.text === text);
    const requestsFor = (text: string) => net.calls('POST /posts').filter((r) => r.json?.text === text);

    // Only the claim is in order of time (the "claiming due posts" suite below): posts claimed
    // together are sent at once, so they may reach the network in any order.
    it('publishes scheduled posts once each, none before its time', async () => {
      const c = await channel();
      const base = Date.now() + 2_000;
      // Created out of order; due 300 ms apart.
      const order = [3, 0, 4, 1, 2];
      const ids: string[] = [];
      for (const n of order) {
        const [created] = await createPosts(account, postBody('schedule', [entry(c.id, [`ordered ${n}`])], { date: new Date(base + n * 300).toISOString() }));
        ids.push(created.postId);
      }
      for (const id of ids) assert.equal((await settled(id)).state, 'PUBLISHED');
      for (const n of order) {
        const sent = requestsFor(`ordered ${n}`);
        assert.equal(sent.length, 1, `ordered ${n} sent once`);
        assert.ok(sent[0].at >= base + n * 300, `ordered ${n} not sent before its time`);
      }
    });

    it('publishes a thread in order, each reply answering the previous item, the next one due its delay later', async () => {
      const c = await channel();
      const [created] = await createPosts(
        account,
        postBody('now', [entry(c.id, ['t-first', { content: 't-second', delay: 0 }, { content: 't-third', delay: 5 }])]),
      );
      const post = await eventually(
        async () => {
          const p = await detail(created.postId);
          return p.thread[1].state === 'PUBLISHED' ? p : undefined;
        },
        10_000,
        'the first reply',
      );
      const [first, second] = [publishes('t-first')[0], publishes('t-second')[0]];
      assert.equal(first.replyTo, null);
      assert.equal(second.replyTo, first.id, 'the reply names the first item on the network');
      assert.equal(post.thread[0].releaseId, first.id);
      // The third waits 5 minutes after the second went out.
      const third = post.thread[2];
      assert.equal(third.state, 'QUEUE');
      // The engine records the second as published and the third's time in one transaction, from one instant.
      const secondSentAt = Date.parse(post.thread[1].attempts[0].finishedAt);
      assert.equal(Date.parse(third.publishDate), secondSentAt + 5 * MINUTE, 'third due 5 minutes after the second went out');
      assert.equal(requestsFor('t-third').length, 0);
    });

    it('503 with Retry-After on a create: an unknown outcome, looked up (not there: ERROR), never sent twice', async () => {
      const c = await channel();
      net.failNext('POST /posts', { status: 503, headers: { 'retry-after': '1' }, body: { error: 'over capacity' } });
      const [created] = await createPosts(account, postBody('now', [entry(c.id, ['after a 503'])]));
      const post = await settled(created.postId);
      assert.equal(post.state, 'ERROR');
      assert.match(post.error, /Testnet answered 503.*may have been published.*Testnet does not show it yet/);
      assert.deepEqual(
        post.thread[0].attempts.map((a: any) => a.outcome),
        ['unknown'],
      );
      assert.equal(requestsFor('after a 503').length, 1, 'sent once');
    });

    it('429 with Retry-After: waits at least that long, then publishes once', async () => {
      const c = await channel();
      net.failNext('POST /posts', { status: 429, headers: { 'retry-after': '2' }, body: { error: 'slow down' } });
      const [created] = await createPosts(account, postBody('now', [entry(c.id, ['after a 429'])]));
      assert.equal((await settled(created.postId)).state, 'PUBLISHED');
      const [refused, accepted] = requestsFor('after a 429');
      assert.ok(accepted, 'sent again');
      assert.ok(accepted.at - refused.at >= 2_000, `waited ${accepted.at - refused.at} ms, Retry-After said 2 s`);
      assert.equal(publishes('after a 429').length, 1);
    });

    it('a refusal ends in ERROR with the network’s own message, sent once', async () => {
      const c = await channel();
      net.failNext('POST /posts', { status: 400, body: { error: { message: 'Duplicate content is not allowed' } } });
      const [created] = await createPosts(account, postBody('now', [entry(c.id, ['refused one'])]));
      const post = await settled(created.postId);
      assert.equal(post.state, 'ERROR');
      assert.match(post.error, /Testnet answered 400: Duplicate content is not allowed/);
      assert.equal(requestsFor('refused one').length, 1);
      const notes = (await account.callUntyped('GET', '/notifications')).body;
      assert.ok(JSON.stringify(notes).includes('Duplicate content is not allowed'), 'the failure is a notification');
    });

    it('a timeout after the network received the post: the engine asks the network and finds it, never sending twice', async () => {
      const c = await channel();
      // The network stores the post but answers after the adapter gave up waiting (1 s).
      net.answerAfterStoreMs = 2_500;
      try {
        const [created] = await createPosts(account, postBody('now', [entry(c.id, ['slow answer'])]));
        const post = await settled(created.postId);
        assert.equal(post.state, 'PUBLISHED');
        assert.equal(post.thread[0].releaseId, publishes('slow answer')[0].id, 'the id the network gave, found by the idempotency key');
        assert.deepEqual(
          post.thread[0].attempts.map((a: any) => a.outcome),
          ['unknown'],
        );
        assert.equal(requestsFor('slow answer').length, 1, 'never sent again');
      } finally {
        net.answerAfterStoreMs = 0;
      }
    });

    it('an expired token is refreshed before publishing; the new token is used', async () => {
      const c = await channel({ expiresInMs: -1_000 });
      const before = net.validToken;
      const [created] = await createPosts(account, postBody('now', [entry(c.id, ['with a fresh token'])]));
      assert.equal((await settled(created.postId)).state, 'PUBLISHED');
      assert.notEqual(net.validToken, before, 'refreshed');
      const [sent] = requestsFor('with a fresh token');
      assert.equal(sent.headers.authorization, `Bearer ${net.validToken}`);
      assert.equal(net.calls('POST /posts').filter((r) => r.json?.text === 'with a fresh token').length, 1, 'no request with the expired token');
    });

    it('a 401 gets one refresh and one more try; a refresh without a new refresh token keeps the stored one', async () => {
      net.rotate = false;
      try {
        const c = await channel();
        const stored = [...net.refreshTokens][0];
        net.validToken = `token-${Number(net.validToken.split('-')[1]) + 10}`; // the network revoked the access token
        const [created] = await createPosts(account, postBody('now', [entry(c.id, ['after a 401'])]));
        const post = await settled(created.postId);
        assert.equal(post.state, 'PUBLISHED');
        assert.deepEqual(
          post.thread[0].attempts.map((a: any) => a.outcome),
          ['failed', 'published'],
        );
        // Revoke the access token again: the refresh must still send the original refresh token.
        net.validToken = `token-${Number(net.validToken.split('-')[1]) + 10}`;
        const [again] = await createPosts(account, postBody('now', [entry(c.id, ['after a second 401'])]));
        assert.equal((await settled(again.postId)).state, 'PUBLISHED');
        const refreshes = net.calls('POST /oauth/token').slice(-2);
        assert.deepEqual(
          refreshes.map((r) => r.form?.refresh_token),
          [stored, stored],
        );
      } finally {
        net.rotate = true;
      }
    });

    it('a refresh the network refuses: the channel needs reconnecting, its due posts fail with that reason, the user is told', async () => {
      const c = await channel({ refreshToken: 'revoked-refresh', expiresInMs: -1_000 });
      const [first, second] = await Promise.all([
        createPosts(account, postBody('schedule', [entry(c.id, ['due one'])], { date: new Date(Date.now() + 300).toISOString() })),
        createPosts(account, postBody('schedule', [entry(c.id, ['due two'])], { date: new Date(Date.now() + 300).toISOString() })),
      ]);
      const later = await createPosts(
        account,
        postBody('schedule', [entry(c.id, ['next week'])], { date: new Date(Date.now() + 7 * 86_400_000).toISOString() }),
      );
      for (const [created] of [first, second]) {
        const post = await settled(created.postId);
        assert.equal(post.state, 'ERROR');
        assert.match(post.error, /must be reconnected.*revoked/i);
      }
      assert.equal((await detail(later[0].postId)).state, 'QUEUE', 'posts not yet due wait for the reconnect');
      assert.equal(requestsFor('due one').length + requestsFor('due two').length, 0, 'nothing was sent');
      const listed = (await account.callUntyped('GET', '/integrations')).body.find((i: any) => i.id === c.id);
      assert.equal(listed.needsReconnect, true);
      const notes = JSON.stringify((await account.callUntyped('GET', '/notifications')).body);
      assert.match(notes, /must be reconnected/);
      // A post due after the channel was marked fails with the network's reason too.
      const [after] = await createPosts(account, postBody('now', [entry(c.id, ['after the refusal'])]));
      const failed = await settled(after.postId);
      assert.equal(failed.state, 'ERROR');
      assert.match(failed.error, /must be reconnected.*revoked/i);
    });

    it('keeps to the network’s limit of publishes at once (2), and publishes all', async () => {
      const c = await channel();
      net.latencyMs = 150;
      net.maxInFlight = 0;
      try {
        const created = await createPosts(
          account,
          postBody(
            'now',
            Array.from({ length: 8 }, (_, i) => entry(c.id, [`paced ${i}`])),
          ),
        );
        for (const { postId } of created) assert.equal((await settled(postId)).state, 'PUBLISHED');
        assert.equal(net.maxInFlight, 2, 'at most 2 at once, and the limit was reached');
      } finally {
        net.latencyMs = 0;
      }
    });

    it('a channel’s daily quota: posts beyond it fail at once saying so, rather than going out a day late', async () => {
      const c = await channel();
      const created = await createPosts(
        account,
        postBody(
          'now',
          Array.from({ length: 12 }, (_, i) => entry(c.id, [`quota ${i}`])),
        ),
      );
      const posts = await Promise.all(created.map(({ postId }) => settled(postId)));
      const failed = posts.filter((p) => p.state === 'ERROR');
      assert.equal(posts.filter((p) => p.state === 'PUBLISHED').length, 10);
      assert.equal(failed.length, 2);
      for (const p of failed) assert.match(p.error, /allows 10 posts per 24 hour\(s\); the limit is reached until/);
      assert.equal(net.calls('POST /posts').filter((r) => /^quota /.test(r.json?.text)).length, 10, 'nothing beyond the quota was sent');
    });

    it('editing or deleting a post while it is being published is refused; it is published once, as it was', async () => {
      const c = await channel();
      net.latencyMs = 800;
      try {
        const [created] = await createPosts(account, postBody('now', [entry(c.id, ['in flight'])]));
        await eventually(async () => (requestsFor('in flight').length > 0 ? true : undefined), 10_000, 'the publish request');
        const group = (await detail(created.postId)).group;
        const edit = await account.callUntyped(
          'POST',
          '/posts',
          postBody('update', [entry(c.id, [{ content: 'edited too late', id: created.postId }])], { group } as never),
        );
        assertError(edit, 409);
        assertError(await account.callUntyped('DELETE', `/posts/${created.postId}`), 409);
        const post = await settled(created.postId);
        assert.equal(post.state, 'PUBLISHED');
        assert.equal(post.content ?? post.thread[0].content, 'in flight');
        assert.equal(requestsFor('in flight').length, 1);
        assert.equal(requestsFor('edited too late').length, 0);
      } finally {
        net.latencyMs = 0;
      }
    });

    it('successes are told in one notification per batch', async () => {
      const c = await channel();
      const created = await createPosts(account, postBody('now', [entry(c.id, ['batch a']), entry(c.id, ['batch b']), entry(c.id, ['batch c'])]));
      for (const { postId } of created) await settled(postId);
      const notes = await eventually(
        async () => {
          const list = (await account.callUntyped('GET', '/notifications')).body;
          const text = JSON.stringify(list);
          return /posts were published/.test(text) ? text : undefined;
        },
        5_000,
        'the digest',
      );
      assert.match(notes, /\d+ posts were published/);
    });
  });

  describe(`publishing engine: no way to check an unknown outcome (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let receiver: WebhookReceiver;
    let account: TestAccount;
    before(async () => {
      receiver = await startWebhookReceiver();
      herald = await startHerald(store, {
        env: { HERALD_POSTS_PER_HOUR: '100000' },
        engine: { pollMs: 100, leaseMs: 3_000, retryDeadlineMs: 4_000, publishTimeoutMs: 1_500 },
      });
      account = await herald.newAccount();
    });
    after(() =>
      teardown(
        () => herald.close(),
        () => receiver.close(),
      ),
    );

    it(
      'a receiver that takes the post and never answers: sent again with the same webhook-id (receivers drop repeats) until the retry deadline, ' +
        'then ERROR telling the user to check',
      async () => {
        const c = await addWebhookChannel(account, {}, `${receiver.url}?hang`);
        receiver.respond(() => ({ delayMs: 60_000 }));
        const [created] = await createPosts(account, postBody('now', [entry(c.id, ['maybe published'])]));
        const post = await eventually(
          async () => {
            const p = (await account.callUntyped('GET', `/posts/${created.postId}`)).body;
            return p.state === 'ERROR' ? p : undefined;
          },
          30_000,
          'the unknown outcome',
        );
        assert.match(post.error, /may have been published.*[Cc]heck.*gave up/);
        const sent = receiver.deliveries.filter((d) => d.path.endsWith('?hang'));
        assert.ok(sent.length >= 2, `sent again (${sent.length})`);
        assert.deepEqual([...new Set(sent.map((d) => d.headers['webhook-id']))], [created.postId], 'always as the same delivery');
        assert.ok(
          post.thread[0].attempts.every((a: any) => a.outcome === 'unknown'),
          'each attempt of unknown outcome',
        );
      },
    );

    it('a receiver that is always unavailable: retried until the deadline, then ERROR saying so', async () => {
      receiver.respond(() => ({ status: 503, body: { error: 'maintenance' } }));
      const c = await addWebhookChannel(account, {}, `${receiver.url}?down`);
      const [created] = await createPosts(account, postBody('now', [entry(c.id, ['never up'])]));
      const post = await eventually(
        async () => {
          const p = (await account.callUntyped('GET', `/posts/${created.postId}`)).body;
          return p.state === 'ERROR' ? p : undefined;
        },
        20_000,
        'giving up',
      );
      assert.match(post.error, /503.*gave up/);
      assert.ok(post.thread[0].attempts.length >= 2, 'retried before giving up');
      assert.ok(
        post.thread[0].attempts.every((a: any) => a.outcome === 'retry' || a.outcome === 'failed'),
        "post.thread[0].attempts.every((a: any) => a.outcome === 'retry' || a.outcome === 'failed')",
      );
    });
  });

  describe(`claiming due posts (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let account: TestAccount;
    before(async () => {
      // No engine: the test claims, at instants of its choosing.
      herald = await startHerald(store, { env: { HERALD_POSTS_PER_HOUR: '100000' } });
      account = await herald.newAccount();
    });
    after(() => herald.close());

    it('many posts due at once: claimed earliest first, as many as the worker takes, each once', async () => {
      const c = await addWebhookChannel(account);
      const base = Date.parse('2031-04-01T09:00:00Z');
      for (const n of [3, 0, 5, 1, 4, 2]) {
        await createPosts(account, postBody('schedule', [entry(c.id, [`claim ${n}`])], { date: new Date(base + n * 300).toISOString() }));
      }
      let claims = 0;
      // Longer than the test's hour: a claim holds its posts throughout.
      const LEASE_MS = 24 * 60 * MINUTE;
      // Which posts one claim took; posts taken together are published at the same time, in no order.
      const claim = async (limit: number, at: number) =>
        (await claimDue(herald.services.store, `test#${++claims}`, limit, LEASE_MS, at)).map((row) => Number(row.content.split(' ')[1])).sort((a, b) => a - b);
      assert.deepEqual(await claim(10, base + 2 * 300), [0, 1, 2], 'those due, and only those');
      assert.deepEqual(await claim(2, base + 60 * MINUTE), [3, 4], 'the earliest due of the others first');
      assert.deepEqual(await claim(2, base + 60 * MINUTE), [5]);
      assert.deepEqual(await claim(2, base + 60 * MINUTE), [], 'each once: the others are held');
    });
  });

  if (store === 'postgres') {
    describe('engines in other processes hear of posts due now (postgres)', storeSuite(store), () => {
      let api: TestHerald;
      let worker: { services: Services; engine: Engine } | undefined;
      let receiver: WebhookReceiver;
      before(async () => {
        receiver = await startWebhookReceiver();
        api = await startHerald('postgres');
      });
      after(async () => {
        await worker?.engine.stop();
        await worker?.services.close();
        // A store that failed to start leaves nothing to close, but the receiver must close or the file never ends.
        await api?.close();
        await receiver?.close();
      });

      it('a post made "now" on an API server is published by a worker elsewhere at once, not at its next poll', async () => {
        // The worker looks at the queue only once a minute: only the announcement can wake it in time.
        const services = await createServices(api.services.config);
        const engine = new Engine(services, { pollMs: 60_000 });
        worker = { services, engine };
        engine.start();
        await engine.listening;
        const account = await api.newAccount();
        const channel = await addWebhookChannel(account, {}, `${receiver.url}?notify`);
        const [created] = await createPosts(account, postBody('now', [entry(channel.id, ['announced'])]));
        await eventually(
          async () => (receiver.deliveries.some((d) => d.headers['webhook-id'] === created.postId) ? true : undefined),
          15_000,
          'the announced post',
        );
      });
    });
  }
}
