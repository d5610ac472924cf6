import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startHerald, type TestAccount, type TestHerald } from '../helpers/herald.ts';
import { testStores, storeSuite } from '../helpers/stores.ts';
import { entry, postBody } from '../helpers/api-fixtures.ts';
import { startWrapcastFake, type WrapcastFake } from '../fakes/wrapcast.ts';
import { channelView, publishNow, settled, uploadPng } from './publish.ts';
import { serverErrorAfterCreate } from './create-5xx.ts';
import { teardown } from '../helpers/teardown.ts';

const SIGNER = '19d0c5fd-9b33-4a48-a0e2-bc7b0555baec';
const PENDING = '7b2e4c61-0d8f-4a3b-9c5e-1f2a3b4c5d6e';
const OTHER_KEY = '0a9b8c7d-6e5f-4a3b-8c1d-0e9f8a7b6c5d';
const IN_NEYNAR = { __type: 'wrapcast', subreddit: [{ value: { id: 'neynar' } }] };

for (const store of await testStores()) {
  describe(`wrapcast (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let fake: WrapcastFake;
    let account: TestAccount;
    let channelId: string;

    const castsFor = (text: string) => fake.calls('POST /v2/farcaster/cast').filter((c) => c.json?.text === text);

    before(async () => {
      fake = await startWrapcastFake();
      fake.users.set(3, { fid: 3, username: 'dwr', display_name: 'Dan', pfp_url: 'https://img.example/dwr.png', follower_count: 410, following_count: 12 });
      fake.signers.set(SIGNER, { fid: 3, status: 'approved', apiKey: fake.apiKey });
      fake.signers.set(PENDING, { fid: 3, status: 'pending_approval', apiKey: fake.apiKey });
      fake.signers.set(OTHER_KEY, { fid: 3, status: 'approved', apiKey: 'SOMEONE-ELSES-KEY' });
      herald = await startHerald(store, {
        engine: { pollMs: 50, publishTimeoutMs: 1_500 },
        env: { HERALD_WRAPCAST_API_URL: fake.url, HERALD_WRAPCAST_API_KEY: fake.apiKey },
      });
      account = await herald.newAccount();
    });
    after(() =>
      teardown(
        () => herald?.close(),
        () => fake?.close(),
      ),
    );

    it('connects with an approved signer: looked up with the API key, the profile from user/bulk', async () => {
      const added = await account.callUntyped('POST', '/integrations', { identifier: 'wrapcast', credentials: { signerUuid: SIGNER } });
      assert.equal(added.status, 201, JSON.stringify(added.body));
      channelId = added.body.id;
      assert.equal(added.body.name, 'Dan');
      assert.equal(added.body.profile, 'dwr');
      assert.equal(added.body.picture, 'https://img.example/dwr.png');
      const [signer, bulk] = fake.requests.slice(-2);
      assert.equal(`${signer.method} ${signer.path}`, 'GET /v2/farcaster/signer');
      assert.deepEqual(signer.query, { signer_uuid: SIGNER });
      assert.equal(signer.headers['x-api-key'], fake.apiKey);
      assert.deepEqual(bulk.query, { fids: '3' });
      assert.doesNotMatch(JSON.stringify((await account.callUntyped('GET', '/integrations')).body), new RegExp(SIGNER));
    });

    it('refuses a signer not yet approved, one of another API key, and a malformed one, naming the field', async () => {
      const pending = await account.callUntyped('POST', '/integrations', { identifier: 'wrapcast', credentials: { signerUuid: PENDING } });
      assert.equal(pending.status, 400, JSON.stringify(pending.body));
      assert.equal(pending.body.errors[0].path, 'credentials');
      assert.match(pending.body.message, /pending_approval: approve it in the Farcaster app/);
      const foreign = await account.callUntyped('POST', '/integrations', { identifier: 'wrapcast', credentials: { signerUuid: OTHER_KEY } });
      assert.equal(foreign.status, 400);
      assert.match(foreign.body.message, /Farcaster answered 404: Signer not found/);
      const malformed = await account.callUntyped('POST', '/integrations', { identifier: 'wrapcast', credentials: { signerUuid: 'nope' } });
      assert.equal(malformed.status, 400);
      assert.equal(malformed.body.errors[0].path, 'credentials.signerUuid');
    });

    it('finds channels by name for the setting', async () => {
      const found = await account.callUntyped('POST', `/integration-trigger/${channelId}`, { methodName: 'channels', data: { q: 'dev' } });
      assert.equal(found.status, 200, JSON.stringify(found.body));
      assert.deepEqual(found.body.output, [{ id: 'dev', name: 'Developers' }]);
      assert.deepEqual(fake.calls('GET /v2/farcaster/channel/search').at(-1)!.query, { q: 'dev', limit: '10' });
    });

    it('casts text into a channel with an idem key, and links it on farcaster.xyz', async () => {
      const post = await settled(account, await publishNow(account, channelId, ['gm Farcaster ☀️'], IN_NEYNAR));
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      const [sent] = castsFor('gm Farcaster ☀️');
      assert.equal(sent.headers['x-api-key'], fake.apiKey);
      assert.deepEqual(Object.keys(sent.json).sort(), ['channel_id', 'idem', 'signer_uuid', 'text']);
      assert.equal(sent.json.signer_uuid, SIGNER);
      assert.equal(sent.json.channel_id, 'neynar');
      assert.match(sent.json.idem, /^[0-9a-f]{16}$/);
      const cast = fake.casts.at(-1)!;
      assert.equal(post.releaseId, cast.hash);
      assert.equal(post.releaseURL, `https://farcaster.xyz/dwr/${cast.hash}`);
    });

    it('sends images as URL embeds that the upload host serves', async () => {
      const a = await uploadPng(account, herald.api, 'a.png');
      const b = await uploadPng(account, herald.api, 'b.png');
      const post = await settled(
        account,
        await publishNow(account, channelId, [
          {
            content: 'two pictures',
            image: [
              { id: a.id, path: a.path },
              { id: b.id, path: b.path },
            ],
          },
        ]),
      );
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      const [sent] = castsFor('two pictures');
      assert.equal(sent.json.embeds.length, 2);
      assert.equal(sent.json.channel_id, undefined, 'no channel chosen');
      for (const { url } of sent.json.embeds) {
        const served = await fetch(url);
        assert.equal(served.status, 200);
        assert.deepEqual(Buffer.from(await served.arrayBuffer()), a.bytes);
      }
    });

    it('refuses before acceptance: over 1024 bytes of UTF-8, three images, two channels', async () => {
      const now = { date: new Date().toISOString() };
      // 400 characters, 1,200 bytes.
      const long = await account.callUntyped('POST', '/posts', postBody('now', [entry(channelId, ['€'.repeat(400)])], now));
      assert.equal(long.status, 400, JSON.stringify(long.body));
      assert.ok(
        long.body.errors.some((e: any) => e.path === 'posts.0.value.0.content' && /1024/.test(e.message)),
        JSON.stringify(long.body.errors),
      );
      const fits = await account.callUntyped('POST', '/posts', postBody('draft', [entry(channelId, ['€'.repeat(341)])], now));
      assert.equal(fits.status, 201, '1,023 bytes fit');
      const png = await uploadPng(account, herald.api);
      const three = Array.from({ length: 3 }, () => ({ id: png.id, path: png.path }));
      const many = await account.callUntyped('POST', '/posts', postBody('now', [entry(channelId, [{ content: 'three', image: three }])], now));
      assert.equal(many.status, 400, JSON.stringify(many.body));
      const channels = await account.callUntyped(
        'POST',
        '/posts',
        postBody(
          'now',
          [entry(channelId, ['two'], { settings: { __type: 'wrapcast', subreddit: [{ value: { id: 'neynar' } }, { value: { id: 'dev' } }] } })],
          now,
        ),
      );
      assert.equal(channels.status, 400);
      assert.ok(
        channels.body.errors.some((e: any) => String(e.path).startsWith('posts.0.settings.subreddit')),
        'an unusable channel entry is refused at its setting',
      );
    });

    it('publishes a thread as replies to the previous cast, outside the channel field', async () => {
      const post = await settled(account, await publishNow(account, channelId, ['root cast', 'reply one', 'reply two'], IN_NEYNAR));
      assert.deepEqual(
        post.thread.map((t) => t.state),
        ['PUBLISHED', 'PUBLISHED', 'PUBLISHED'],
      );
      const [root] = castsFor('root cast');
      const [one] = castsFor('reply one');
      const [two] = castsFor('reply two');
      assert.equal(root.json.parent, undefined);
      assert.equal(root.json.channel_id, 'neynar');
      assert.deepEqual([one.json.parent, one.json.parent_author_fid, one.json.channel_id], [post.thread[0].releaseId, 3, undefined]);
      assert.equal(two.json.parent, post.thread[1].releaseId);
      assert.notEqual(one.json.idem, two.json.idem, 'one idem key per item');
    });

    it('a cast whose answer never comes is sent again with the same idem (a repeat Neynar drops): one cast', async () => {
      fake.failNext('POST /v2/farcaster/cast', { handleThenHang: true });
      const before = fake.casts.length;
      const post = await settled(account, await publishNow(account, channelId, ['answer lost']), 20_000);
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      assert.deepEqual(
        post.thread[0].attempts.map((a) => a.outcome),
        ['retry', 'published'],
      );
      assert.match(post.thread[0].attempts[0].detail ?? '', /timed out/);
      const sent = castsFor('answer lost');
      assert.equal(sent.length, 2);
      assert.equal(sent[0].json.idem, sent[1].json.idem);
      assert.equal(fake.casts.length, before + 1, 'Neynar kept one cast');
      assert.equal(post.releaseId, fake.casts.at(-1)!.hash);
    });

    it('a server error after Neynar took the cast is retried with the same idem: one cast', async () => {
      fake.failNext('POST /v2/farcaster/cast', { handleFirst: true, status: 502, body: 'Bad Gateway', headers: { 'content-type': 'text/plain' } });
      const before = fake.casts.length;
      const post = await settled(account, await publishNow(account, channelId, ['taken then 502']), 20_000);
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      assert.deepEqual(
        post.thread[0].attempts.map((a) => a.outcome),
        ['retry', 'published'],
      );
      assert.equal(fake.casts.length, before + 1);
    });

    it('waits Retry-After on 429 and casts once', async () => {
      fake.failNext('POST /v2/farcaster/cast', {
        status: 429,
        body: { code: 'RateLimitExceeded', message: 'Too many requests' },
        headers: { 'retry-after': '1' },
      });
      const post = await settled(account, await publishNow(account, channelId, ['after 429']), 20_000);
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      assert.match(post.thread[0].attempts[0].detail ?? '', /Too many requests/);
      const [limited, sent] = castsFor('after 429');
      assert.ok(sent.at - limited.at >= 1000, 'Herald waited out the rate limit before sending again');
    });

    it("fails a refused cast with Neynar's message, without retrying", async () => {
      const post = await settled(
        account,
        await publishNow(account, channelId, ['where?'], { __type: 'wrapcast', subreddit: [{ value: { id: 'nochannel' } }] }),
      );
      assert.equal(post.state, 'ERROR');
      assert.match(post.error ?? '', /Farcaster answered 400: Channel not found/);
      assert.equal(castsFor('where?').length, 1);
      assert.equal((await channelView(account, channelId)).needsReconnect, false);
    });

    serverErrorAfterCreate(() => ({
      fake,
      account,
      publish: (text) => publishNow(account, channelId, [text], IN_NEYNAR),
      held: (text) => fake.casts.filter((c) => c.text === text).length,
    }));

    it("reports the account's followers", async () => {
      const figures = await account.callUntyped('GET', `/analytics/${channelId}?date=7`);
      assert.equal(figures.status, 200, JSON.stringify(figures.body));
      assert.deepEqual(
        figures.body.map((s: any) => [s.label, s.data[0].total]),
        [
          ['Followers', 410],
          ['Following', 12],
        ],
      );
    });

    it('marks the channel for reconnection when the signer is revoked', async () => {
      fake.signers.get(SIGNER)!.status = 'revoked';
      const post = await settled(account, await publishNow(account, channelId, ['after revoke']));
      assert.equal(post.state, 'ERROR');
      assert.match(post.error ?? '', /must be reconnected: Farcaster answered 403: Signer is revoked, not approved/);
      assert.equal((await channelView(account, channelId)).needsReconnect, true);
    });
  });
}
