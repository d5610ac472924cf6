import assert from 'node:assert/strict';
import { verifiedByStandardWebhooks } from '../helpers/standard-webhooks.ts';
import crypto from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { eventually, startHerald, type TestAccount, type TestHerald } from '../helpers/herald.ts';
import { testStores, storeSuite } from '../helpers/stores.ts';
import { startWebhookReceiver, type Delivery, type WebhookReceiver } from '../fakes/webhook-receiver.ts';
import { addWebhookChannel, assertError, createPosts, entry, postBody, schedulePost, type Channel } from '../helpers/api-fixtures.ts';
import { teardown } from '../helpers/teardown.ts';

/** What a receiver does with the secret it was given: HMAC-SHA256 over "id.timestamp.body", keyed with the base64 after whsec_. */
function verifiesAsReceiver(secret: string, delivery: Delivery): boolean {
  return verifiedByStandardWebhooks(secret, delivery.headers, delivery.body);
}

/** Receivers reject timestamps more than a few minutes away from their clock (replay protection). */
function timestampIsFresh(delivery: Delivery): boolean {
  return Math.abs(Number(delivery.headers['webhook-timestamp']) - Date.now() / 1000) < 300;
}

async function deliveriesOf(account: TestAccount, webhookId: string): Promise<any[]> {
  const listed = await account.callUntyped('GET', `/webhooks/${webhookId}/deliveries`);
  assert.equal(listed.status, 200, JSON.stringify(listed.body));
  return listed.body.deliveries;
}

function ofType(receiver: WebhookReceiver, type: string): Delivery[] {
  return receiver.deliveries.filter((d) => d.json?.type === type);
}

for (const store of await testStores()) {
  describe(`account webhooks (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let receiver: WebhookReceiver;
    let a: TestAccount;
    let b: TestAccount;
    let channel: Channel;
    let hook: { id: string; secret: string; url: string; events: string[] };

    before(async () => {
      // Short waits between attempts so retries happen within the test; the schedule's shape is the same.
      herald = await startHerald(store, { webhooks: { retryDelaysMs: [20, 20, 20], pollMs: 100 } });
      receiver = await startWebhookReceiver();
      a = await herald.newAccount('A');
      b = await herald.newAccount('B');
      channel = await addWebhookChannel(a);
      const created = await a.callUntyped('POST', '/webhooks', {
        url: receiver.url,
        name: 'Audit log',
        events: ['post.created', 'post.updated', 'post.deleted'],
      });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      hook = created.body;
    });
    after(() =>
      teardown(
        () => herald.close(),
        () => receiver.close(),
      ),
    );

    it('registers a webhook and shows its secret only once', async () => {
      assert.match(hook.secret, /^whsec_[A-Za-z0-9+/=]+$/);
      assert.equal(hook.url, receiver.url);
      assert.deepEqual(hook.events, ['post.created', 'post.updated', 'post.deleted']);
      const listed = await a.callUntyped('GET', '/webhooks');
      assert.equal(listed.status, 200);
      assert.deepEqual(
        listed.body.map((w: any) => ({ id: w.id, name: w.name, url: w.url, disabled: w.disabled })),
        [{ id: hook.id, name: 'Audit log', url: receiver.url, disabled: false }],
      );
      assert.equal(JSON.stringify(listed.body).includes(hook.secret), false, 'the list never shows the secret');
      const row = await herald.services.store.db.selectFrom('webhooks').select('secret_sealed').where('id', '=', hook.id).executeTakeFirstOrThrow();
      assert.equal(row.secret_sealed.includes(hook.secret.slice(6)), false, 'the secret is sealed at rest');
    });

    it('delivers post.created, post.updated and post.deleted, signed with the secret', async () => {
      const postId = await schedulePost(a, channel.id, 'first words');
      const group = (await a.callUntyped('GET', `/posts/${postId}`)).body.group;
      const created = await eventually(async () => ofType(receiver, 'post.created').find((d) => d.json.data.post.id === postId), 10_000, 'post.created');

      await createPosts(a, postBody('update', [entry(channel.id, ['second words'], { group })]));
      const updated = await eventually(async () => ofType(receiver, 'post.updated').find((d) => d.json.data.post.id === postId), 10_000, 'post.updated');

      const deleted = await a.callUntyped('DELETE', `/posts/${postId}`);
      assert.equal(deleted.status, 200);
      const gone = await eventually(async () => ofType(receiver, 'post.deleted').find((d) => d.json.data.post.id === postId), 10_000, 'post.deleted');

      const wrong = 'whsec_' + crypto.randomBytes(24).toString('base64');
      for (const d of [created, updated, gone]) {
        assert.equal(d.method, 'POST');
        assert.match(String(d.headers['content-type']), /^application\/json/);
        assert.ok(verifiesAsReceiver(hook.secret, d), `the ${d.json.type} signature verifies with the secret`);
        assert.equal(verifiesAsReceiver(wrong, d), false, 'another secret does not verify');
        assert.equal(verifiesAsReceiver(hook.secret, { ...d, body: d.body.replace('words', 'wordz') }), false, 'a changed body does not verify');
        assert.ok(timestampIsFresh(d), 'timestampIsFresh(d)');
        assert.match(String(d.headers['webhook-id']), /^msg_/);
        assert.deepEqual(Object.keys(d.json).sort(), ['data', 'timestamp', 'type']);
        assert.ok(!Number.isNaN(Date.parse(d.json.timestamp)), '!Number.isNaN(Date.parse(d.json.timestamp))');
        assert.equal(d.json.data.post.group, group);
        assert.equal(d.json.data.post.integration.id, channel.id);
      }
      assert.equal(created.json.data.post.content, 'first words');
      assert.equal(created.json.data.post.state, 'QUEUE');
      assert.equal(updated.json.data.post.content, 'second words');
      assert.equal(new Set([created, updated, gone].map((d) => d.headers['webhook-id'])).size, 3, 'each event has its own webhook-id');

      const log = await eventually(
        async () => {
          const list = await deliveriesOf(a, hook.id);
          return list.filter((x) => x.payload.data.post?.id === postId).every((x) => x.state === 'delivered') ? list : undefined;
        },
        10_000,
        'deliveries marked delivered',
      );
      const mine = log.filter((x) => x.payload.data.post?.id === postId);
      assert.deepEqual(mine.map((x) => x.event).sort(), ['post.created', 'post.deleted', 'post.updated']);
      for (const x of mine) {
        assert.equal(x.attempts, 1);
        assert.equal(x.lastStatus, 200);
        assert.equal(x.lastError, null);
        assert.deepEqual(
          x.attemptLog.map((l: any) => l.status),
          [200],
        );
        assert.ok(x.deliveredAt, 'x.deliveredAt');
      }
    });

    it('removing a channel deletes its waiting posts as deleting them would: post.deleted each, and 409 while one is being sent', async () => {
      const doomed = await addWebhookChannel(a);
      const first = await schedulePost(a, doomed.id, 'waiting one');
      const second = await schedulePost(a, doomed.id, 'waiting two');
      // A worker holds the first one right now.
      await herald.services.store.db
        .updateTable('posts')
        .set({ lease_owner: 'a worker', lease_until: Date.now() + 60_000 })
        .where('id', '=', first)
        .execute();
      const busy = await a.callUntyped('DELETE', `/integrations/${doomed.id}`);
      assert.equal(busy.status, 409, JSON.stringify(busy.body));
      assert.equal(busy.body.code, 'publishing');
      assert.equal((await a.callUntyped('GET', `/posts/${second}`)).status, 200, 'nothing was removed');

      await herald.services.store.db.updateTable('posts').set({ lease_owner: null, lease_until: null }).where('id', '=', first).execute();
      assert.equal((await a.callUntyped('DELETE', `/integrations/${doomed.id}`)).status, 200);
      const told = await eventually(
        async () => {
          const ids = ofType(receiver, 'post.deleted').map((d) => d.json.data.post.id);
          return ids.includes(first) && ids.includes(second) ? ids : undefined;
        },
        10_000,
        'post.deleted for both waiting posts',
      );
      assert.equal(told.filter((id) => id === first || id === second).length, 2, 'one event each');
    });

    it('retries an endpoint that fails, and records every attempt', async () => {
      const flaky = await startWebhookReceiver();
      try {
        flaky.respond((_d, i) => (i < 2 ? { status: 500, body: { error: `down ${i}` } } : { status: 200 }));
        const added = await a.callUntyped('POST', '/webhooks', { url: flaky.url, events: ['post.created'] });
        assert.equal(added.status, 201);
        const postId = await schedulePost(a, channel.id, 'try again');
        const [delivery] = await eventually(
          async () => {
            const list = await deliveriesOf(a, added.body.id);
            return list.length === 1 && list[0].state !== 'pending' ? list : undefined;
          },
          15_000,
          'the flaky delivery to settle',
        );

        assert.equal(delivery.state, 'delivered');
        assert.equal(delivery.attempts, 3);
        assert.deepEqual(
          delivery.attemptLog.map((l: any) => l.status),
          [500, 500, 200],
        );
        assert.match(delivery.attemptLog[0].error, /answered 500.*down 0/);
        assert.equal(delivery.lastStatus, 200);
        assert.equal(flaky.deliveries.length, 3);
        assert.equal(new Set(flaky.deliveries.map((d) => d.headers['webhook-id'])).size, 1, 'every retry carries the same webhook-id');
        assert.equal(new Set(flaky.deliveries.map((d) => d.body)).size, 1, 'and the same body');
        for (const d of flaky.deliveries) assert.ok(verifiesAsReceiver(added.body.secret, d), 'verifiesAsReceiver(added.body.secret, d)');
        assert.equal(flaky.deliveries[0].json.data.post.id, postId);
        await a.callUntyped('DELETE', `/webhooks/${added.body.id}`);
      } finally {
        await flaky.close();
      }
    });

    it('gives up after the last retry and marks the delivery failed', async () => {
      const broken = await startWebhookReceiver();
      try {
        broken.respond(() => ({ status: 503, body: { error: 'maintenance' } }));
        const added = await a.callUntyped('POST', '/webhooks', { url: broken.url, events: ['post.created'] });
        await schedulePost(a, channel.id, 'nobody listens');
        const [delivery] = await eventually(
          async () => {
            const list = await deliveriesOf(a, added.body.id);
            return list.length === 1 && list[0].state === 'failed' ? list : undefined;
          },
          15_000,
          'the delivery to fail',
        );
        // One first attempt and one retry per configured wait.
        assert.equal(delivery.attempts, 4);
        assert.equal(broken.deliveries.length, 4);
        assert.equal(delivery.lastStatus, 503);
        assert.match(delivery.lastError, /503.*gave up after 4 attempts/);
        assert.equal(delivery.nextAttemptAt, null);
        await a.callUntyped('DELETE', `/webhooks/${added.body.id}`);
      } finally {
        await broken.close();
      }
    });

    it('records an attempt against an endpoint that cannot be reached', async () => {
      const closed = await startWebhookReceiver();
      const url = closed.url;
      await closed.close();
      const added = await a.callUntyped('POST', '/webhooks', { url, events: ['post.created'] });
      await schedulePost(a, channel.id, 'into the void');
      const [delivery] = await eventually(
        async () => {
          const list = await deliveriesOf(a, added.body.id);
          return list[0]?.state === 'failed' ? list : undefined;
        },
        15_000,
        'the unreachable delivery to fail',
      );
      assert.equal(delivery.lastStatus, null);
      assert.match(delivery.attemptLog[0].error, /could not be reached/);
      await a.callUntyped('DELETE', `/webhooks/${added.body.id}`);
    });

    it('redelivers a recorded event with the same webhook-id and body', async () => {
      const postId = await schedulePost(a, channel.id, 'once more');
      const first = await eventually(async () => ofType(receiver, 'post.created').find((d) => d.json.data.post.id === postId), 10_000, 'first delivery');
      const recorded = (await deliveriesOf(a, hook.id)).find((x) => x.event === 'post.created' && x.payload.data.post.id === postId);
      const again = await a.callUntyped('POST', `/webhooks/${hook.id}/deliveries/${recorded.id}/redeliver`);
      assert.equal(again.status, 202, JSON.stringify(again.body));
      assert.notEqual(again.body.id, recorded.id);
      assert.equal(again.body.messageId, recorded.messageId);
      const copies = await eventually(
        async () => {
          const found = receiver.deliveries.filter((d) => d.headers['webhook-id'] === first.headers['webhook-id']);
          return found.length === 2 ? found : undefined;
        },
        10_000,
        'the redelivery',
      );
      assert.equal(copies[1].body, copies[0].body);
      assert.ok(verifiesAsReceiver(hook.secret, copies[1]), 'verifiesAsReceiver(hook.secret, copies[1])');
    });

    it('sends a signed ping on request', async () => {
      const sent = await a.callUntyped('POST', `/webhooks/${hook.id}/test`);
      assert.equal(sent.status, 202, JSON.stringify(sent.body));
      assert.equal(sent.body.event, 'ping');
      const ping = await eventually(async () => ofType(receiver, 'ping').find((d) => d.headers['webhook-id'] === sent.body.messageId), 10_000, 'the ping');
      assert.ok(verifiesAsReceiver(hook.secret, ping), 'verifiesAsReceiver(hook.secret, ping)');
      assert.equal(ping.json.data.webhook.id, hook.id);
    });

    it('sends nothing to a disabled webhook, and changes take effect', async () => {
      const other = await startWebhookReceiver();
      const added = await a.callUntyped('POST', '/webhooks', { url: other.url, events: ['post.created'] });
      try {
        const disabled = await a.callUntyped('PATCH', `/webhooks/${added.body.id}`, { disabled: true, name: 'Paused' });
        assert.equal(disabled.status, 200);
        assert.equal(disabled.body.disabled, true);
        assert.equal(disabled.body.name, 'Paused');
        await schedulePost(a, channel.id, 'quiet');
        const resumed = await a.callUntyped('PATCH', `/webhooks/${added.body.id}`, { disabled: false, events: ['post.created', 'post.deleted'] });
        assert.deepEqual(resumed.body.events, ['post.created', 'post.deleted']);
        const postId = await schedulePost(a, channel.id, 'heard');
        const d = await eventually(async () => other.deliveries[0], 10_000, 'delivery after enabling');
        assert.equal(d.json.data.post.id, postId);
        assert.deepEqual(
          (await deliveriesOf(a, added.body.id)).map((x) => x.payload.data.post.content),
          ['heard'],
          'nothing was recorded while disabled',
        );
      } finally {
        await a.callUntyped('DELETE', `/webhooks/${added.body.id}`);
        await other.close();
      }
    });

    it('refuses private addresses for the URL', async () => {
      for (const url of [
        'http://10.0.0.5/hook',
        'http://169.254.169.254/latest/meta-data',
        'http://[::1]:8080/x',
        'http://127.0.0.2/hook',
        'http://192.168.1.10/hook',
      ]) {
        assertError(await a.callUntyped('POST', '/webhooks', { url, events: ['post.created'] }), 400, {
          code: 'url_refused',
          path: 'url',
          message: /private or reserved/,
        });
      }
      assertError(await a.callUntyped('PATCH', `/webhooks/${hook.id}`, { url: 'http://10.1.2.3/' }), 400, { code: 'url_refused', path: 'url' });
      assert.equal((await a.callUntyped('GET', '/webhooks')).body.find((w: any) => w.id === hook.id).url, receiver.url, 'a refused change changes nothing');
    });

    it('keeps each account to its own webhooks', async () => {
      assert.deepEqual((await b.callUntyped('GET', '/webhooks')).body, []);
      const recorded = (await deliveriesOf(a, hook.id))[0];
      for (const [method, path, body] of [
        ['GET', `/webhooks/${hook.id}/deliveries`],
        ['PATCH', `/webhooks/${hook.id}`, { name: 'mine now' }],
        ['DELETE', `/webhooks/${hook.id}`],
        ['POST', `/webhooks/${hook.id}/test`],
        ['POST', `/webhooks/${hook.id}/deliveries/${recorded.id}/redeliver`],
      ] as [string, string, unknown?][]) {
        assertError(await b.callUntyped(method, path, body), 404, { code: 'not_found' });
      }
      // B's own webhook cannot redeliver A's delivery either.
      const bHook = await b.callUntyped('POST', '/webhooks', { url: receiver.url, events: ['post.created'] });
      assertError(await b.callUntyped('POST', `/webhooks/${bHook.body.id}/deliveries/${recorded.id}/redeliver`), 404);
      // B's posts reach B's webhook only.
      const bChannel = await addWebhookChannel(b);
      const before = (await deliveriesOf(a, hook.id)).length;
      const bPost = await schedulePost(b, bChannel.id, 'from B');
      await eventually(async () => ofType(receiver, 'post.created').find((d) => d.json.data.post.id === bPost), 10_000, "B's event");
      assert.equal((await deliveriesOf(a, hook.id)).length, before);
      assert.equal((await a.callUntyped('GET', '/webhooks')).body.find((w: any) => w.id === hook.id).name, 'Audit log');
    });

    it('answers bad input with 400 naming the field', async () => {
      const cases: [unknown, string][] = [
        [{ events: ['post.created'] }, 'url'],
        [{ url: 'not a url', events: ['post.created'] }, 'url'],
        [{ url: 'ftp://example.com/x', events: ['post.created'] }, 'url'],
        [{ url: receiver.url }, 'events'],
        [{ url: receiver.url, events: [] }, 'events'],
        [{ url: receiver.url, events: ['post.exploded'] }, 'events.0'],
        [{ url: receiver.url, events: 'post.created' }, 'events'],
        [{ url: receiver.url, events: ['post.created'], name: '' }, 'name'],
        [{ url: receiver.url, events: ['post.created'], name: 'x'.repeat(201) }, 'name'],
      ];
      for (const [body, path] of cases) assertError(await a.callUntyped('POST', '/webhooks', body), 400, { path });
      assertError(await a.callUntyped('PATCH', `/webhooks/${hook.id}`, { events: ['nope'] }), 400, { path: 'events.0' });
      assertError(await a.callUntyped('PATCH', `/webhooks/${hook.id}`, { disabled: 'yes' }), 400, { path: 'disabled' });
      assertError(await a.callUntyped('GET', `/webhooks/${hook.id}/deliveries?page=-1`), 400, { path: 'page' });
      assertError(await a.callUntyped('POST', '/webhooks/unknown-id/test'), 404);
      assertError(await a.callUntyped('POST', `/webhooks/${hook.id}/deliveries/unknown-id/redeliver`), 404);
    });

    it('deletes a webhook: it is gone and receives nothing more', async () => {
      const temp = await startWebhookReceiver();
      try {
        const added = await a.callUntyped('POST', '/webhooks', { url: temp.url, events: ['post.created'] });
        const removed = await a.callUntyped('DELETE', `/webhooks/${added.body.id}`);
        assert.deepEqual(removed.body, { deleted: true, id: added.body.id });
        assert.equal(
          (await a.callUntyped('GET', '/webhooks')).body.some((w: any) => w.id === added.body.id),
          false,
        );
        assertError(await a.callUntyped('DELETE', `/webhooks/${added.body.id}`), 404);
        const postId = await schedulePost(a, channel.id, 'after removal');
        // The still-registered webhook hears it, so the event was emitted; the removed one must not.
        await eventually(async () => ofType(receiver, 'post.created').find((d) => d.json.data.post.id === postId), 10_000, 'event to the live webhook');
        assert.equal(temp.deliveries.length, 0);
      } finally {
        await temp.close();
      }
    });
  });
}

for (const store of (await testStores()).filter((s) => s === 'postgres')) {
  describe('account webhooks: two workers share the deliveries (postgres)', storeSuite(store), () => {
    let first: TestHerald;
    let second: TestHerald;
    let receiver: WebhookReceiver;

    before(async () => {
      const options = { retryDelaysMs: [20], pollMs: 50, concurrency: 2 };
      first = await startHerald('postgres', { webhooks: options });
      second = await startHerald('postgres', { webhooks: options, databaseUrl: first.services.config.databaseUrl });
      receiver = await startWebhookReceiver();
      // A slow answer keeps both workers busy at the same time.
      receiver.respond(() => ({ status: 200, delayMs: 30 }));
    });
    after(() =>
      teardown(
        () => second.close(),
        () => first.close(),
        () => receiver.close(),
      ),
    );

    it('sends each event once', async () => {
      const account = await first.newAccount();
      const added = await account.callUntyped('POST', '/webhooks', { url: receiver.url, events: ['channel.needs_reconnect'] });
      assert.equal(added.status, 201);
      const count = 30;
      const { events, store } = first.services;
      await store.db.transaction().execute((tx) =>
        events.record(
          tx,
          account.id,
          Array.from({ length: count }, (_, i) => ({ type: 'channel.needs_reconnect' as const, data: { channel: { id: `c${i}` } } })),
        ),
      );
      events.announce();
      const settled = await eventually(
        async () => {
          const list = await deliveriesOf(account, added.body.id);
          return list.length === count && list.every((d) => d.state === 'delivered') ? list : undefined;
        },
        20_000,
        'all deliveries',
      );
      assert.equal(receiver.deliveries.length, count, 'no event was sent twice');
      assert.equal(new Set(receiver.deliveries.map((d) => d.headers['webhook-id'])).size, count);
      assert.deepEqual(receiver.deliveries.map((d) => d.json.data.channel.id).sort(), Array.from({ length: count }, (_, i) => `c${i}`).sort());
      assert.ok(
        settled.every((d) => d.attempts === 1),
        'settled.every((d) => d.attempts === 1)',
      );
      for (const d of receiver.deliveries) assert.ok(verifiesAsReceiver(added.body.secret, d), 'verifiesAsReceiver(added.body.secret, d)');
    });
  });
}
