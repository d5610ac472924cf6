import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { eventually, startHerald, type TestAccount, type TestHerald } from '../helpers/herald.ts';
import { testStores, storeSuite } from '../helpers/stores.ts';
import { connectOAuth, followToCallback, startConnect } from '../helpers/connect.ts';
import { MEWE_APP, MEWE_USER, startMeWeFake, type MeWeFake } from '../fakes/mewe.ts';
import { channelView, publishNow, settled, uploadPng } from './publish.ts';
import { uploadMp4 } from './support.ts';
import { serverErrorAfterCreate } from './create-5xx.ts';
import { teardown } from '../helpers/teardown.ts';

for (const store of await testStores()) {
  describe(`mewe (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let fake: MeWeFake;
    let account: TestAccount;
    let channelId: string;

    before(async () => {
      fake = await startMeWeFake();
      herald = await startHerald(store, {
        engine: { pollMs: 50, publishTimeoutMs: 1_000 },
        env: {
          HERALD_MEWE_APP_ID: MEWE_APP.appId,
          HERALD_MEWE_API_KEY: MEWE_APP.apiKey,
          HERALD_MEWE_SITE_URL: fake.url,
          HERALD_MEWE_CALM_SECONDS: '1',
          HERALD_POSTS_PER_HOUR: '1000',
        },
      });
      account = await herald.newAccount();
    });
    after(() =>
      teardown(
        () => herald?.close(),
        () => fake?.close(),
      ),
    );

    it('says so when MeWe has not confirmed the sign-in yet (pending)', async () => {
      fake.pendingNext = true;
      const finished = await followToCallback(herald, await startConnect(account, 'mewe'));
      assert.equal(finished.status, 400, JSON.stringify(finished.body));
      assert.match(finished.body.message, /has not confirmed the sign-in yet/);
      assert.equal((await account.callUntyped('GET', '/integrations')).body.length, 0);
    });

    it('connects through the MeWe sign-in: loginRequestToken for an API token, with the app id and key', async () => {
      const connected = await connectOAuth(herald, account, 'mewe');
      channelId = connected.id;
      assert.equal(connected.name, 'Mia Weber');
      const login = fake.state.login;
      assert.equal(login.client_id, MEWE_APP.appId);
      assert.equal(login.redirect_uri, `${herald.url}/connect/mewe/callback`);
      const exchange = fake.calls('GET /api/dev/token').at(-1)!;
      assert.equal(exchange.headers['x-app-id'], MEWE_APP.appId);
      assert.equal(exchange.headers['x-api-key'], MEWE_APP.apiKey);
      assert.match(exchange.query.loginRequestToken, /^lrt-/);
      const me = fake.calls('GET /api/dev/me').at(-1)!;
      assert.equal(me.headers.authorization, 'Bearer mewe-token-1');
      assert.equal(me.headers['x-app-id'], MEWE_APP.appId);
      const listed = await channelView(account, channelId);
      assert.equal(listed.profile, MEWE_USER.handle);
      assert.doesNotMatch(JSON.stringify((await account.callUntyped('GET', '/integrations')).body), /mewe-token|mewe-api-key/);
    });

    it('posts to the timeline (MeWe answers 204 without an id); a second thread item is left out', async () => {
      const post = await settled(account, await publishNow(account, channelId, ['Hello MeWe', 'no replies here']));
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      assert.equal(post.thread.length, 1);
      assert.match(post.warning, /no threads/);
      const sent = fake.calls('POST /api/dev/me/post').at(-1)!;
      assert.deepEqual(sent.json, { text: 'Hello MeWe' });
      assert.equal(sent.headers.authorization, 'Bearer mewe-token-1');
      assert.equal(sent.headers['x-app-id'], MEWE_APP.appId);
      assert.deepEqual(fake.posts.at(-1), { where: 'timeline', text: 'Hello MeWe', photos: [] });
      assert.equal(post.releaseId, `herald-${post.thread[0].id}`);
      assert.equal(post.releaseURL, `${fake.url}/i/${MEWE_USER.handle}`);
    });

    it('uploads photos (field file) and posts them to a group; lists the groups across pages', async () => {
      const tool = await account.callUntyped('POST', `/integration-trigger/${channelId}`, { methodName: 'listGroups' });
      assert.equal(tool.status, 200, JSON.stringify(tool.body));
      assert.deepEqual(
        tool.body.output.map((g: { id: string }) => g.id),
        ['g1', 'g2', 'g3', 'g4', 'g5'],
      );
      assert.equal(fake.calls('GET /api/dev/groups').length, 3, 'followed nextPage to the end');

      const png = await uploadPng(account, herald.api);
      const post = await settled(
        account,
        await publishNow(account, channelId, [{ content: 'For the group', media: [png] }], { __type: 'mewe', postType: 'group', group: 'g3' }),
      );
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      const upload = fake.calls('POST /api/dev/photo/upload').at(-1)!;
      assert.equal(upload.multipart?.files[0].name, 'file');
      assert.deepEqual(upload.multipart?.files[0].data, png.bytes);
      const sent = fake.calls('POST /api/dev/group/:groupId/post').at(-1)!;
      assert.equal(sent.params.groupId, 'g3');
      assert.deepEqual(sent.json, { text: 'For the group', uploadedPhotoIds: ['photo-1'] });
      assert.equal(post.releaseURL, `${fake.url}/group/g3`);
    });

    it('refuses a group post without a group, and a video, before accepting the post', async () => {
      const sentBefore = fake.requests.filter((r) => r.path.endsWith('/post')).length;
      const body = (value: unknown[], settings: Record<string, unknown>) => ({
        type: 'now',
        date: new Date().toISOString(),
        shortLink: false,
        tags: [],
        posts: [{ integration: { id: channelId }, value, settings }],
      });
      const noGroup = await account.callUntyped('POST', '/posts', body([{ content: 'where?', image: [] }], { __type: 'mewe', postType: 'group' }));
      assert.equal(noGroup.status, 400, JSON.stringify(noGroup.body));
      assert.match(JSON.stringify(noGroup.body.errors), /group post needs the group setting/);
      const wrongType = await account.callUntyped('POST', '/posts', body([{ content: 'x', image: [] }], { __type: 'mewe', postType: 'page' }));
      assert.equal(wrongType.status, 400);
      assert.equal(wrongType.body.errors[0].path, 'posts.0.settings.postType');
      const video = await uploadMp4(account, herald, 2000);
      const withVideo = await account.callUntyped(
        'POST',
        '/posts',
        body([{ content: 'clip', image: [{ id: video.id, path: video.path }] }], { __type: 'mewe' }),
      );
      assert.equal(withVideo.status, 400, JSON.stringify(withVideo.body));
      assert.equal(withVideo.body.errors[0].path, 'posts.0.value.0.image.0');
      assert.equal(fake.requests.filter((r) => r.path.endsWith('/post')).length, sentBefore, 'nothing was sent to MeWe');
    });

    it("ends in ERROR with MeWe's refusal when the account may not post in the group (403)", async () => {
      const post = await settled(account, await publishNow(account, channelId, ['not a member'], { __type: 'mewe', postType: 'group', group: 'g99' }));
      assert.equal(post.state, 'ERROR');
      assert.match(post.error, /MeWe answered 403: Forbidden/);
      assert.equal(post.thread[0].attempts.length, 1);
    });

    it('waits out 420 Enhance Your Calm and posts once', async () => {
      const before = fake.posts.length;
      fake.calmNext = 1;
      const post = await settled(account, await publishNow(account, channelId, ['calm']));
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      assert.deepEqual(
        post.thread[0].attempts.map((a: any) => a.outcome),
        ['retry', 'published'],
      );
      assert.match(post.thread[0].attempts[0].detail, /420: Enhance Your Calm/);
      assert.equal(fake.posts.length, before + 1);
      const [first, second] = fake.calls('POST /api/dev/me/post').slice(-2);
      assert.ok(second.at - first.at >= 950, `waited ${second.at - first.at} ms`);
    });

    it('a post whose answer never came is not sent again (MeWe cannot be asked): the user is told to check', async () => {
      const before = fake.posts.length;
      fake.failNext('POST /api/dev/me/post', { handleThenHang: true });
      const post = await settled(account, await publishNow(account, channelId, ['maybe']));
      assert.equal(post.state, 'ERROR');
      assert.match(post.error, /may have been published/);
      assert.equal(fake.posts.length, before + 1);
      assert.equal(fake.calls('POST /api/dev/me/post').filter((r) => r.json?.text === 'maybe').length, 1, 'sent once');
    });

    serverErrorAfterCreate(() => ({
      fake,
      account,
      publish: (text) => publishNow(account, channelId, [text]),
      held: (text) => fake.posts.filter((p) => p.text === text).length,
    }));

    it('a revoked token (401) marks the channel for reconnection; connecting again restores it', async () => {
      fake.tokens.clear();
      const post = await settled(account, await publishNow(account, channelId, ['nobody home']));
      assert.equal(post.state, 'ERROR');
      assert.match(post.error, /must be reconnected/);
      assert.equal((await channelView(account, channelId)).needsReconnect, true);
      const again = await connectOAuth(herald, account, 'mewe');
      assert.equal(again.id, channelId);
      const back = await settled(account, await publishNow(account, channelId, ['back']));
      assert.equal(back.state, 'PUBLISHED', back.error ?? '');
    });

    it('an expired token is not sent: the channel is marked for reconnection (MeWe has no refresh)', async () => {
      fake.lifetimeMs = 1_000;
      await connectOAuth(herald, account, 'mewe');
      fake.lifetimeMs = 30 * 86_400_000;
      // The token MeWe just issued (the newest one) runs out.
      const expiresAt = [...fake.tokens.values()].at(-1)!;
      await eventually(async () => (Date.now() > expiresAt ? true : undefined), 5000, 'the token to expire');
      const calls = fake.calls('POST /api/dev/me/post').length;
      const post = await settled(account, await publishNow(account, channelId, ['too late']));
      assert.equal(post.state, 'ERROR');
      assert.match(post.error, /must be reconnected/);
      assert.match(post.error, /cannot be renewed/);
      assert.equal(fake.calls('POST /api/dev/me/post').length, calls, 'nothing sent with the expired token');
      assert.equal((await channelView(account, channelId)).needsReconnect, true);
    });
  });
}
