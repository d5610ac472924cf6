import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { startHerald, type TestAccount, type TestHerald } from '../helpers/herald.ts';
import { testStores, storeSuite } from '../helpers/stores.ts';
import { connectOAuth, followToCallback, startConnect } from '../helpers/connect.ts';
import { startVkFake, vkError, VK_CLIENT_ID, VK_USER_ID, type VkFake } from '../fakes/vk.ts';
import { channelView, publishNow, settled, uploadPng } from './publish.ts';
import { saveDraft, uploadMp4 } from './support.ts';
import { serverErrorAfterCreate } from './create-5xx.ts';
import { teardown } from '../helpers/teardown.ts';

for (const store of await testStores()) {
  describe(`vk (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let fake: VkFake;
    let account: TestAccount;
    let channelId: string;

    before(async () => {
      fake = await startVkFake();
      // VK's 3 calls a second is met by the media test below; the others run faster.
      fake.perSecond = 20;
      herald = await startHerald(store, {
        engine: { pollMs: 50, publishTimeoutMs: 1_000 },
        env: {
          HERALD_VK_CLIENT_ID: VK_CLIENT_ID,
          HERALD_VK_AUTH_URL: fake.url,
          HERALD_VK_API_URL: fake.url,
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

    it('refuses to connect when VK ID did not grant posting on the wall', async () => {
      fake.grantedScopes = ['vkid.personal_info'];
      try {
        const finished = await followToCallback(herald, await startConnect(account, 'vk'));
        assert.equal(finished.status, 400, JSON.stringify(finished.body));
        assert.match(finished.body.message, /permission to post on your wall \(wall\) was not granted/);
      } finally {
        fake.grantedScopes = undefined;
      }
      assert.equal((await account.callUntyped('GET', '/integrations')).body.length, 0);
    });

    it('connects through VK ID with PKCE, keeping the device_id the callback brought for the exchange', async () => {
      const connected = await connectOAuth(herald, account, 'vk');
      channelId = connected.id;
      assert.equal(connected.name, 'Ivan Heraldov');
      const consent = fake.state.authorize;
      assert.equal(consent.client_id, VK_CLIENT_ID);
      assert.equal(consent.response_type, 'code');
      assert.equal(consent.redirect_uri, `${herald.url}/connect/vk/callback`);
      assert.equal(consent.code_challenge_method, 's256');
      assert.deepEqual(consent.scope.split(' '), ['vkid.personal_info', 'wall', 'photos', 'video']);
      const exchange = fake.calls('POST /oauth2/auth').at(-1)!;
      const form = exchange.form!;
      assert.equal(form.grant_type, 'authorization_code');
      assert.equal(form.client_id, VK_CLIENT_ID);
      assert.equal(form.redirect_uri, consent.redirect_uri);
      assert.equal(form.state, consent.state);
      assert.match(form.device_id, /^device-/);
      assert.equal(crypto.createHash('sha256').update(form.code_verifier).digest('base64url'), consent.code_challenge);
      const info = fake.calls('POST /oauth2/user_info').at(-1)!;
      assert.equal(info.form?.access_token, 'vk1.a.access-2');
      const listed = await channelView(account, channelId);
      assert.equal(listed.profile, `id${VK_USER_ID}`);
      assert.equal(listed.picture, 'https://sun.userapi.example/ivan.jpg');
      assert.doesNotMatch(JSON.stringify((await account.callUntyped('GET', '/integrations')).body), /vk1\./);
    });

    it('posts text on the wall with a guid, the API version and the token in the form', async () => {
      const post = await settled(account, await publishNow(account, channelId, ['Привет, VK! https://example.com']));
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      const sent = fake.calls('POST /method/wall.post').at(-1)!;
      assert.deepEqual(sent.form, {
        message: 'Привет, VK! https://example.com',
        guid: post.thread[0].id,
        owner_id: String(VK_USER_ID),
        access_token: 'vk1.a.access-2',
        v: '5.199',
      });
      const made = fake.posts.at(-1)!;
      assert.equal(post.releaseId, `${VK_USER_ID}_${made.id}`);
      assert.equal(post.releaseURL, `https://vk.com/wall${VK_USER_ID}_${made.id}`);
    });

    it('uploads a photo (server/photo/hash saved back) and a video (video_file), and attaches both', async () => {
      fake.perSecond = 3;
      const png = await uploadPng(account, herald.api);
      await herald.services.media.describe(account.id, png.id, { alt: 'A red square' });
      const video = await uploadMp4(account, herald, 3000);
      const post = await settled(account, await publishNow(account, channelId, [{ content: 'Media', media: [png, video] }]));
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      const [photoUpload] = fake.calls('POST /upload/photo');
      assert.equal(photoUpload.multipart?.files[0].name, 'photo');
      assert.deepEqual(photoUpload.multipart?.files[0].data, png.bytes);
      const saved = fake.calls('POST /method/photos.saveWallPhoto').at(-1)!;
      assert.equal(saved.form?.user_id, String(VK_USER_ID));
      assert.equal(saved.form?.caption, 'A red square');
      const [videoUpload] = fake.calls('POST /upload/video');
      assert.equal(videoUpload.multipart?.files[0].name, 'video_file');
      assert.deepEqual(videoUpload.multipart?.files[0].data, video.bytes);
      assert.equal(fake.calls('POST /method/video.save').at(-1)!.form?.wallpost, '0');
      const [photoId] = [...fake.photos.keys()].slice(-1);
      const [videoId] = [...fake.videos.keys()].slice(-1);
      assert.deepEqual(fake.posts.at(-1)!.attachments, [`photo${VK_USER_ID}_${photoId}`, `video${VK_USER_ID}_${videoId}`]);
      fake.perSecond = 20;
    });

    it('publishes the thread as comments, each replying to the one before', async () => {
      const post = await settled(account, await publishNow(account, channelId, ['the post', 'first comment', 'second comment']));
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      const wall = fake.posts.at(-1)!;
      assert.equal(wall.text, 'the post');
      assert.deepEqual(
        wall.comments.map((c) => c.text),
        ['first comment', 'second comment'],
      );
      assert.equal(wall.comments[0].reply_to_comment, undefined);
      assert.equal(wall.comments[1].reply_to_comment, wall.comments[0].id);
      const comments = fake.calls('POST /method/wall.createComment').slice(-2);
      assert.deepEqual(
        comments.map((c) => [c.form?.owner_id, c.form?.post_id, c.form?.guid]),
        [
          [String(VK_USER_ID), String(wall.id), post.thread[1].id],
          [String(VK_USER_ID), String(wall.id), post.thread[2].id],
        ],
      );
      assert.equal(post.thread[2].releaseURL, `https://vk.com/wall${VK_USER_ID}_${wall.id}?reply=${wall.comments[1].id}`);
    });

    it('refuses text over 2,048 characters and more than 10 attachments before accepting the post', async () => {
      const png = await uploadPng(account, herald.api);
      const before = fake.calls('POST /method/wall.post').length;
      const body = (value: unknown[]) => ({
        type: 'now',
        date: new Date().toISOString(),
        shortLink: false,
        tags: [],
        posts: [{ integration: { id: channelId }, value, settings: { __type: 'vk' } }],
      });
      const long = await account.callUntyped('POST', '/posts', body([{ content: 'я'.repeat(2049), image: [] }]));
      assert.equal(long.status, 400, JSON.stringify(long.body));
      assert.equal(long.body.errors[0].path, 'posts.0.value.0.content');
      assert.match(long.body.errors[0].message, /2049 characters.*at most 2048/);
      const many = await account.callUntyped(
        'POST',
        '/posts',
        body([{ content: 'many', image: Array.from({ length: 11 }, () => ({ id: png.id, path: png.path })) }]),
      );
      assert.equal(many.status, 400, JSON.stringify(many.body));
      assert.equal(many.body.errors[0].path, 'posts.0.value.0.image');
      assert.equal(fake.calls('POST /method/wall.post').length, before);
    });

    it("ends in ERROR with VK's message for a captcha (14) and for the daily cap (214), sent once each", async () => {
      fake.captchaNext = true;
      const captcha = await settled(account, await publishNow(account, channelId, ['needs a human']));
      assert.equal(captcha.state, 'ERROR');
      assert.match(captcha.error, /VK: error 14: Captcha needed/);
      assert.match(captcha.error, /captcha/);
      assert.equal(captcha.thread[0].attempts.length, 1);

      fake.dailyPosts = fake.posts.length;
      try {
        const capped = await settled(account, await publishNow(account, channelId, ['one too many']));
        assert.equal(capped.state, 'ERROR');
        assert.match(capped.error, /error 214: Access to adding post denied: you can only add 50 posts a day/);
        assert.equal(capped.thread[0].attempts.length, 1);
      } finally {
        fake.dailyPosts = 50;
      }
    });

    it('waits out "too many requests per second" (6) and posts once', async () => {
      const before = fake.posts.length;
      fake.failNext('POST /method/wall.post', vkError(6, 'Too many requests per second'));
      const post = await settled(account, await publishNow(account, channelId, ['patient']));
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      assert.equal(fake.posts.length, before + 1);
      const [first, second] = fake.calls('POST /method/wall.post').slice(-2);
      assert.ok(second.at - first.at >= 950, `waited ${second.at - first.at} ms`);
    });

    it('when the answer to wall.post is lost, finds the post on the wall instead of posting again', async () => {
      const before = fake.posts.length;
      const calls = fake.calls('POST /method/wall.post').length;
      fake.failNext('POST /method/wall.post', { handleThenHang: true });
      const post = await settled(account, await publishNow(account, channelId, ['lost answer']), 20_000);
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      assert.deepEqual(
        post.thread[0].attempts.map((a: any) => a.outcome),
        ['unknown'],
      );
      assert.equal(fake.posts.length, before + 1, 'one post');
      assert.equal(fake.calls('POST /method/wall.post').length, calls + 1, 'sent once');
      assert.equal(fake.calls('POST /method/wall.get').at(-1)!.form?.owner_id, String(VK_USER_ID));
      assert.equal(post.releaseId, `${VK_USER_ID}_${fake.posts.at(-1)!.id}`);
    });

    it('when the wall cannot be read either, sends wall.post again with the same guid, which VK drops: one post', async () => {
      const before = fake.posts.length;
      fake.failNext('POST /method/wall.post', { handleThenHang: true });
      fake.failNext('POST /method/wall.get', vkError(10, 'Internal server error'), 5);
      const post = await settled(account, await publishNow(account, channelId, ['lost twice']), 20_000);
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      assert.deepEqual(
        post.thread[0].attempts.map((a: any) => a.outcome),
        ['unknown', 'published'],
      );
      assert.equal(fake.posts.length, before + 1, 'one post');
      const [first, second] = fake.calls('POST /method/wall.post').slice(-2);
      assert.equal(second.form?.guid, first.form?.guid);
      assert.equal(second.form?.guid, post.thread[0].id);
      assert.equal(post.releaseId, `${VK_USER_ID}_${fake.posts.at(-1)!.id}`);
      fake.failNext('POST /method/wall.get', {}, 0);
    });

    serverErrorAfterCreate(() => ({
      fake,
      account,
      publish: (text) => publishNow(account, channelId, [text]),
      held: (text) => fake.posts.filter((p) => p.text === text).length,
    }));

    it('refreshes an expired token with the device_id, storing the rotated refresh token', async () => {
      fake.expireTokens();
      const post = await settled(account, await publishNow(account, channelId, ['fresh token']));
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      const refresh = fake.calls('POST /oauth2/auth').filter((r) => r.form?.grant_type === 'refresh_token');
      assert.equal(refresh.length, 1);
      const deviceId = fake.calls('POST /oauth2/auth')[1].form?.device_id;
      assert.equal(refresh[0].form?.refresh_token, 'vk1.r.refresh-2');
      assert.equal(refresh[0].form?.device_id, deviceId);
      assert.equal(refresh[0].form?.client_id, VK_CLIENT_ID);
      assert.ok(refresh[0].form?.state, 'the token refresh sends a state');
      fake.expireTokens();
      const again = await settled(account, await publishNow(account, channelId, ['fresh again']));
      assert.equal(again.state, 'PUBLISHED', again.error ?? '');
      const refreshes = fake.calls('POST /oauth2/auth').filter((r) => r.form?.grant_type === 'refresh_token');
      assert.equal(refreshes[1].form?.refresh_token, 'vk1.r.refresh-3');
    });

    it("reports a post's and the account's counters, and lists the wall for GET /posts/{id}/missing", async () => {
      const post = await settled(account, await publishNow(account, channelId, ['counted']));
      const made = fake.posts.at(-1)!;
      Object.assign(made, { views: 310, likes: 21, reposts: 3 });
      fake.followers = 1200;
      const today = new Date().toISOString().slice(0, 10);
      const figures = await account.callUntyped('GET', `/analytics/post/${post.id}?date=7`);
      assert.equal(figures.status, 200, JSON.stringify(figures.body));
      assert.deepEqual(
        figures.body.map((s: any) => [s.label, s.data[0].total, s.data[0].date]),
        [
          ['Views', 310, today],
          ['Likes', 21, today],
          ['Reposts', 3, today],
          ['Comments', 0, today],
        ],
      );
      assert.equal(fake.calls('POST /method/wall.getById').at(-1)!.form?.posts, `${VK_USER_ID}_${made.id}`);
      const channel = await account.callUntyped('GET', `/analytics/${channelId}?date=7`);
      assert.equal(channel.status, 200, JSON.stringify(channel.body));
      assert.deepEqual(
        channel.body.map((s: any) => [s.label, s.data[0].total]),
        [
          ['Followers', 1200],
          ['Friends', 12],
        ],
      );
      const draft = await saveDraft(account, channelId, 'by hand', { __type: 'vk' });
      const missing = await account.callUntyped('GET', `/posts/${draft}/missing`);
      assert.equal(missing.status, 200, JSON.stringify(missing.body));
      assert.deepEqual(missing.body[0], {
        id: `${VK_USER_ID}_${made.id}`,
        url: `https://vk.com/wall${VK_USER_ID}_${made.id}`,
        text: 'counted',
        at: new Date(made.date * 1000).toISOString(),
      });
    });

    it('marks the channel for reconnection when VK ID refuses the refresh; connecting again restores it', async () => {
      fake.expireTokens();
      fake.refreshTokens.clear();
      const post = await settled(account, await publishNow(account, channelId, ['nobody home']));
      assert.equal(post.state, 'ERROR');
      assert.match(post.error, /must be reconnected/);
      assert.match(post.error, /invalid_grant/);
      assert.equal((await channelView(account, channelId)).needsReconnect, true);
      const again = await connectOAuth(herald, account, 'vk');
      assert.equal(again.id, channelId);
      assert.equal((await channelView(account, channelId)).needsReconnect, false);
      const back = await settled(account, await publishNow(account, channelId, ['back']));
      assert.equal(back.state, 'PUBLISHED', back.error ?? '');
    });
  });
}
