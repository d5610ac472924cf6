import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { verifiedByStandardWebhooks } from '../helpers/standard-webhooks.ts';
import { untypedCaller, startHerald, type TestAccount, type TestHerald } from '../helpers/herald.ts';
import { testStores, storeSuite } from '../helpers/stores.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../fakes/webhook-receiver.ts';
import { addWebhookChannel, assertError, createPosts, entry, postBody, schedulePost } from '../helpers/api-fixtures.ts';
import { teardown } from '../helpers/teardown.ts';

const MINUTE = 60_000;

/**
 * The slot find-slot should answer, worked out independently: step minute by minute
 * from `after` and take the first minute whose wall-clock time in `zone` is a posting
 * time and at which no post is taken.
 */
function expectedSlot(zone: string, times: string[], after: number, taken: number[] = []): number {
  const wallClock = new Intl.DateTimeFormat('en-GB', { timeZone: zone, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
  const takenMinutes = new Set(taken.map((t) => Math.floor(t / MINUTE)));
  let at = Math.floor(after / MINUTE) * MINUTE + MINUTE;
  for (let i = 0; i < 8 * 1440; i++, at += MINUTE) {
    if (times.includes(wallClock.format(at)) && !takenMinutes.has(at / MINUTE)) return at;
  }
  throw new Error('no slot in 8 days');
}

/** Calls find-slot and checks it against the oracle (evaluated before and after the call, in case a slot passed meanwhile). */
async function assertSlot(account: TestAccount, channelId: string, zone: string, times: string[], taken: number[] = []): Promise<number> {
  const before = Date.now();
  const slot = await account.callUntyped('GET', `/find-slot/${channelId}`);
  const after = Date.now();
  assert.equal(slot.status, 200, JSON.stringify(slot.body));
  assert.match(slot.body.date, /^\d{4}-\d\d-\d\dT\d\d:\d\d:00\.000Z$/, 'an ISO 8601 UTC instant on a whole minute');
  const at = Date.parse(slot.body.date);
  assert.ok(at > before, 'the slot is in the future');
  const allowed = [expectedSlot(zone, times, before, taken), expectedSlot(zone, times, after, taken)];
  assert.ok(allowed.includes(at), `find-slot answered ${slot.body.date}, expected ${new Date(allowed[0]).toISOString()}`);
  return at;
}

for (const store of await testStores()) {
  describe(`integrations endpoints (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let receiver: WebhookReceiver;
    let account: TestAccount;

    before(async () => {
      herald = await startHerald(store);
      receiver = await startWebhookReceiver();
      account = await herald.newAccount();
    });
    after(() =>
      teardown(
        () => herald.close(),
        () => receiver.close(),
      ),
    );

    it('adds a webhook channel and lists it with the contract fields', async () => {
      const added = await account.callUntyped('POST', '/integrations', {
        identifier: 'webhook',
        name: 'Zapier',
        credentials: { url: `${receiver.url}?listed` },
        timeZone: 'Europe/Berlin',
        postingTimes: ['08:30'],
      });
      assert.equal(added.status, 201, JSON.stringify(added.body));
      assert.match(added.body.secrets.signingSecret, /^whsec_/);
      const list = await account.callUntyped('GET', '/integrations');
      assert.equal(list.status, 200);
      const listed = list.body.find((c: any) => c.id === added.body.id);
      assert.deepEqual(
        {
          id: listed.id,
          name: listed.name,
          identifier: listed.identifier,
          disabled: listed.disabled,
          customer: listed.customer,
          timeZone: listed.timeZone,
          postingTimes: listed.postingTimes,
        },
        { id: added.body.id, name: 'Zapier', identifier: 'webhook', disabled: false, customer: null, timeZone: 'Europe/Berlin', postingTimes: ['08:30'] },
      );
      assert.ok('picture' in listed && 'profile' in listed, "'picture' in listed && 'profile' in listed");
      assert.equal(listed.secrets, undefined, 'the signing secret is shown only once');
    });

    it('adding the same webhook URL again updates that channel instead of making a second one', async () => {
      const url = `${receiver.url}?again`;
      const first = await addWebhookChannel(account, { name: 'First name' }, url);
      const second = await addWebhookChannel(account, { name: 'Second name' }, url);
      assert.equal(second.id, first.id);
      const list = await account.callUntyped('GET', '/integrations');
      assert.deepEqual(
        list.body.filter((c: any) => c.id === first.id).map((c: any) => c.name),
        ['Second name'],
      );
    });

    it('refuses bad POST /integrations bodies with 400 naming the field, and adds nothing', async () => {
      const before = await account.callUntyped('GET', '/integrations');
      const cases: [unknown, string, number?][] = [
        [{ credentials: { url: receiver.url } }, 'identifier'],
        [{ identifier: 'no-such-network', credentials: { url: receiver.url } }, 'identifier'],
        [{ identifier: 'webhook', credentials: {} }, 'credentials.url'],
        [{ identifier: 'webhook', credentials: { url: 'ftp://127.0.0.1/x' } }, 'credentials.url'],
        [{ identifier: 'webhook', credentials: { url: 'http://169.254.169.254/latest' } }, 'credentials.url'],
        [{ identifier: 'webhook', credentials: { url: `${receiver.url}?tz` }, timeZone: 'Mars/Olympus_Mons' }, 'timeZone'],
        [{ identifier: 'webhook', credentials: { url: `${receiver.url}?pt` }, postingTimes: ['25:00'] }, 'postingTimes.0'],
        [{ identifier: 'webhook', credentials: { url: `${receiver.url}?cu` }, customer: 'no-such-customer' }, 'customer', 404],
      ];
      for (const [body, path, status = 400] of cases) {
        assertError(await account.callUntyped('POST', '/integrations', body), status, { path });
      }
      assert.deepEqual((await account.callUntyped('GET', '/integrations')).body, before.body);
    });

    it('filters GET /integrations by customer (?group=) and shows the customer', async () => {
      const customer = await account.callUntyped('POST', '/groups', { name: 'Acme' });
      assert.equal(customer.status, 201);
      const inGroup = await addWebhookChannel(account, { customer: customer.body.id });
      const outside = await addWebhookChannel(account);
      assert.deepEqual(inGroup.customer, { id: customer.body.id, name: 'Acme' });
      const grouped = await account.callUntyped('GET', `/integrations?group=${customer.body.id}`);
      assert.equal(grouped.status, 200);
      assert.deepEqual(
        grouped.body.map((c: any) => c.id),
        [inGroup.id],
      );
      const all = await account.callUntyped('GET', '/integrations');
      assert.ok(
        all.body.some((c: any) => c.id === outside.id) && all.body.some((c: any) => c.id === inGroup.id),
        'all.body.some((c: any) => c.id === outside.id) && all.body.some((c: any) => c.id === inGroup.id)',
      );

      const moved = await account.callUntyped('PATCH', `/integrations/${inGroup.id}`, { customer: null });
      assert.equal(moved.status, 200);
      assert.equal(moved.body.customer, null);
      assert.deepEqual((await account.callUntyped('GET', `/integrations?group=${customer.body.id}`)).body, []);
    });

    it('PATCH changes name, time zone, posting times and the disabled flag', async () => {
      const channel = await addWebhookChannel(account);
      const patched = await account.callUntyped('PATCH', `/integrations/${channel.id}`, {
        name: 'Renamed',
        timeZone: 'Asia/Tokyo',
        postingTimes: ['07:15', '19:45'],
        disabled: true,
      });
      assert.equal(patched.status, 200, JSON.stringify(patched.body));
      assert.deepEqual(
        { name: patched.body.name, timeZone: patched.body.timeZone, postingTimes: patched.body.postingTimes, disabled: patched.body.disabled },
        { name: 'Renamed', timeZone: 'Asia/Tokyo', postingTimes: ['07:15', '19:45'], disabled: true },
      );
      const listed = (await account.callUntyped('GET', '/integrations')).body.find((c: any) => c.id === channel.id);
      assert.equal(listed.name, 'Renamed');
      assert.equal(listed.disabled, true);
    });

    it('a disabled channel takes drafts but refuses scheduled posts until it is enabled again', async () => {
      const channel = await addWebhookChannel(account);
      assert.equal((await account.callUntyped('PATCH', `/integrations/${channel.id}`, { disabled: true })).status, 200);
      assertError(await account.callUntyped('POST', '/posts', postBody('schedule', [entry(channel.id, ['hello'])])), 400, { path: 'posts.0.integration.id' });
      const [draft] = await createPosts(account, postBody('draft', [entry(channel.id, ['a draft'])]));
      assertError(await account.callUntyped('PUT', `/posts/${draft.postId}/status`, { status: 'schedule' }), 400, { path: 'status' });
      assert.equal((await account.callUntyped('GET', `/posts/${draft.postId}`)).body.state, 'DRAFT');
      assert.equal((await account.callUntyped('PATCH', `/integrations/${channel.id}`, { disabled: false })).status, 200);
      await schedulePost(account, channel.id, 'hello again');
      assert.equal((await account.callUntyped('PUT', `/posts/${draft.postId}/status`, { status: 'schedule' })).status, 200);
    });

    it('refuses bad PATCH bodies with 400 naming the field, and changes nothing', async () => {
      const channel = await addWebhookChannel(account, { name: 'Unchanged' });
      const cases: [unknown, string, number?][] = [
        [{ timeZone: 'Not/AZone' }, 'timeZone'],
        [{ postingTimes: ['9am'] }, 'postingTimes.0'],
        [{ postingTimes: [] }, 'postingTimes'],
        [{ name: '' }, 'name'],
        [{ disabled: 'yes' }, 'disabled'],
        [{ customer: 'no-such-customer' }, 'customer', 404],
      ];
      for (const [body, path, status = 400] of cases) {
        assertError(await account.callUntyped('PATCH', `/integrations/${channel.id}`, body), status, { path });
      }
      const listed = (await account.callUntyped('GET', '/integrations')).body.find((c: any) => c.id === channel.id);
      assert.deepEqual(
        { name: listed.name, timeZone: listed.timeZone, postingTimes: listed.postingTimes, disabled: listed.disabled, customer: listed.customer },
        { name: 'Unchanged', timeZone: channel.timeZone, postingTimes: channel.postingTimes, disabled: false, customer: null },
      );
    });

    it('DELETE removes the channel and its pending posts, keeps published ones, and is 404 the second time', async () => {
      const channel = await addWebhookChannel(account);
      const [queued] = await createPosts(account, postBody('schedule', [entry(channel.id, ['first', { content: 'reply', delay: 5 }])]));
      const [draft] = await createPosts(account, postBody('draft', [entry(channel.id, ['a draft'])]));
      const published = await schedulePost(account, channel.id, 'published by hand');
      assert.equal((await account.callUntyped('PUT', `/posts/${published}/release-id`, { releaseId: 'net-1' })).status, 200);
      const replyId = (await account.callUntyped('GET', `/posts/${queued.postId}`)).body.thread[1].id;

      const removed = await account.callUntyped('DELETE', `/integrations/${channel.id}`);
      assert.equal(removed.status, 200);
      assert.deepEqual(removed.body, { deleted: true, id: channel.id });

      assert.ok(
        !(await account.callUntyped('GET', '/integrations')).body.some((c: any) => c.id === channel.id),
        "!(await account.callUntyped('GET', '/integrations')).body.some((c: any) => c.id === channel.id)",
      );
      for (const id of [queued.postId, replyId, draft.postId]) assertError(await account.callUntyped('GET', `/posts/${id}`), 404);
      const kept = await account.callUntyped('GET', `/posts/${published}`);
      assert.equal(kept.status, 200);
      assert.equal(kept.body.state, 'PUBLISHED');
      assertError(await account.callUntyped('DELETE', `/integrations/${channel.id}`), 404);
      assertError(await account.callUntyped('GET', `/find-slot/${channel.id}`), 404);
      assertError(await account.callUntyped('POST', '/posts', postBody('schedule', [entry(channel.id, ['too late'])])), 404, {
        path: 'posts.0.integration.id',
      });
    });

    it('find-slot honours the time zone: America/New_York 09:00 is 13:00Z in summer, 14:00Z in winter', async () => {
      const channel = await addWebhookChannel(account, { timeZone: 'America/New_York', postingTimes: ['09:00'] });
      const at = await assertSlot(account, channel.id, 'America/New_York', ['09:00']);
      assert.ok(
        [13, 14].includes(new Date(at).getUTCHours()) && new Date(at).getUTCMinutes() === 0,
        '[13, 14].includes(new Date(at).getUTCHours()) && new Date(at).getUTCMinutes() === 0',
      );
      const summerOffset = new Intl.DateTimeFormat('en-US', { timeZone: 'America/New_York', timeZoneName: 'short' }).format(at).endsWith('EDT');
      assert.equal(new Date(at).getUTCHours(), summerOffset ? 13 : 14);
    });

    it('find-slot follows a changed time zone (Asia/Kolkata 09:00 is 03:30Z)', async () => {
      const channel = await addWebhookChannel(account, { timeZone: 'UTC', postingTimes: ['09:00'] });
      assert.equal((await account.callUntyped('PATCH', `/integrations/${channel.id}`, { timeZone: 'Asia/Kolkata' })).status, 200);
      const at = await assertSlot(account, channel.id, 'Asia/Kolkata', ['09:00']);
      assert.deepEqual([new Date(at).getUTCHours(), new Date(at).getUTCMinutes()], [3, 30]);
    });

    it('find-slot skips a minute that already has a post of that channel, and frees it when the post goes', async () => {
      const times = ['09:00', '17:00'];
      const channel = await addWebhookChannel(account, { timeZone: 'UTC', postingTimes: times });
      const other = await addWebhookChannel(account, { timeZone: 'UTC', postingTimes: times });
      const first = await assertSlot(account, channel.id, 'UTC', times);

      await schedulePost(account, other.id, 'another channel at that minute', new Date(first).toISOString());
      assert.equal(await assertSlot(account, channel.id, 'UTC', times), first, "another channel's post does not take the slot");

      const atThatMinute = await schedulePost(account, channel.id, 'thirty seconds in', new Date(first + 30_000).toISOString());
      const second = await assertSlot(account, channel.id, 'UTC', times, [first]);
      assert.notEqual(second, first);

      await schedulePost(account, channel.id, 'on the second slot', new Date(second).toISOString());
      const third = await assertSlot(account, channel.id, 'UTC', times, [first, second]);
      assert.ok(third > second, 'third > second');

      assert.equal((await account.callUntyped('DELETE', `/posts/${atThatMinute}`)).status, 200);
      assert.equal(await assertSlot(account, channel.id, 'UTC', times, [second]), first);
    });

    it('integration-settings gives rules, maxLength, a JSON schema of the settings and the tools', async () => {
      const channel = await addWebhookChannel(account);
      const settings = await account.callUntyped('GET', `/integration-settings/${channel.id}`);
      assert.equal(settings.status, 200, JSON.stringify(settings.body));
      const { output } = settings.body;
      assert.equal(typeof output.rules, 'string');
      assert.ok(output.rules.length > 0, 'output.rules.length > 0');
      assert.equal(typeof output.maxLength, 'number');
      assert.equal(output.settings.type, 'object', 'settings is a JSON schema');
      assert.ok(
        output.tools.some((t: any) => t.methodName === 'sendTest' && typeof t.description === 'string'),
        "output.tools.some((t: any) => t.methodName === 'sendTest' && typeof t.description === 'string')",
      );

      // maxLength is the limit POST /posts applies.
      assertError(await account.callUntyped('POST', '/posts', postBody('schedule', [entry(channel.id, ['x'.repeat(output.maxLength + 1)])])), 400, {
        path: 'posts.0.value.0.content',
      });
      await schedulePost(account, channel.id, 'x'.repeat(output.maxLength));
    });

    it("a webhook channel's URL (often a secret itself) is stored only sealed, and still found again", async () => {
      const url = `${receiver.url}?token=${'s3cr3t'.repeat(4)}`;
      const added = await addWebhookChannel(account, { name: 'Sealed URL' }, url);
      const row = await herald.services.store.db.selectFrom('channels').selectAll().where('id', '=', added.id).executeTakeFirstOrThrow();
      assert.equal(JSON.stringify(row).includes('s3cr3t'), false, `the URL appears nowhere in the row: ${row.external_id}`);
      assert.equal((await addWebhookChannel(account, {}, url)).id, added.id, 'the same URL finds the same channel');

      // A row as an older Herald stored it (the URL in the clear) is hidden at the next start.
      await herald.services.store.db.updateTable('channels').set({ external_id: url }).where('id', '=', added.id).execute();
      assert.equal(await herald.services.channels.hideSecretExternalIds(), 1);
      const hidden = await herald.services.store.db.selectFrom('channels').select('external_id').where('id', '=', added.id).executeTakeFirstOrThrow();
      assert.equal(hidden.external_id.includes('s3cr3t'), false);
      assert.equal((await addWebhookChannel(account, {}, url)).id, added.id, 'and is found again');
    });

    it('sendTest sends something, so a channels:read key may not run it; channels:write may', async () => {
      const channel = await addWebhookChannel(account, { name: 'Scoped' }, `${receiver.url}?scoped`);
      const readOnly = untypedCaller(herald.api, (await herald.services.accounts.createKey(account.id, 'reader', ['channels:read'])).key);
      const count = receiver.deliveries.length;
      assertError(await readOnly('POST', `/integration-trigger/${channel.id}`, { methodName: 'sendTest' }), 403, { path: 'headers.authorization' });
      assert.equal(receiver.deliveries.length, count, 'nothing was sent');
      const writer = untypedCaller(herald.api, (await herald.services.accounts.createKey(account.id, 'writer', ['channels:read', 'channels:write'])).key);
      const sent = await writer('POST', `/integration-trigger/${channel.id}`, { methodName: 'sendTest' });
      assert.equal(sent.status, 200, JSON.stringify(sent.body));
      assert.equal(receiver.deliveries.length, count + 1);
    });

    it('adding a webhook URL that is already a channel keeps its signing secret (its receiver holds it) and shows no new one', async () => {
      const url = `${receiver.url}?same-secret`;
      const first = await addWebhookChannel(account, { name: 'Once' }, url);
      const again = await account.callUntyped('POST', '/integrations', { identifier: 'webhook', credentials: { url } });
      assert.equal(again.status, 201, JSON.stringify(again.body));
      assert.equal(again.body.id, first.id, 'the same channel');
      assert.equal(again.body.secrets, undefined, 'no secret is shown again');
      const count = receiver.deliveries.length;
      const sent = await account.callUntyped('POST', `/integration-trigger/${first.id}`, { methodName: 'sendTest' });
      assert.equal(sent.status, 200);
      const ping = receiver.deliveries[count];
      assert.ok(verifiedByStandardWebhooks(first.secrets!.signingSecret, ping.headers, ping.body), 'still signed with the first secret');
    });

    it('integration-trigger sendTest delivers a signed ping; an unknown method is 404', async () => {
      const channel = await addWebhookChannel(account, { name: 'Pinged' }, `${receiver.url}?ping`);
      const count = receiver.deliveries.length;
      const triggered = await account.callUntyped('POST', `/integration-trigger/${channel.id}`, { methodName: 'sendTest', data: {} });
      assert.equal(triggered.status, 200, JSON.stringify(triggered.body));
      assert.equal(triggered.body.output.ok, true);
      assert.equal(receiver.deliveries.length, count + 1);
      const ping = receiver.deliveries[count];
      assert.equal(ping.json.type, 'ping');
      assert.equal(ping.json.channel.id, channel.id);
      assert.ok(verifiedByStandardWebhooks(channel.secrets!.signingSecret, ping.headers, ping.body), 'the ping is signed with the channel secret');

      receiver.respond(() => ({ status: 500 }));
      try {
        const failing = await account.callUntyped('POST', `/integration-trigger/${channel.id}`, { methodName: 'sendTest' });
        assert.equal(failing.status, 200);
        assert.equal(failing.body.output.ok, false, 'a receiver error is reported in the output');
      } finally {
        receiver.respond(() => undefined);
      }

      assertError(await account.callUntyped('POST', `/integration-trigger/${channel.id}`, { methodName: 'listBoards' }), 404, { path: 'methodName' });
      assertError(await account.callUntyped('POST', `/integration-trigger/${channel.id}`, { methodName: 'constructor' }), 404, { path: 'methodName' });
      assertError(await account.callUntyped('POST', `/integration-trigger/${channel.id}`, {}), 400, { path: 'methodName' });
      assert.equal(receiver.deliveries.length, count + 2, 'refused triggers deliver nothing');
    });

    it('GET /social/{provider}: unknown provider 404, webhook 400 explaining it connects with credentials', async () => {
      assertError(await account.callUntyped('GET', '/social/myspace'), 404);
      assertError(await account.callUntyped('GET', '/social/webhook'), 400, { message: /credentials/ });
      assert.match((await account.callUntyped('GET', '/social/webhook')).body.message, /POST \/api\/public\/v1\/integrations/);
    });

    it('a network without figures says so plainly (400 analytics_unavailable), and the routes check their input', async () => {
      const channel = await addWebhookChannel(account);
      const postId = await schedulePost(account, channel.id, 'counted?');
      for (const route of [`/analytics/${channel.id}`, `/analytics/${channel.id}?date=7`, `/analytics/post/${postId}`, `/analytics/post/${postId}?date=30`]) {
        const answer = await account.callUntyped('GET', route);
        assertError(answer, 400, { code: 'analytics_unavailable', message: /^Webhook does not report analytics for a (channel|post) through its API/ });
      }
      assertError(await account.callUntyped('GET', `/analytics/${channel.id}?date=abc`), 400, { path: 'date' });
      assertError(await account.callUntyped('GET', `/analytics/${channel.id}?date=0`), 400, { path: 'date' });
      assertError(await account.callUntyped('GET', `/analytics/${channel.id}?date=366`), 400, { path: 'date' });
      assertError(await account.callUntyped('GET', '/analytics/no-such-channel'), 404);
      assertError(await account.callUntyped('GET', '/analytics/post/no-such-post'), 404);
    });
  });
}
