import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { connectOAuth } from '../helpers/connect.ts';
import { startHerald, type TestAccount, type TestHerald } from '../helpers/herald.ts';
import { testStores, storeSuite } from '../helpers/stores.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../fakes/webhook-receiver.ts';
import { PINTEREST_APP, startPinterestFake, type PinterestFake } from '../fakes/pinterest.ts';
import { startThreadsFake, TH_APP, type ThreadsFake } from '../fakes/threads.ts';
import { listedChannel } from '../networks/support.ts';
import { teardown } from '../helpers/teardown.ts';

const DAY = 24 * 60 * 60_000;

/**
 * Channels that do not publish keep their access: the engines renew it in the
 * background, on a clock the test moves (the networks' fakes follow the same clock).
 */
for (const store of await testStores()) {
  describe(`background token renewal (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let second: TestHerald;
    let pinterest: PinterestFake;
    let threads: ThreadsFake;
    let receiver: WebhookReceiver;
    let account: TestAccount;
    // Renewal runs only when the test says, at the time it says.
    const engine = { pollMs: 50, renewEveryMs: 24 * 60 * 60_000 };

    before(async () => {
      pinterest = await startPinterestFake();
      threads = await startThreadsFake();
      receiver = await startWebhookReceiver();
      const env = {
        HERALD_PINTEREST_CLIENT_ID: PINTEREST_APP.id,
        HERALD_PINTEREST_CLIENT_SECRET: PINTEREST_APP.secret,
        HERALD_PINTEREST_AUTH_URL: pinterest.url,
        HERALD_PINTEREST_API_URL: pinterest.url,
        HERALD_THREADS_CLIENT_ID: TH_APP.id,
        HERALD_THREADS_CLIENT_SECRET: TH_APP.secret,
        HERALD_THREADS_API_URL: threads.url,
        HERALD_THREADS_LOGIN_URL: threads.url,
      };
      herald = await startHerald(store, { engine, env });
      // A second worker on the same store.
      second = await startHerald(store, { engine, env, databaseUrl: herald.services.config.databaseUrl, dataDir: herald.dataDir });
      account = await herald.newAccount();
    });
    after(() =>
      teardown(
        () => second?.close(),
        () => herald?.close(),
        () => Promise.all([pinterest?.close(), threads?.close(), receiver?.close()]),
      ),
    );

    const refreshes = (fake: PinterestFake) => fake.calls('POST /v5/oauth/token').filter((r) => r.form?.grant_type === 'refresh_token');
    const storedConfig = async (channelId: string) => {
      const row = await herald.services.store.db.selectFrom('channels').selectAll().where('id', '=', channelId).executeTakeFirstOrThrow();
      return { row, config: herald.services.channels.publishView(row).config as Record<string, any> };
    };

    it('keeps an idle Pinterest channel alive: its refresh token is used before Pinterest lets it lapse after 60 unused days', async () => {
      const { id } = await connectOAuth(herald, account, 'pinterest');
      const connected = await storedConfig(id);
      assert.ok(connected.row.renew_at! > Date.now() + 6 * DAY && connected.row.renew_at! < Date.now() + 8 * DAY, 'renewed within a week');

      assert.equal(await herald.engine!.renewal.run(Date.now()), 0, 'nothing is due yet');
      assert.equal(refreshes(pinterest).length, 0);

      // Day 8: due. Both workers look at once; one renews.
      let day = 8;
      pinterest.clock = () => Date.now() + day * DAY;
      const both = await Promise.all([herald.engine!.renewal.run(Date.now() + day * DAY), second.engine!.renewal.run(Date.now() + day * DAY)]);
      assert.equal(both[0] + both[1], 1, 'renewed once across the workers');
      assert.equal(refreshes(pinterest).length, 1);
      assert.equal(refreshes(pinterest)[0].form!.refresh_token, connected.config.refreshToken);
      const renewed = await storedConfig(id);
      assert.notEqual(renewed.config.refreshToken, connected.config.refreshToken, 'the rotated refresh token is kept');
      assert.notEqual(renewed.config.accessToken, connected.config.accessToken);

      // Every week after: 70 days on, the channel still works, though it never published.
      for (day = 16; day <= 72; day += 8) {
        pinterest.clock = () => Date.now() + day * DAY;
        assert.equal(await herald.engine!.renewal.run(Date.now() + day * DAY), 1, `day ${day}`);
      }
      assert.equal((await listedChannel(account, id)).needsReconnect, false);
      pinterest.clock = Date.now;
    });

    it('renews a Threads token, which only renews itself while valid, a week and a day before it lapses', async () => {
      threads.lifetime = 60 * 86_400;
      const { id } = await connectOAuth(herald, account, 'threads');
      const before = await storedConfig(id);
      const lapses = before.config.tokenExpiresAt as number;
      const calls = () => threads.calls('GET /refresh_access_token').length;
      const from = calls();
      await herald.engine!.renewal.run(lapses - 10 * DAY);
      assert.equal(calls(), from, 'not yet');
      await herald.engine!.renewal.run(lapses - 7.5 * DAY);
      assert.equal(calls(), from + 1);
      assert.notEqual((await storedConfig(id)).config.accessToken, before.config.accessToken);
    });

    it('marks a channel whose renewal is refused for reconnection, with a notification and channel.needs_reconnect', async () => {
      const hook = await account.call('POST', '/webhooks', { url: receiver.url, events: ['channel.needs_reconnect'] });
      assert.equal(hook.status, 201, JSON.stringify(hook.body));
      const { id } = await connectOAuth(herald, account, 'pinterest');
      // Nobody renewed it for 61 days (no engine ran): Pinterest no longer takes the refresh token.
      pinterest.clock = () => Date.now() + 61 * DAY;
      const tried = refreshes(pinterest).length;
      await herald.engine!.renewal.run(Date.now() + 61 * DAY);
      assert.equal(refreshes(pinterest).length, tried + 1, 'it tried');
      const channel = await listedChannel(account, id);
      assert.equal(channel.needsReconnect, true);
      const notes = await account.call('GET', '/notifications');
      assert.ok(JSON.stringify(notes.body).includes('must be reconnected'), JSON.stringify(notes.body));
      const deliveries = await herald.services.webhooks.deliveries(account.id, hook.body.id, 0);
      const event = deliveries.deliveries.find((d: any) => d.event === 'channel.needs_reconnect');
      assert.ok(event, JSON.stringify(deliveries));
      // A channel waiting for its owner is not tried again.
      await herald.engine!.renewal.run(Date.now() + 70 * DAY);
      assert.equal(refreshes(pinterest).length, tried + 1);
      pinterest.clock = Date.now;
    });
  });
}
