import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { connectOAuth } from '../helpers/connect.ts';
import { startHerald, type TestAccount, type TestHerald } from '../helpers/herald.ts';
import { testStores, storeSuite } from '../helpers/stores.ts';
import { IGS_APP, IGS_CODE, IGS_USER, startInstagramStandaloneFake, type InstagramStandaloneFake } from '../fakes/instagram-standalone.ts';
import { declined, graphError, setDaily, setLifetime, tokenBook } from '../fakes/meta.ts';
import { assertError } from '../helpers/api-fixtures.ts';
import { listedChannel, publishNow, settled, uploadPng, saveDraft } from './support.ts';
import { serverErrorAfterCreate } from './create-5xx.ts';
import { teardown } from '../helpers/teardown.ts';

const POST = { __type: 'instagram-standalone', post_type: 'post' };

/** The last `n` days (UTC), oldest first. */
const lastDays = (n: number, now = Date.now()) => Array.from({ length: n }, (_, i) => new Date(now - (n - 1 - i) * 86_400_000).toISOString().slice(0, 10));
/** A Graph timestamp as Herald gives it back (Graph has no milliseconds). */
const toSecond = (at: number) => new Date(Math.floor(at / 1000) * 1000).toISOString();

for (const store of await testStores()) {
  describe(`instagram-standalone through Instagram Login (${store})`, storeSuite(store), () => {
    let fake: InstagramStandaloneFake;
    let herald: TestHerald;
    let account: TestAccount;
    let channelId: string;
    let v: string;

    before(async () => {
      fake = await startInstagramStandaloneFake();
      herald = await startHerald(store, {
        engine: { pollMs: 50 },
        env: {
          HERALD_INSTAGRAM_STANDALONE_CLIENT_ID: IGS_APP.id,
          HERALD_INSTAGRAM_STANDALONE_CLIENT_SECRET: IGS_APP.secret,
          HERALD_INSTAGRAM_STANDALONE_API_URL: fake.url,
          HERALD_INSTAGRAM_STANDALONE_OAUTH_URL: fake.url,
          HERALD_INSTAGRAM_STANDALONE_LOGIN_URL: fake.url,
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

    const since = (from: number) => fake.requests.slice(from);

    it('connects with Instagram Login: code, long-lived token, and the professional account id from /me', async () => {
      const connected = await connectOAuth(herald, account, 'instagram-standalone');
      channelId = connected.id;
      const consent = fake.state.authorize;
      assert.equal(consent.client_id, IGS_APP.id);
      assert.equal(consent.redirect_uri, `${herald.url}/connect/instagram-standalone/callback`);
      assert.deepEqual(consent.scope.split(','), [
        'instagram_business_basic',
        'instagram_business_content_publish',
        'instagram_business_manage_comments',
        'instagram_business_manage_insights',
      ]);
      const [code] = fake.calls('POST /oauth/access_token');
      assert.deepEqual(code.form, {
        client_id: IGS_APP.id,
        client_secret: IGS_APP.secret,
        grant_type: 'authorization_code',
        redirect_uri: consent.redirect_uri,
        code: IGS_CODE,
      });
      const [exchange] = fake.calls('GET /access_token');
      assert.deepEqual(exchange.query, { grant_type: 'ig_exchange_token', client_secret: IGS_APP.secret, access_token: 'igs-short' });
      const [me] = fake.calls('GET /:version/me');
      v = me.params.version;
      assert.equal(me.headers.authorization, 'Bearer igs-long-1');
      assert.match(me.query.fields, /user_id/);
      const channel = await listedChannel(account, channelId);
      assert.equal(channel.name, IGS_USER.name);
      assert.equal(channel.profile, IGS_USER.username);
    });

    it('refuses a text-only post before queueing: Instagram needs media', async () => {
      const refused = await account.call('POST', '/posts', {
        type: 'now',
        date: new Date().toISOString(),
        shortLink: false,
        tags: [],
        posts: [{ integration: { id: channelId }, value: [{ content: 'words', image: [] }], settings: POST }],
      });
      assert.equal(refused.status, 400);
      assert.ok(
        refused.body.errors.some((e: any) => e.path === 'posts.0.value.0.image'),
        'a text-only post is refused at its media: Instagram needs an image or video',
      );
    });

    it('publishes an image and a first comment on graph.instagram.com, under the exact account id', async () => {
      const png = await uploadPng(account, herald);
      const from = fake.requests.length;
      const post = await settled(account, await publishNow(account, channelId, [{ content: 'Solo show', media: [png] }, 'Opening at 6'], POST));
      assert.equal(post.state, 'PUBLISHED', post.error);
      const posts = since(from).filter((r) => r.method === 'POST');
      assert.deepEqual(
        posts.map((r) => r.path),
        [`/${v}/${IGS_USER.user_id}/media`, `/${v}/${IGS_USER.user_id}/media_publish`, `/${v}/${post.releaseId}/comments`],
        'the 17-digit account id is used as Instagram wrote it, not rounded',
      );
      assert.equal(posts[0].headers.authorization, 'Bearer igs-long-1');
      assert.equal(posts[0].form!.caption, 'Solo show');
      assert.deepEqual(posts[2].form, { message: 'Opening at 6' });
      assert.equal(post.thread[1].releaseId, fake.comments.at(-1)!.id);
    });

    it("ends in ERROR with Instagram's message when it refuses the post", async () => {
      const png = await uploadPng(account, herald);
      fake.failNext(
        'POST /:version/:user/media_publish',
        graphError(9, 'Application request limit reached', { subcode: 2207051, userMessage: 'We restrict certain activity to protect our community.' }),
      );
      const post = await settled(account, await publishNow(account, channelId, [{ content: 'Blocked', media: [png] }], POST));
      assert.equal(post.state, 'ERROR');
      assert.match(post.error, /We restrict certain activity/);
      assert.deepEqual(
        post.thread[0].attempts.map((a: any) => a.outcome),
        ['failed'],
      );
    });

    it('waits when Instagram throttles the user (code 17), then publishes once', async () => {
      const png = await uploadPng(account, herald);
      fake.failNext('POST /:version/:user/media', graphError(17, 'User request limit reached'));
      const post = await settled(account, await publishNow(account, channelId, [{ content: 'Steady', media: [png] }], POST));
      assert.equal(post.state, 'PUBLISHED', post.error);
      assert.deepEqual(
        post.thread[0].attempts.map((a: any) => a.outcome),
        ['retry', 'published'],
      );
      assert.equal(fake.media.filter((m) => m.caption === 'Steady').length, 1);
    });

    serverErrorAfterCreate(() => ({
      fake,
      account,
      publish: async (text) => publishNow(account, channelId, [{ content: text, media: [await uploadPng(account, herald)] }], POST),
      held: (text) => fake.media.filter((m) => m.caption === text).length,
    }));

    it("reads the account's insights and a post's on graph.instagram.com, under the exact account id", async () => {
      const days = lastDays(7);
      setDaily(fake, IGS_USER.user_id, 'reach', Object.fromEntries(days.map((d, i) => [d, i + 1])));
      setDaily(fake, IGS_USER.user_id, 'likes', { [days[6]]: 9 });
      fake.followers.set(IGS_USER.user_id, 420);
      const week = await account.call('GET', `/analytics/${channelId}?date=7`);
      assert.equal(week.status, 200, JSON.stringify(week.body));
      const today = days[6];
      assert.deepEqual(week.body[0], { label: 'Reach', data: days.map((date, i) => ({ date, total: i + 1 })), percentageChange: 200 });
      assert.deepEqual(
        week.body.slice(1).map((s: any) => [s.label, s.data]),
        [
          ['Views', [{ total: 0, date: today }]],
          ['Likes', [{ total: 9, date: today }]],
          ['Comments', [{ total: 0, date: today }]],
          ['Shares', [{ total: 0, date: today }]],
          ['Saves', [{ total: 0, date: today }]],
          ['Interactions', [{ total: 0, date: today }]],
          ['Followers', [{ total: 420, date: today }]],
          ['Posts', [{ total: fake.media.length, date: today }]],
        ],
      );
      const reads = fake.calls('GET /:version/:id/insights').slice(-2);
      assert.deepEqual(
        reads.map((r) => r.path),
        [`/${v}/${IGS_USER.user_id}/insights`, `/${v}/${IGS_USER.user_id}/insights`],
      );
      assert.match(String(reads[0].headers.authorization), /^Bearer igs-long-/);

      const png = await uploadPng(account, herald);
      const post = await settled(account, await publishNow(account, channelId, [{ content: 'Counted', media: [png] }], POST));
      assert.equal(post.state, 'PUBLISHED', post.error);
      setLifetime(fake, post.releaseId, { views: 90, reach: 60, likes: 12, saved: 1, shares: 0, total_interactions: 13 });
      const figures = await account.call('GET', `/analytics/post/${post.id}?date=7`);
      assert.equal(figures.status, 200, JSON.stringify(figures.body));
      assert.deepEqual(
        figures.body.map((s: any) => [s.label, s.data[0].total]),
        [
          ['Views', 90],
          ['Reach', 60],
          ['Likes', 12],
          ['Comments', 0],
          ['Saves', 1],
          ['Shares', 0],
          ['Interactions', 13],
        ],
      );
    });

    it("answers 400 with Instagram's own words when instagram_business_manage_insights was not granted", async () => {
      declined(fake).add('instagram_business_manage_insights');
      try {
        assertError(await account.call('GET', `/analytics/${channelId}?date=30`), 400, {
          code: 'network_refused',
          message: /Application does not have permission for this action.*code 10/,
        });
      } finally {
        declined(fake).delete('instagram_business_manage_insights');
      }
    });

    it("lists the account's latest posts for a post published by hand (GET /posts/{id}/missing)", async () => {
      const draft = await saveDraft(account, channelId, 'by hand', POST);
      const missing = await account.call('GET', `/posts/${draft}/missing`);
      assert.equal(missing.status, 200, JSON.stringify(missing.body));
      const listed = fake.media.filter((m) => m.owner === IGS_USER.user_id).reverse();
      assert.ok(listed.length >= 3, 'several posts were published');
      assert.deepEqual(
        missing.body,
        listed.map((m) => ({ id: m.id, url: `https://www.instagram.com/p/${m.id}/`, text: m.caption, at: toSecond(m.at) })),
      );
    });

    it('renews the long-lived token before it lapses, then publishes with the new one', async () => {
      // Reconnecting the same account with a token close to its end updates the same channel.
      fake.lifetime = 3600;
      const again = await connectOAuth(herald, account, 'instagram-standalone');
      assert.equal(again.id, channelId);
      fake.lifetime = 5_184_000;
      assert.equal(fake.calls('GET /access_token').length, 2);
      const old = 'igs-long-2';
      const png = await uploadPng(account, herald);
      const from = fake.requests.length;
      const post = await settled(account, await publishNow(account, channelId, [{ content: 'Renewed', media: [png] }], POST));
      assert.equal(post.state, 'PUBLISHED', post.error);
      const sent = since(from);
      const refresh = sent.find((r) => r.path === '/refresh_access_token')!;
      assert.deepEqual(refresh.query, { grant_type: 'ig_refresh_token', access_token: old });
      const create = sent.find((r) => r.method === 'POST' && r.path.endsWith('/media'))!;
      assert.ok(sent.indexOf(refresh) < sent.indexOf(create), 'renewed before publishing');
      assert.equal(create.headers.authorization, 'Bearer igs-long-3');
    });

    it('asks for a reconnection when the token has expired and cannot be renewed', async () => {
      for (const token of tokenBook(fake).valid.keys()) tokenBook(fake).revoked.add(token);
      const png = await uploadPng(account, herald);
      const from = fake.requests.length;
      const post = await settled(account, await publishNow(account, channelId, [{ content: 'Lapsed', media: [png] }], POST));
      assert.equal(post.state, 'ERROR');
      assert.match(post.error, /must be reconnected/);
      assert.ok(
        since(from).some((r) => r.path === '/refresh_access_token'),
        'a renewal was tried first',
      );
      assert.equal((await listedChannel(account, channelId)).needsReconnect, true);
    });
  });
}
