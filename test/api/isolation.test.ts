import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PNG_1x1, startHerald, type TestAccount, type TestHerald, uploadUntyped } from '../helpers/herald.ts';
import { testStores, storeSuite } from '../helpers/stores.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../fakes/webhook-receiver.ts';
import { addWebhookChannel, assertError, createPosts, entry, idRoutes, listPosts, postBody, type Channel } from '../helpers/api-fixtures.ts';
import { teardown } from '../helpers/teardown.ts';

/** Everything account A can see of its own data, to compare before and after B's attempts. */
async function snapshot(a: TestAccount, postIds: string[]) {
  return {
    integrations: (await a.callUntyped('GET', '/integrations')).body,
    groups: (await a.callUntyped('GET', '/groups')).body,
    posts: await listPosts(a),
    details: await Promise.all(postIds.map(async (id) => (await a.callUntyped('GET', `/posts/${id}`)).body)),
    notifications: (await a.callUntyped('GET', '/notifications')).body,
  };
}

for (const store of await testStores()) {
  describe(`two accounts on one server are isolated (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let receiver: WebhookReceiver;
    let a: TestAccount;
    let b: TestAccount;
    let aChannel: Channel;
    let bChannel: Channel;
    let aCustomer: { id: string; name: string };
    let aMedia: { id: string; path: string };
    let aQueued: string;
    let aDraft: string;
    let aGroup: string;
    let before_: Awaited<ReturnType<typeof snapshot>>;

    before(async () => {
      herald = await startHerald(store);
      receiver = await startWebhookReceiver();
      a = await herald.newAccount('A');
      b = await herald.newAccount('B');
      aCustomer = (await a.callUntyped('POST', '/groups', { name: 'A customer' })).body;
      aChannel = await addWebhookChannel(a, { name: 'A hook', customer: aCustomer.id }, `${receiver.url}?a`);
      bChannel = await addWebhookChannel(b, { name: 'B hook' });
      aMedia = (await uploadUntyped(a, herald.api, PNG_1x1, 'a.png')).body;
      const [queued] = await createPosts(
        a,
        postBody('schedule', [
          entry(aChannel.id, [
            { content: 'A root', image: [{ id: aMedia.id, path: aMedia.path }] },
            { content: 'A reply', delay: 5 },
          ]),
        ]),
      );
      const [draft] = await createPosts(a, postBody('draft', [entry(aChannel.id, ['A draft'])]));
      aQueued = queued.postId;
      aDraft = draft.postId;
      aGroup = (await a.callUntyped('GET', `/posts/${aQueued}`)).body.group;
      await herald.services.notifications.add(a.id, 'only for A');
      await createPosts(b, postBody('schedule', [entry(bChannel.id, ['B post'])]));
      before_ = await snapshot(a, [aQueued, aDraft]);
    });
    after(() =>
      teardown(
        () => herald.close(),
        () => receiver.close(),
      ),
    );

    it("B's lists never show A's channels, posts, customers or notifications", async () => {
      assert.deepEqual(
        (await b.callUntyped('GET', '/integrations')).body.map((c: any) => c.id),
        [bChannel.id],
      );
      assert.deepEqual((await b.callUntyped('GET', `/integrations?group=${aCustomer.id}`)).body, []);
      assert.deepEqual(
        (await listPosts(b)).map((p) => p.integration.id),
        [bChannel.id],
      );
      assert.deepEqual(await listPosts(b, `&customer=${aCustomer.id}`), []);
      assert.deepEqual((await b.callUntyped('GET', '/groups')).body, []);
      assert.equal((await b.callUntyped('GET', '/notifications')).body.total, 0);
    });

    it("every :id route answers 404 to B for A's channel, post and group", async () => {
      const reply = before_.details[0].thread[1].id;
      for (const post of [aQueued, reply]) {
        for (const [method, route, body] of idRoutes({ channel: aChannel.id, post, group: aGroup })) {
          const answer = await b.callUntyped(method, route, body);
          assert.equal(answer.status, 404, `${method} ${route}: ${JSON.stringify(answer.body)}`);
          assertError(answer, 404);
        }
      }
      assert.equal(receiver.deliveries.length, 0, "B's trigger reached A's webhook");
    });

    it("B cannot post to A's channel, use A's media, or update A's posts", async () => {
      assertError(await b.callUntyped('POST', '/posts', postBody('schedule', [entry(aChannel.id, ['intruder'])])), 404, { path: 'posts.0.integration.id' });
      assertError(await b.callUntyped('POST', '/posts', postBody('draft', [entry(bChannel.id, ['ok']), entry(aChannel.id, ['intruder'])])), 404, {
        path: 'posts.1.integration.id',
      });
      assertError(
        await b.callUntyped(
          'POST',
          '/posts',
          postBody('schedule', [entry(bChannel.id, [{ content: 'borrowed', image: [{ id: aMedia.id, path: aMedia.path }] }])]),
        ),
        400,
        {
          path: 'posts.0.value.0.image.0.path',
        },
      );
      // Naming A's post in an update answers exactly as for a post that does not exist.
      for (const target of [{ group: aGroup }, { group: 'no-such-group' }]) {
        assertError(await b.callUntyped('POST', '/posts', postBody('update', [entry(bChannel.id, ['hijack'], target)])), 400, { path: 'posts.0.group' });
      }
      for (const id of [aQueued, 'no-such-post']) {
        assertError(await b.callUntyped('POST', '/posts', postBody('update', [entry(bChannel.id, [{ id, content: 'hijack' }])])), 400, {
          path: 'posts.0.value.0.id',
        });
      }
      assert.deepEqual(
        (await listPosts(b)).map((p) => p.content),
        ['B post'],
      );
    });

    it("an Idempotency-Key A used is B's own: B never gets A's stored answer", async () => {
      const headers = { 'idempotency-key': 'shared-key-1' };
      const fromA = await a.callUntyped('POST', '/posts', postBody('draft', [entry(aChannel.id, ['A keyed'])]), headers);
      assert.equal(fromA.status, 201);
      const fromB = await b.callUntyped('POST', '/posts', postBody('draft', [entry(bChannel.id, ['B keyed'])]), headers);
      assert.equal(fromB.status, 201, JSON.stringify(fromB.body));
      assert.equal(fromB.headers.get('idempotent-replayed'), null);
      assert.equal(fromB.body[0].integration, bChannel.id);
      assert.notEqual(fromB.body[0].postId, fromA.body[0].postId);
      assert.equal((await a.callUntyped('DELETE', `/posts/${fromA.body[0].postId}`)).status, 200);
    });

    it("B cannot attach A's customer, and adding A's webhook URL gives B its own channel", async () => {
      assertError(await b.callUntyped('PATCH', `/integrations/${bChannel.id}`, { customer: aCustomer.id }), 404, { path: 'customer' });
      assertError(
        await b.callUntyped('POST', '/integrations', { identifier: 'webhook', credentials: { url: `${receiver.url}?b2` }, customer: aCustomer.id }),
        404,
        {
          path: 'customer',
        },
      );
      const same = await addWebhookChannel(b, { name: 'B copy' }, `${receiver.url}?a`);
      assert.notEqual(same.id, aChannel.id);
      assert.equal(same.customer, null);
      assert.equal((await b.callUntyped('DELETE', `/integrations/${same.id}`)).status, 200);
    });

    it("A's data is intact after all of B's attempts, and A can still use it", async () => {
      assert.deepEqual(await snapshot(a, [aQueued, aDraft]), before_);
      assert.equal((await a.callUntyped('GET', `/find-slot/${aChannel.id}`)).status, 200);
      const used = await createPosts(a, postBody('draft', [entry(aChannel.id, [{ content: 'A again', image: [{ path: aMedia.path }] }])]));
      assert.equal(used[0].integration, aChannel.id);
    });
  });
}
