import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { connectOAuth } from '../helpers/connect.ts';
import { untypedCaller, startHerald, type TestAccount, type TestHerald, testAccount } from '../helpers/herald.ts';
import { testStores, storeSuite } from '../helpers/stores.ts';
import { WebClient } from '../accounts/web-client.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../fakes/webhook-receiver.ts';
import { MEWE_APP, startMeWeFake, type MeWeFake } from '../fakes/mewe.ts';
import { listedChannel } from '../networks/support.ts';
import { publishNow, settled } from '../networks/publish.ts';
import { teardown } from '../helpers/teardown.ts';

const HOUR = 60 * 60_000;
const DAY = 24 * HOUR;

/**
 * A channel whose access cannot be renewed (MeWe has no refresh) publishes until
 * its token really lapses; its owner is warned a week and a day ahead, once each,
 * and only the lapse marks it for reconnection. Renewal runs on a clock the test moves.
 */
for (const store of await testStores()) {
  describe(`access that cannot be renewed (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let second: TestHerald;
    let mewe: MeWeFake;
    let receiver: WebhookReceiver;
    let web: WebClient;
    let account: TestAccount;
    let hookId: string;
    const engine = { pollMs: 50, publishTimeoutMs: 2_000, renewEveryMs: DAY };

    before(async () => {
      mewe = await startMeWeFake();
      receiver = await startWebhookReceiver();
      const env = {
        HERALD_MEWE_APP_ID: MEWE_APP.appId,
        HERALD_MEWE_API_KEY: MEWE_APP.apiKey,
        HERALD_MEWE_SITE_URL: mewe.url,
        HERALD_POSTS_PER_HOUR: '1000',
      };
      herald = await startHerald(store, { engine, env });
      second = await startHerald(store, { engine, env, databaseUrl: herald.services.config.databaseUrl, dataDir: herald.dataDir });
      // A person signed in to the web app, whose account also has an API key.
      web = new WebClient(herald.url);
      await web.signUp('owner@example.com');
      const user = await herald.services.store.db.selectFrom('users').select('account_id').where('email', '=', 'owner@example.com').executeTakeFirstOrThrow();
      const { key } = await herald.services.accounts.createKey(user.account_id, 'test');
      account = testAccount(herald.api, user.account_id, key);
      const hook = await account.callUntyped('POST', '/webhooks', { url: receiver.url, events: ['channel.needs_reconnect'] });
      assert.equal(hook.status, 201, JSON.stringify(hook.body));
      hookId = hook.body.id;
    });
    after(() =>
      teardown(
        () => second?.close(),
        () => herald?.close(),
        () => Promise.all([mewe?.close(), receiver?.close()]),
      ),
    );

    const lapseOf = async (channelId: string) => {
      const row = await herald.services.store.db.selectFrom('channels').selectAll().where('id', '=', channelId).executeTakeFirstOrThrow();
      return herald.services.channels.publishView(row).config.expiresAt as number;
    };
    const notes = async (channelName: string) => {
      const page = await account.callUntyped('GET', '/notifications');
      return (page.body.notifications as { content: string }[]).filter((n) => n.content.includes(channelName));
    };
    const events = async (channelId: string) => {
      const page = await herald.services.webhooks.deliveries(account.id, hookId, 0);
      return page.deliveries.filter((d: any) => d.payload.data.channel.id === channelId).map((d: any) => d.payload.data);
    };
    const expiring = async () => {
      const answer = await web.app('GET', '/channels/expiring');
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      return answer.body as { id: string; accessExpiresAt: string }[];
    };

    it('warns 7 days and 1 day before the token lapses, each once, and asks for reconnection only at the lapse', async () => {
      mewe.lifetimeMs = 30 * DAY;
      const { id, name } = await connectOAuth(herald, account, 'mewe');
      const lapse = await lapseOf(id);
      const run = (at: number) => Promise.all([herald.engine!.renewal.run(at), second.engine!.renewal.run(at)]);

      await run(lapse - 10 * DAY);
      assert.deepEqual(await notes(name), [], 'nothing to say ten days ahead');
      assert.deepEqual(await expiring(), []);

      // A week ahead, both workers look twice: one warning.
      await run(lapse - 7 * DAY + HOUR);
      await run(lapse - 7 * DAY + 2 * HOUR);
      const week = await notes(name);
      assert.equal(week.length, 1, JSON.stringify(week));
      assert.match(week[0].content, /ends in 7 days .*connect it again/);
      const weekEvents = await events(id);
      assert.equal(weekEvents.length, 1);
      assert.equal(weekEvents[0].accessExpiresAt, new Date(lapse).toISOString());
      assert.equal((await listedChannel(account, id)).needsReconnect, false, 'it still publishes');
      assert.deepEqual(await expiring(), [{ id, accessExpiresAt: new Date(lapse).toISOString() }]);

      await run(lapse - 3 * DAY);
      assert.equal((await notes(name)).length, 1, 'no warning between the two');

      await run(lapse - DAY + HOUR);
      await run(lapse - DAY + 2 * HOUR);
      const day = await notes(name);
      assert.equal(day.length, 2, JSON.stringify(day));
      assert.match(day[0].content, /ends in 23 hours/);
      assert.equal((await events(id)).length, 2);
      assert.equal((await listedChannel(account, id)).needsReconnect, false);

      // The token lapses: now the channel needs its owner.
      await run(lapse + HOUR);
      assert.equal((await listedChannel(account, id)).needsReconnect, true);
      const last = await notes(name);
      assert.equal(last.length, 3);
      assert.match(last[0].content, /must be reconnected: its access to MeWe ended on/);
      assert.equal((await events(id)).length, 3);
      assert.deepEqual(await expiring(), [], 'no longer expiring: it has expired');

      // Connecting again starts afresh.
      await connectOAuth(herald, account, 'mewe');
      assert.equal((await listedChannel(account, id)).needsReconnect, false);
      assert.deepEqual(await expiring(), []);
    });

    it('keeps publishing with a token that has hours left, though it cannot be renewed', async () => {
      mewe.lifetimeMs = 12 * HOUR;
      const { id, name } = await connectOAuth(herald, account, 'mewe');
      const before = (await notes(name)).length;
      await herald.engine!.renewal.run(Date.now());
      assert.equal((await listedChannel(account, id)).needsReconnect, false, 'not cut off with half a day left');
      const warned = await notes(name);
      assert.equal(warned.length, before + 1, 'only the nearest warning, once');
      assert.match(warned[0].content, /ends in 12 hours/);

      const post = await settled(account, await publishNow(account, id, ['Still here']));
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      assert.equal(mewe.posts.at(-1)?.text, 'Still here');
    });

    it('publishes in the last minutes of a token that cannot be renewed', async () => {
      mewe.lifetimeMs = 3 * 60_000;
      const { id } = await connectOAuth(herald, account, 'mewe');
      const post = await settled(account, await publishNow(account, id, ['Last minutes']));
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      assert.equal((await listedChannel(account, id)).needsReconnect, false);
    });
  });
}
