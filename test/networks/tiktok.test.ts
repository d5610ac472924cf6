import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { eventually, startHerald, type TestAccount, type TestHerald, uploadUntyped } from '../helpers/herald.ts';
import { testStores, storeSuite } from '../helpers/stores.ts';
import { connectOAuth } from '../helpers/connect.ts';
import { JPEG_1x1 } from '../helpers/jpeg.ts';
import { chunkPlan } from '../../src/providers/networks/tiktok.ts';
import { CLIENT_KEY, CLIENT_SECRET, startTikTokFake, tiktokError, type TikTokFake } from '../fakes/tiktok.ts';
import { listedChannel, publishNow, settled, uploadMp4 } from './support.ts';
import { serverErrorAfterCreate } from './create-5xx.ts';
import { teardown } from '../helpers/teardown.ts';

const SETTINGS = {
  privacy_level: 'PUBLIC_TO_EVERYONE',
  duet: true,
  stitch: true,
  comment: true,
  brand_content_toggle: false,
  brand_organic_toggle: false,
  autoAddMusic: 'no',
  content_posting_method: 'DIRECT_POST',
  video_made_with_ai: false,
};
const MB = 1024 * 1024;

describe('tiktok chunk plan', () => {
  it('sends small videos whole and larger ones in 10 MB chunks, the remainder in the last', () => {
    assert.deepEqual(chunkPlan(4 * MB), { chunkSize: 4 * MB, count: 1 });
    assert.deepEqual(chunkPlan(15 * MB), { chunkSize: 10 * MB, count: 1 });
    assert.deepEqual(chunkPlan(21 * MB), { chunkSize: 10 * MB, count: 2 });
  });
});

for (const store of await testStores()) {
  describe(`tiktok (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let fake: TikTokFake;
    let account: TestAccount;
    let channelId: string;

    before(async () => {
      fake = await startTikTokFake();
      herald = await startHerald(store, {
        engine: { pollMs: 50 },
        // A publish follows TikTok for 3 s here, then in the background.
        env: {
          HERALD_TIKTOK_CLIENT_KEY: CLIENT_KEY,
          HERALD_TIKTOK_CLIENT_SECRET: CLIENT_SECRET,
          HERALD_TIKTOK_AUTH_URL: fake.url,
          HERALD_TIKTOK_API_URL: fake.url,
          HERALD_TIKTOK_STATUS_WAIT_SECONDS: '3',
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

    it('connects through TikTok Login Kit: consent, code for tokens, the user from /v2/user/info/', async () => {
      const connected = await connectOAuth(herald, account, 'tiktok');
      channelId = connected.id;
      assert.equal(connected.name, 'Herald Creator');
      const consent = fake.state.authorize;
      assert.equal(consent.client_key, CLIENT_KEY);
      assert.equal(consent.response_type, 'code');
      assert.equal(consent.redirect_uri, `${herald.url}/connect/tiktok/callback`);
      assert.deepEqual(consent.scope.split(','), ['user.info.basic', 'user.info.profile', 'video.publish', 'video.upload', 'user.info.stats', 'video.list']);
      const [token] = fake.calls('POST /v2/oauth/token/');
      assert.deepEqual(token.form, {
        client_key: CLIENT_KEY,
        client_secret: CLIENT_SECRET,
        code: 'tiktok-code',
        grant_type: 'authorization_code',
        redirect_uri: consent.redirect_uri,
      });
      const [info] = fake.calls('GET /v2/user/info/');
      assert.equal(info.headers.authorization, 'Bearer act.access-1');
      assert.match(info.query.fields, /open_id/);
      const listed = await listedChannel(account, channelId);
      assert.equal(listed.profile, 'heraldcreator');
      assert.equal(listed.picture, 'https://p16.tiktokcdn.example/avatar.jpg');
    });

    it('refuses a post without media, or without the required settings, naming the field', async () => {
      const text = await account.callUntyped('POST', '/posts', {
        type: 'now',
        date: new Date().toISOString(),
        shortLink: false,
        tags: [],
        posts: [{ integration: { id: channelId }, value: [{ content: 'Words only', image: [] }], settings: SETTINGS }],
      });
      assert.equal(text.status, 400);
      assert.ok(
        text.body.errors.some((e: any) => e.path === 'posts.0.value.0.image'),
        JSON.stringify(text.body.errors),
      );
      const video = await uploadMp4(account, herald, 1000);
      const bare = await account.callUntyped('POST', '/posts', {
        type: 'now',
        date: new Date().toISOString(),
        shortLink: false,
        tags: [],
        posts: [
          { integration: { id: channelId }, value: [{ content: 'x', image: [{ id: video.id, path: video.path }] }], settings: { privacy_level: 'EVERYONE' } },
        ],
      });
      assert.equal(bare.status, 400);
      const paths = bare.body.errors.map((e: any) => e.path);
      for (const field of ['privacy_level', 'duet', 'stitch', 'comment', 'content_posting_method', 'autoAddMusic'])
        assert.ok(paths.includes(`posts.0.settings.${field}`), `${field}: ${JSON.stringify(paths)}`);
    });

    it('posts a video: creator info, init with FILE_UPLOAD, the bytes PUT, status polled to the post id', async () => {
      const video = await uploadMp4(account, herald, 7000);
      fake.processingMs = 1_000;
      const post = await settled(account, await publishNow(account, channelId, [{ content: 'My first clip #herald', media: [video] }], SETTINGS));
      fake.processingMs = 0;
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');

      const [creator] = fake.calls('POST /v2/post/publish/creator_info/query/');
      assert.equal(creator.headers.authorization, 'Bearer act.access-1');
      const [init] = fake.calls('POST /v2/post/publish/video/init/');
      assert.match(String(init.headers['content-type']), /^application\/json; charset=UTF-8/);
      assert.deepEqual(init.json, {
        post_info: {
          title: 'My first clip #herald',
          privacy_level: 'PUBLIC_TO_EVERYONE',
          disable_duet: false,
          // The creator has stitches switched off: Herald follows the account's setting.
          disable_stitch: true,
          disable_comment: false,
          brand_content_toggle: false,
          brand_organic_toggle: false,
          is_aigc: false,
        },
        source_info: { source: 'FILE_UPLOAD', video_size: 7000, chunk_size: 7000, total_chunk_count: 1 },
      });
      const [put] = fake.calls('PUT /upload/');
      assert.equal(put.headers['content-range'], 'bytes 0-6999/7000');
      assert.equal(put.headers['content-type'], 'video/mp4');
      assert.deepEqual(put.raw, video.bytes);
      const statuses = fake.calls('POST /v2/post/publish/status/fetch/');
      assert.equal(statuses.length, 2, 'polled until PUBLISH_COMPLETE');
      const published = fake.published.at(-1)!;
      assert.equal(statuses[0].json.publish_id, published.publishId);
      // The int64 id arrives whole.
      assert.equal(post.releaseId, published.postId);
      assert.equal(post.releaseURL, `https://www.tiktok.com/@heraldcreator/video/${published.postId}`);
    });

    it('follows a video TikTok finishes after the publish returned: its public id replaces the publish id', async () => {
      const video = await uploadMp4(account, herald, 5000);
      fake.processingMs = 5_000;
      const post = await settled(account, await publishNow(account, channelId, [{ content: 'Processed slowly', media: [video] }], SETTINGS));
      fake.processingMs = 0;
      const [init] = fake.calls('POST /v2/post/publish/video/init/').slice(-1);
      const publishId = [...fake.uploads.entries()].find(([, u]) => u.init === init.json)![0];
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      assert.equal(post.releaseId, publishId, 'the publish id stands for the post meanwhile');

      assert.equal(await herald.engine!.followUps.run(Date.now()), 0, 'not looked at before its time');
      // TikTok finishes.
      const ready = fake.uploads.get(publishId)!.readyAt!;
      await eventually(async () => (Date.now() >= ready ? true : undefined), 10_000, 'TikTok to finish processing the video');
      assert.equal(await herald.engine!.followUps.run(Date.now() + 60_000), 1);
      const after = (await account.callUntyped('GET', `/posts/${post.id}`)).body;
      const published = fake.published.find((p) => p.publishId === publishId)!;
      assert.equal(after.state, 'PUBLISHED');
      assert.equal(after.releaseId, published.postId);
      assert.equal(after.releaseURL, `https://www.tiktok.com/@heraldcreator/video/${published.postId}`);
      assert.equal(await herald.engine!.followUps.run(Date.now() + 120_000), 0, 'no longer followed');
    });

    it('moves a post TikTok fails after the publish returned to ERROR with its reason, and says so', async () => {
      const video = await uploadMp4(account, herald, 4000);
      fake.processingMs = 5_000;
      fake.failNextPublish = 'frame_rate_check_failed';
      const post = await settled(account, await publishNow(account, channelId, [{ content: 'Fails later', media: [video] }], SETTINGS));
      fake.processingMs = 0;
      assert.equal(post.state, 'PUBLISHED', 'TikTok had taken it');
      const ready = fake.uploads.get(post.releaseId)!.readyAt!;
      await eventually(async () => (Date.now() >= ready ? true : undefined), 10_000, 'TikTok to finish processing the video');
      assert.equal(await herald.engine!.followUps.run(Date.now() + 60_000), 1);
      const after = (await account.callUntyped('GET', `/posts/${post.id}`)).body;
      assert.equal(after.state, 'ERROR');
      assert.match(after.error, /TikTok took the post but then failed it: frame_rate_check_failed/);
      const notes = await account.callUntyped('GET', '/notifications');
      assert.ok(JSON.stringify(notes.body).includes('frame_rate_check_failed'), JSON.stringify(notes.body));
    });

    it('sends a large video in chunks, in order, with Content-Range', async () => {
      const video = await uploadMp4(account, herald, 21 * MB);
      const putsBefore = fake.calls('PUT /upload/').length;
      const post = await settled(account, await publishNow(account, channelId, [{ content: 'Long one', media: [video] }], SETTINGS), 30_000);
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      const init = fake.calls('POST /v2/post/publish/video/init/').at(-1)!;
      assert.deepEqual(init.json.source_info, { source: 'FILE_UPLOAD', video_size: 21 * MB, chunk_size: 10 * MB, total_chunk_count: 2 });
      const puts = fake.calls('PUT /upload/').slice(putsBefore);
      assert.deepEqual(
        puts.map((p) => p.headers['content-range']),
        [`bytes 0-${10 * MB - 1}/${21 * MB}`, `bytes ${10 * MB}-${21 * MB - 1}/${21 * MB}`],
      );
      assert.deepEqual(Buffer.concat(puts.map((p) => p.raw)), video.bytes);
    });

    it('posts photos pulled from their public URLs; a second thread item is left out', async () => {
      const photo = await uploadUntyped(account, herald.api, JPEG_1x1, 'photo.jpg');
      assert.equal(photo.status, 201);
      const created = await account.callUntyped('POST', '/posts', {
        type: 'now',
        date: new Date().toISOString(),
        shortLink: false,
        tags: [],
        posts: [
          {
            integration: { id: channelId },
            value: [
              { content: 'A photo', image: [{ id: photo.body.id, path: photo.body.path }] },
              { content: 'no replies on TikTok', image: [] },
            ],
            settings: { ...SETTINGS, title: 'Photo title', autoAddMusic: 'yes' },
          },
        ],
      });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const post = await settled(account, created.body[0].postId);
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      assert.equal(post.thread.length, 1);
      assert.match(post.warning, /no threads/);
      const init = fake.calls('POST /v2/post/publish/content/init/').at(-1)!;
      assert.deepEqual(init.json, {
        media_type: 'PHOTO',
        post_mode: 'DIRECT_POST',
        post_info: {
          title: 'Photo title',
          description: 'A photo',
          privacy_level: 'PUBLIC_TO_EVERYONE',
          disable_comment: false,
          auto_add_music: true,
          brand_content_toggle: false,
          brand_organic_toggle: false,
        },
        source_info: { source: 'PULL_FROM_URL', photo_images: [photo.body.path], photo_cover_index: 0 },
      });
      assert.match(post.releaseURL, /\/@heraldcreator\/photo\/\d+$/);
    });

    it("ends in ERROR with TikTok's reason when processing fails, and refuses a privacy level the account lacks", async () => {
      const video = await uploadMp4(account, herald, 3000);
      fake.failNextPublish = 'duration_check_failed';
      const failed = await settled(account, await publishNow(account, channelId, [{ content: 'Too long', media: [video] }], SETTINGS));
      assert.equal(failed.state, 'ERROR');
      assert.match(failed.error, /duration_check_failed/);

      const inits = fake.calls('POST /v2/post/publish/video/init/').length;
      const mismatch = await settled(
        account,
        await publishNow(account, channelId, [{ content: 'Followers', media: [video] }], { ...SETTINGS, privacy_level: 'FOLLOWER_OF_CREATOR' }),
      );
      assert.equal(mismatch.state, 'ERROR');
      assert.match(mismatch.error, /FOLLOWER_OF_CREATOR is not allowed.*PUBLIC_TO_EVERYONE, MUTUAL_FOLLOW_FRIENDS, SELF_ONLY/);
      assert.equal(fake.calls('POST /v2/post/publish/video/init/').length, inits, 'nothing was sent to TikTok');
    });

    it('refreshes an expired token (storing the rotated refresh token), then posts', async () => {
      fake.validTokens.clear();
      const video = await uploadMp4(account, herald, 2000);
      const post = await settled(account, await publishNow(account, channelId, [{ content: 'Fresh token', media: [video] }], SETTINGS));
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      const refresh = fake.calls('POST /v2/oauth/token/').filter((r) => r.form?.grant_type === 'refresh_token');
      assert.equal(refresh.length, 1);
      assert.equal(refresh[0].form?.refresh_token, 'rft.refresh-1');
      // Rotation: the next refresh must use the new refresh token.
      fake.validTokens.clear();
      const again = await settled(account, await publishNow(account, channelId, [{ content: 'Fresh again', media: [video] }], SETTINGS));
      assert.equal(again.state, 'PUBLISHED', again.error ?? '');
      const refreshes = fake.calls('POST /v2/oauth/token/').filter((r) => r.form?.grant_type === 'refresh_token');
      assert.equal(refreshes[1].form?.refresh_token, 'rft.refresh-2');
    });

    it('waits out a rate limit and posts once', async () => {
      const video = await uploadMp4(account, herald, 2100);
      const before = fake.published.length;
      fake.failNext('POST /v2/post/publish/video/init/', {
        ...tiktokError(429, 'rate_limit_exceeded', 'API rate limit exceeded'),
        headers: { 'retry-after': '1' },
      });
      const post = await settled(account, await publishNow(account, channelId, [{ content: 'Patient', media: [video] }], SETTINGS));
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      assert.equal(fake.published.length, before + 1);
      assert.deepEqual(
        post.thread[0].attempts.map((a: any) => a.outcome),
        ['retry', 'published'],
      );
      assert.match(post.thread[0].attempts[0].detail, /rate_limit_exceeded/);
    });

    /** Publishes TikTok took whole (a video's last chunk arrived, or photos to pull) carrying `text`. */
    const heldOnTikTok = (text: string) =>
      [...fake.uploads.values()].filter((u) => u.complete && (u.init?.post_info?.title === text || u.init?.post_info?.description === text)).length;

    describe('a video whose last chunk TikTok stored', () => {
      serverErrorAfterCreate(() => ({
        fake,
        account,
        publish: async (text) => publishNow(account, channelId, [{ content: text, media: [await uploadMp4(account, herald, 2200)] }], SETTINGS),
        held: heldOnTikTok,
      }));
    });

    describe('a photo post TikTok took', () => {
      serverErrorAfterCreate(() => ({
        fake,
        account,
        route: 'POST /v2/post/publish/content/init/',
        publish: async (text) => {
          const photo = await uploadUntyped(account, herald.api, JPEG_1x1, 'photo.jpg');
          return publishNow(account, channelId, [{ content: text, image: [{ id: photo.body.id, path: photo.body.path }] }], SETTINGS);
        },
        held: heldOnTikTok,
      }));
    });

    it("reports the account's counts (user.info.stats) and a video's (video.list) as TikTok gives them", async () => {
      Object.assign(fake.userStats, { follower_count: 5100, following_count: 12, likes_count: 98000, video_count: 37 });
      const today = new Date().toISOString().slice(0, 10);
      const channel = await account.callUntyped('GET', `/analytics/${channelId}?date=7`);
      assert.equal(channel.status, 200, JSON.stringify(channel.body));
      assert.deepEqual(channel.body, [
        { label: 'Followers', data: [{ total: 5100, date: today }], percentageChange: 0 },
        { label: 'Following', data: [{ total: 12, date: today }], percentageChange: 0 },
        { label: 'Likes', data: [{ total: 98000, date: today }], percentageChange: 0 },
        { label: 'Videos', data: [{ total: 37, date: today }], percentageChange: 0 },
      ]);
      const info = fake.calls('GET /v2/user/info/').at(-1)!;
      assert.equal(info.query.fields, 'follower_count,following_count,likes_count,video_count');

      const video = await uploadMp4(account, herald, 2300);
      const post = await settled(account, await publishNow(account, channelId, [{ content: 'Counted on TikTok', media: [video] }], SETTINGS));
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      fake.videoStats.set(post.releaseId, { view_count: 1500, like_count: 120, comment_count: 8, share_count: 5 });
      const figures = await account.callUntyped('GET', `/analytics/post/${post.id}?date=7`);
      assert.equal(figures.status, 200, JSON.stringify(figures.body));
      assert.deepEqual(
        figures.body.map((s: any) => [s.label, s.data.map((d: any) => [d.total, d.date])]),
        [
          ['Views', [[1500, today]]],
          ['Likes', [[120, today]]],
          ['Comments', [[8, today]]],
          ['Shares', [[5, today]]],
        ],
      );
      const query = fake.calls('POST /v2/video/query/').at(-1)!;
      assert.equal(query.query.fields, 'id,like_count,comment_count,share_count,view_count');
      assert.deepEqual(query.json, { filters: { video_ids: [post.releaseId] } }, 'the int64 id is sent whole, as a string');
      assert.match(String(query.headers['content-type']), /^application\/json/);
    });

    it('answers 400 for a post TikTok knows only by its publish id (an inbox upload), without asking TikTok', async () => {
      const video = await uploadMp4(account, herald, 2400);
      const post = await settled(
        account,
        await publishNow(account, channelId, [{ content: 'To the inbox', media: [video] }], { ...SETTINGS, content_posting_method: 'UPLOAD' }),
      );
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      assert.match(post.releaseId, /^v_pub_/);
      const queries = fake.calls('POST /v2/video/query/').length;
      const figures = await account.callUntyped('GET', `/analytics/post/${post.id}?date=7`);
      assert.equal(figures.status, 400, JSON.stringify(figures.body));
      assert.equal(figures.body.code, 'network_refused');
      assert.match(figures.body.message, /has not given this post its public id yet/);
      assert.equal(fake.calls('POST /v2/video/query/').length, queries);
    });

    it(
      "asks to reconnect, with TikTok's reason, when the user unticked the analytics permissions; " + 'connecting again with them restores the figures',
      async () => {
        fake.untickedScopes = new Set(['user.info.stats', 'video.list']);
        const again = await connectOAuth(herald, account, 'tiktok');
        assert.equal(again.id, channelId);
        fake.untickedScopes.clear();

        const channel = await account.callUntyped('GET', `/analytics/${channelId}?date=30`);
        assert.equal(channel.status, 409, JSON.stringify(channel.body));
        assert.equal(channel.body.code, 'reconnect_needed');
        assert.match(
          channel.body.message,
          /scope_permission_missed: The fields follower_count,following_count,likes_count,video_count need the scope user.info.stats/,
        );

        const video = await uploadMp4(account, herald, 2500);
        const counted = await settled(account, await publishNow(account, channelId, [{ content: 'Posting still works', media: [video] }], SETTINGS));
        assert.equal(counted.state, 'PUBLISHED', counted.error ?? '');
        const figures = await account.callUntyped('GET', `/analytics/post/${counted.id}?date=30`);
        assert.equal(figures.status, 409, JSON.stringify(figures.body));
        assert.match(figures.body.message, /scope_not_authorized: The user did not authorize the scope required/);

        await connectOAuth(herald, account, 'tiktok');
        const restored = await account.callUntyped('GET', `/analytics/post/${counted.id}?date=30`);
        assert.equal(restored.status, 200, JSON.stringify(restored.body));
        assert.equal((await listedChannel(account, channelId)).needsReconnect, false, 'a read does not mark the channel');
      },
    );
  });
}
