import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startHerald, type TestHerald } from '../helpers/herald.ts';
import { testStores, storeSuite } from '../helpers/stores.ts';
import { WebClient } from '../accounts/web-client.ts';
import { startWrapcastFake, type WrapcastFake } from '../fakes/wrapcast.ts';
import { teardown } from '../helpers/teardown.ts';

/** The well-known development recovery phrase; its first account is the app's custody address here. */
const APP_MNEMONIC = 'test test test test test test test test test test test junk';
const APP_CUSTODY = '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266';
const APP_FID = 977233;

/**
 * Connecting Farcaster as a person does: Herald makes a signer, shows where to
 * approve it, and asks until the person has approved it in the Farcaster app
 * (the local Neynar approves 1.5 s after the link, on the wall clock).
 */
for (const store of await testStores()) {
  describe(`wrapcast connected by approval (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let fake: WrapcastFake;
    let web: WebClient;

    before(async () => {
      fake = await startWrapcastFake();
      fake.users.set(3, { fid: 3, username: 'dwr', display_name: 'Dan', pfp_url: 'https://img.example/dwr.png', follower_count: 410, following_count: 12 });
      fake.custody.set(APP_FID, APP_CUSTODY);
      herald = await startHerald(store, {
        env: {
          HERALD_WRAPCAST_API_URL: fake.url,
          HERALD_WRAPCAST_API_KEY: fake.apiKey,
          HERALD_WRAPCAST_APP_FID: String(APP_FID),
          HERALD_WRAPCAST_APP_MNEMONIC: APP_MNEMONIC,
        },
      });
      web = new WebClient(herald.url);
      await web.signUp('owner@example.com');
    });
    after(() =>
      teardown(
        () => herald?.close(),
        () => fake?.close(),
      ),
    );

    it('offers the approval in the network list', async () => {
      const networks = await web.app('GET', '/networks');
      assert.equal(networks.body.find((n: { identifier: string }) => n.identifier === 'wrapcast').approval, true);
    });

    it('makes a signer, shows the approval link, and connects the channel once the person approved it', async () => {
      fake.approval.fid = 3;
      const started = await web.app('POST', '/connect/wrapcast/approval');
      assert.equal(started.status, 201, JSON.stringify(started.body));
      assert.match(started.body.approvalUrl, /^https:\/\/client\.farcaster\.xyz\/deeplinks\/signed-key-request\?token=0x/);
      const registered = fake.calls('POST /v2/farcaster/signer/signed_key').at(-1)!;
      assert.equal(registered.json.app_fid, APP_FID);
      assert.equal(registered.json.signer_uuid, started.body.id);
      assert.ok(registered.json.deadline > Date.now() / 1000 + 3600, 'the person has hours to approve');
      assert.equal(registered.headers['x-api-key'], fake.apiKey);

      // Until the person approves, nothing is connected.
      const waiting = await web.app('GET', `/connect/wrapcast/approval/${started.body.id}`);
      assert.deepEqual(waiting.body, { status: 'pending', channel: null });
      assert.deepEqual((await web.app('GET', '/public/v1/integrations')).body, []);

      let answer = waiting;
      const giveUp = Date.now() + 10_000;
      while (answer.body.status === 'pending' && Date.now() < giveUp) {
        await new Promise((r) => setTimeout(r, 300));
        answer = await web.app('GET', `/connect/wrapcast/approval/${started.body.id}`);
      }
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      assert.equal(answer.body.status, 'approved');
      assert.equal(answer.body.channel.name, 'Dan');
      const listed = (await web.app('GET', '/public/v1/integrations')).body;
      assert.deepEqual(
        listed.map((c: { identifier: string; profile: string }) => [c.identifier, c.profile]),
        [['wrapcast', 'dwr']],
      );
    });

    it('refuses a key request signed by anyone but the app’s custody address', async () => {
      fake.custody.set(APP_FID, '0x000000000000000000000000000000000000dead');
      try {
        const started = await web.app('POST', '/connect/wrapcast/approval');
        assert.equal(started.status, 400, JSON.stringify(started.body));
        assert.match(started.body.message, /Invalid signature/);
      } finally {
        fake.custody.set(APP_FID, APP_CUSTODY);
      }
    });

    it('names the field of a signer id that is not one', async () => {
      const answer = await web.app('GET', '/connect/wrapcast/approval/not-a-signer');
      assert.equal(answer.status, 400, JSON.stringify(answer.body));
      assert.deepEqual(answer.body.errors, [{ path: 'id', message: 'this is not a signer id' }]);
    });
  });
}
