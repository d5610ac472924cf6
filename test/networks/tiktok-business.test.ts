import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { eventually, startHerald, type TestAccount, type TestHerald, uploadUntyped } from '../helpers/herald.ts';
import { testStores, storeSuite } from '../helpers/stores.ts';
import { connectOAuth } from '../helpers/connect.ts';
import { JPEG_1x1 } from '../helpers/jpeg.ts';
import { startTikTokBusinessFake, TTB_APP, TTB_OPEN_ID, TTB_PROFILE, type TtbFake } from '../fakes/tiktok-business.ts';
import { listedChannel, publishNow, saveDraft, settled, uploadMp4, uploadPng } from './support.ts';
import { serverErrorAfterCreate } from './create-5xx.ts';
import { teardown } from '../helpers/teardown.ts';

const SETTINGS = {
  __type: 'tiktok-business',
  privacy_level: 'PUBLIC_TO_EVERYONE',
  duet: true,
  stitch: false,
  comment: true,
  brand_content_toggle: false,
  brand_organic_toggle: true,
  autoAddMusic: 'no',
  content_posting_method: 'DIRECT_POST',
  video_made_with_ai: false,
};
const API = '/open_api/v1.3';

for (const store of await testStores()) {
  describe(`tiktok-business (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let fake: TtbFake;
    let account: TestAccount;
    let channelId: string;

    before(async () => {
      fake = await startTikTokBusinessFake();
      herald = await startHerald(store, {
        engine: { pollMs: 50, publishTimeoutMs: 2_000 },
        // A publish follows TikTok for 1 s here, then in the background.
        env: {
          HERALD_TIKTOK_BUSINESS_CLIENT_ID: TTB_APP.clientId,
          HERALD_TIKTOK_BUSINESS_CLIENT_SECRET: TTB_APP.clientSecret,
          HERALD_TIKTOK_BUSINESS_AUTH_URL: fake.url,
          HERALD_TIKTOK_BUSINESS_API_URL: `${fake.url}${API}`,
          HERALD_TIKTOK_BUSINESS_STATUS_WAIT_SECONDS: '1',
          HERALD_POSTS_PER_HOUR: '1000',
        },
      });
      fake.verifiedPrefix = `${herald.url}/`;
      account = await herald.newAccount();
    });
    after(() =>
      teardown(
        () => herald?.close(),
        () => fake?.close(),
      ),
    );

    it('connects: consent with a trailing-slash redirect, auth_code for tokens (JSON), the profile from /business/get/', async () => {
      const connected = await connectOAuth(herald, account, 'tiktok-business');
      channelId = connected.id;
      assert.equal(connected.name, TTB_PROFILE.display_name);
      const consent = fake.state.authorize;
      assert.equal(consent.client_key, TTB_APP.clientId);
      assert.equal(consent.redirect_uri, `${herald.url}/connect/tiktok-business/callback/`);
      assert.deepEqual(consent.scope.split(',').sort(), [
        'user.info.basic',
        'user.info.stats',
        'user.info.username',
        'video.list',
        'video.publish',
        'video.upload',
      ]);
      const [exchange] = fake.calls(`POST ${API}/tt_user/oauth2/token/`);
      assert.deepEqual(Object.keys(exchange.json).sort(), ['auth_code', 'client_id', 'client_secret', 'grant_type', 'redirect_uri']);
      assert.equal(exchange.json.redirect_uri, `${herald.url}/connect/tiktok-business/callback/`);
      assert.equal(exchange.json.grant_type, 'authorization_code');
      const [profile] = fake.calls(`GET ${API}/business/get/`);
      assert.equal(profile.headers['access-token'], fake.accessToken());
      assert.equal(profile.headers.authorization, undefined);
      assert.equal(profile.query.business_id, TTB_OPEN_ID);
      assert.deepEqual(JSON.parse(profile.query.fields), ['username', 'display_name', 'profile_image']);
      const listed = await listedChannel(account, channelId);
      assert.equal(listed.identifier, 'tiktok-business');
      assert.doesNotMatch(JSON.stringify((await account.callUntyped('GET', '/integrations')).body), new RegExp(fake.accessToken()));
    });

    it('publishes a video pulled from Herald’s URL and follows the status until TikTok names the post', async () => {
      const video = await uploadMp4(account, herald, 3000);
      const post = await settled(account, await publishNow(account, channelId, [{ content: 'Our new product', media: [video] }], SETTINGS));
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      const sent = fake.calls(`POST ${API}/business/video/publish/`).at(-1)!;
      assert.equal(sent.headers['access-token'], fake.accessToken());
      assert.deepEqual(sent.json, {
        business_id: TTB_OPEN_ID,
        video_url: sent.json.video_url,
        post_info: {
          caption: 'Our new product',
          is_brand_organic: true,
          is_branded_content: false,
          disable_comment: false,
          // The account has duets off (video settings), whatever the post asks.
          disable_duet: true,
          disable_stitch: true,
          is_ai_generated: false,
          upload_to_draft: false,
        },
      });
      const publish = fake.publishes.at(-1)!;
      assert.deepEqual(
        publish.pulled.map((p) => p.size),
        [video.bytes.length],
        'TikTok downloaded the video itself',
      );
      assert.ok(fake.calls(`GET ${API}/business/video/settings/`).length >= 1, 'Herald read the account’s video settings from TikTok');
      assert.equal(post.releaseId, publish.postId);
      assert.equal(post.releaseURL, `https://www.tiktok.com/@${TTB_PROFILE.username}/video/${publish.postId}`);
    });

    it('publishes photos as JPEG (a PNG is converted first), with title, privacy and music choice', async () => {
      const png = await uploadPng(account, herald);
      const jpeg = await uploadUntyped(account, herald.api, JPEG_1x1, 'b.jpg');
      const post = await settled(
        account,
        await publishNow(account, channelId, [{ content: 'Two photos #herald', media: [png, jpeg.body] }], {
          ...SETTINGS,
          title: 'Behind the scenes',
          privacy_level: 'MUTUAL_FOLLOW_FRIENDS',
          autoAddMusic: 'yes',
        }),
      );
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      const sent = fake.calls(`POST ${API}/business/photo/publish/`).at(-1)!;
      assert.equal(sent.json.business_id, TTB_OPEN_ID);
      assert.equal(sent.json.photo_images.length, 2);
      assert.equal(sent.json.photo_cover_index, 0);
      assert.deepEqual(sent.json.post_info, {
        privacy_level: 'MUTUAL_FOLLOW_FRIENDS',
        title: 'Behind the scenes',
        caption: 'Two photos #herald',
        auto_add_music: true,
        is_brand_organic: true,
        is_branded_content: false,
        disable_comment: false,
        is_draft: false,
      });
      const publish = fake.publishes.at(-1)!;
      assert.deepEqual(
        publish.pulled.map((p) => p.type.split(';')[0]),
        ['image/jpeg', 'image/jpeg'],
      );
      // Not public: TikTok gives no post id, the share id stands for it.
      assert.equal(post.releaseId, publish.shareId);
      assert.equal(post.releaseURL, `https://www.tiktok.com/@${TTB_PROFILE.username}`);
    });

    it('sends a draft to the TikTok app with UPLOAD (upload_to_draft), done when TikTok delivers it', async () => {
      const video = await uploadMp4(account, herald, 2000);
      const post = await settled(
        account,
        await publishNow(account, channelId, [{ content: 'Finish me in the app', media: [video] }], { ...SETTINGS, content_posting_method: 'UPLOAD' }),
      );
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      const sent = fake.calls(`POST ${API}/business/video/publish/`).at(-1)!;
      assert.deepEqual(sent.json.post_info, { upload_to_draft: true });
      assert.equal(fake.publishes.at(-1)!.status, 'SEND_TO_USER_INBOX');
      assert.equal(post.releaseId, fake.publishes.at(-1)!.shareId);
    });

    it('keeps following a post whose id lags, and replaces the share id once TikTok names it', async () => {
      fake.postIdLagMs = 60_000;
      const video = await uploadMp4(account, herald, 2500);
      const post = await settled(account, await publishNow(account, channelId, [{ content: 'Lagging id', media: [video] }], SETTINGS));
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      const publish = fake.publishes.at(-1)!;
      assert.equal(post.releaseId, publish.shareId, 'the share id stands for the post meanwhile');
      fake.postIdLagMs = 0;
      assert.equal(await herald.engine!.followUps.run(Date.now() + 120_000), 1);
      const after = (await account.callUntyped('GET', `/posts/${post.id}`)).body;
      assert.equal(after.releaseId, publish.postId);
      assert.equal(after.releaseURL, `https://www.tiktok.com/@${TTB_PROFILE.username}/video/${publish.postId}`);
    });

    it('fails with TikTok’s reason when it fails the media while the publish follows it', async () => {
      const video = await uploadMp4(account, herald, 1800);
      fake.failNextPublish = 'frame_rate_check_failed';
      const post = await settled(account, await publishNow(account, channelId, [{ content: 'Bad frames', media: [video] }], SETTINGS));
      assert.equal(post.state, 'ERROR');
      assert.equal(post.error, 'TikTok for Business could not publish the post: frame_rate_check_failed');
      assert.equal(fake.publishes.at(-1)!.status, 'FAILED');
    });

    it('moves a post TikTok fails after the publish returned to ERROR with the reason', async () => {
      const video = await uploadMp4(account, herald, 1850);
      fake.processingMs = 1_500;
      fake.failNextPublish = 'spam_risk_too_many_posts';
      const post = await settled(account, await publishNow(account, channelId, [{ content: 'Too many', media: [video] }], SETTINGS));
      fake.processingMs = 150;
      assert.equal(post.state, 'PUBLISHED', 'TikTok had taken it and was still downloading');
      const publish = fake.publishes.at(-1)!;
      assert.equal(post.releaseId, publish.shareId);
      // TikTok fails it once it has processed the video.
      await eventually(async () => (publish.status === 'FAILED' ? true : undefined), 5000, 'TikTok to fail the publish');
      assert.equal(await herald.engine!.followUps.run(Date.now() + 120_000), 1);
      const after = (await account.callUntyped('GET', `/posts/${post.id}`)).body;
      assert.equal(after.state, 'ERROR');
      assert.match(after.error, /spam_risk_too_many_posts/);
    });

    it('refuses a media URL outside the verified prefix with TikTok’s message (url_ownership_unverified)', async () => {
      const video = await uploadMp4(account, herald, 1750);
      const verified = fake.verifiedPrefix;
      fake.verifiedPrefix = 'https://cdn.verified.example/';
      try {
        const refused = await settled(account, await publishNow(account, channelId, [{ content: 'Unverified', media: [video] }], SETTINGS));
        assert.equal(refused.state, 'ERROR');
        assert.match(refused.error!, /^TikTok for Business: url_ownership_unverified: .* \(code 40002\)$/);
        assert.equal(refused.thread[0].attempts.length, 1);
      } finally {
        fake.verifiedPrefix = verified;
      }
    });

    it('refuses before acceptance: no media, video and photos mixed, a video caption over 2,200, a title over 90', async () => {
      const video = await uploadMp4(account, herald, 1500);
      const png = await uploadPng(account, herald);
      const body = (value: unknown[], settings: Record<string, unknown> = SETTINGS) => ({
        type: 'now',
        date: new Date().toISOString(),
        shortLink: false,
        tags: [],
        posts: [{ integration: { id: channelId }, value, settings }],
      });
      const ref = (m: { id: string; path: string }) => ({ id: m.id, path: m.path });
      const before = fake.requests.length;
      const none = await account.callUntyped('POST', '/posts', body([{ content: 'text only', image: [] }]));
      assert.equal(none.status, 400);
      assert.equal(none.body.errors[0].path, 'posts.0.value.0.image');
      const mixed = await account.callUntyped('POST', '/posts', body([{ content: 'both', image: [ref(video), ref(png)] }]));
      assert.equal(mixed.status, 400);
      assert.match(mixed.body.errors[0].message, /one video or photos only/);
      const long = await account.callUntyped('POST', '/posts', body([{ content: 'x'.repeat(2201), image: [ref(video)] }]));
      assert.equal(long.status, 400);
      assert.equal(long.body.errors[0].path, 'posts.0.value.0.content');
      assert.match(long.body.errors[0].message, /2201 characters, but a video's caption takes at most 2200/);
      const photoCaption = await account.callUntyped('POST', '/posts', body([{ content: 'x'.repeat(2201), image: [ref(png)] }]));
      assert.equal(photoCaption.status, 201, 'a photo caption may be longer');
      await settled(account, photoCaption.body[0].postId);
      const title = await account.callUntyped('POST', '/posts', body([{ content: 'photo', image: [ref(png)] }], { ...SETTINGS, title: 't'.repeat(91) }));
      assert.equal(title.status, 400);
      assert.equal(title.body.errors[0].path, 'posts.0.settings.title');
      const sent = fake.requests.slice(before).filter((r) => r.path.endsWith('/publish/'));
      assert.equal(sent.length, 1, 'only the long photo caption was sent');
      assert.equal(sent[0].json.post_info.caption.length, 2201);
    });

    it('retries after the QPS limit (40100, inside HTTP 200) and publishes once', async () => {
      const video = await uploadMp4(account, herald, 1700);
      const count = fake.publishes.length;
      fake.failNextCode('/business/video/publish/', 40100, 'App reaches the QPS limit.');
      const post = await settled(account, await publishNow(account, channelId, [{ content: 'After the limit', media: [video] }], SETTINGS));
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      assert.deepEqual(
        post.thread[0].attempts.map((a) => a.outcome),
        ['retry', 'published'],
      );
      assert.match(post.thread[0].attempts[0].detail, /App reaches the QPS limit\. \(code 40100\)/);
      assert.equal(fake.publishes.length, count + 1);
    });

    serverErrorAfterCreate(() => ({
      fake,
      account,
      publish: async (text) => publishNow(account, channelId, [{ content: text, media: [await uploadMp4(account, herald, 2000)] }], SETTINGS),
      held: (text) => fake.publishes.filter((p) => p.caption === text).length,
    }));

    it('after a publish whose answer never came, finds the video among the account’s latest instead of publishing again', async () => {
      const video = await uploadMp4(account, herald, 1900);
      const count = fake.publishes.length;
      fake.failNext(`POST ${API}/business/video/publish/`, { handleThenHang: true });
      const post = await settled(account, await publishNow(account, channelId, [{ content: 'Did it go out?', media: [video] }], SETTINGS), 20_000);
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      assert.equal(fake.publishes.length, count + 1, 'one publish, not two');
      const publish = fake.publishes.at(-1)!;
      assert.equal(post.releaseId, publish.postId);
      assert.deepEqual(
        post.thread[0].attempts.map((a) => a.outcome),
        ['unknown'],
      );
      const list = fake.calls(`GET ${API}/business/video/list/`).at(-1)!;
      assert.deepEqual(JSON.parse(list.query.fields), ['item_id', 'create_time', 'caption', 'share_url']);
    });

    it('lists recent videos for GET /posts/{id}/missing and reports a video’s figures', async () => {
      const draft = await saveDraft(account, channelId, 'by hand', { ...SETTINGS });
      const missing = await account.callUntyped('GET', `/posts/${draft}/missing`);
      assert.equal(missing.status, 200, JSON.stringify(missing.body));
      const newest = fake.publishes.filter((p) => p.kind === 'video' && p.postId && !p.draft).at(-1)!;
      assert.deepEqual(missing.body[0], {
        id: newest.postId,
        url: `https://www.tiktok.com/@${TTB_PROFILE.username}/video/${newest.postId}`,
        text: newest.caption,
        at: new Date(newest.createdAt * 1000).toISOString(),
      });

      const video = await uploadMp4(account, herald, 2100);
      const post = await settled(account, await publishNow(account, channelId, [{ content: 'Counted', media: [video] }], SETTINGS));
      fake.videoStats.set(post.releaseId, { video_views: 1500, likes: 120, comments: 8, shares: 5, reach: 900 });
      const figures = await account.callUntyped('GET', `/analytics/post/${post.id}?date=7`);
      assert.equal(figures.status, 200, JSON.stringify(figures.body));
      const today = new Date().toISOString().slice(0, 10);
      assert.deepEqual(
        figures.body.map((s: any) => [s.label, s.data]),
        [
          ['Views', [{ total: 1500, date: today }]],
          ['Reach', [{ total: 900, date: today }]],
          ['Likes', [{ total: 120, date: today }]],
          ['Comments', [{ total: 8, date: today }]],
          ['Shares', [{ total: 5, date: today }]],
        ],
      );
      const query = fake.calls(`GET ${API}/business/video/list/`).at(-1)!;
      assert.deepEqual(JSON.parse(query.query.filters), { video_ids: [post.releaseId] });
    });

    it('refreshes an expired token (40105 inside HTTP 200), storing the rotated refresh token', async () => {
      for (const round of [1, 2]) {
        const oldRefresh = fake.refreshToken();
        fake.expireAccessToken();
        const video = await uploadMp4(account, herald, 1600 + round);
        const post = await settled(account, await publishNow(account, channelId, [{ content: `fresh ${round}`, media: [video] }], SETTINGS));
        assert.equal(post.state, 'PUBLISHED', post.error ?? '');
        const refresh = fake.calls(`POST ${API}/tt_user/oauth2/refresh_token/`).at(-1)!;
        assert.deepEqual(refresh.json, {
          client_id: TTB_APP.clientId,
          client_secret: TTB_APP.clientSecret,
          grant_type: 'refresh_token',
          refresh_token: oldRefresh,
        });
        assert.equal(fake.calls(`POST ${API}/business/video/publish/`).at(-1)!.headers['access-token'], fake.accessToken());
      }
    });

    it('marks the channel for reconnection when the authorization was revoked', async () => {
      fake.revokeAll();
      const video = await uploadMp4(account, herald, 1650);
      const post = await settled(account, await publishNow(account, channelId, [{ content: 'revoked', media: [video] }], SETTINGS));
      assert.equal(post.state, 'ERROR');
      assert.match(post.error!, /must be reconnected/);
      assert.match(post.error!, /refresh token is invalid or has been revoked/);
      assert.equal((await listedChannel(account, channelId)).needsReconnect, true);
    });
  });
}
