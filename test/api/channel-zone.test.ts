/**
 * A channel starts in the zone of the person who connects it (issue 30): the
 * web app sends the browser's zone as `timeZone` when it starts an OAuth
 * connection; a channel that already exists keeps its own, and without the
 * option the API's default (UTC) is unchanged.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startHerald, type TestAccount, type TestHerald } from '../helpers/herald.ts';
import { testStores, storeSuite } from '../helpers/stores.ts';
import { connectOAuth } from '../helpers/connect.ts';
import { startXFake, X_CONSUMER, type XFake } from '../fakes/x.ts';
import { listedChannel } from '../networks/support.ts';
import { teardown } from '../helpers/teardown.ts';

for (const store of await testStores()) {
  describe(`the zone a new channel starts in (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let fake: XFake;
    let account: TestAccount;

    before(async () => {
      fake = await startXFake();
      herald = await startHerald(store, { env: { HERALD_X_API_KEY: X_CONSUMER.key, HERALD_X_API_SECRET: X_CONSUMER.secret, HERALD_X_API_URL: fake.url } });
      account = await herald.newAccount();
    });
    after(() =>
      teardown(
        () => herald?.close(),
        () => fake?.close(),
      ),
    );

    it('refuses a zone that does not exist, naming the field', async () => {
      const refused = await account.call('GET', '/social/x?timeZone=Europe%2FAtlantis');
      assert.equal(refused.status, 400);
      assert.deepEqual(
        refused.body.errors.map((e: { path: string }) => e.path),
        ['timeZone'],
      );
    });

    it("starts an OAuth channel in the connecting person's zone, and keeps it when the channel is connected again", async () => {
      const connected = await connectOAuth(herald, account, 'x', { query: { timeZone: 'Europe/Paris' } });
      assert.equal((await listedChannel(account, connected.id)).timeZone, 'Europe/Paris');
      const again = await connectOAuth(herald, account, 'x', { query: { timeZone: 'Asia/Tokyo' } });
      assert.equal(again.id, connected.id);
      assert.equal((await listedChannel(account, connected.id)).timeZone, 'Europe/Paris', 'a reconnection keeps the zone the channel has');
    });

    it('leaves the API default as it was: UTC without a zone', async () => {
      const created = await account.call('POST', '/integrations', { identifier: 'webhook', name: 'Hook', credentials: { url: 'http://127.0.0.1:9/hook' } });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      assert.equal((await listedChannel(account, created.body.id)).timeZone, 'UTC');
    });
  });
}
