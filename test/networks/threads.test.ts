import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { threadsLength } from '../../src/providers/text-counting.ts';
import { connectOAuth } from '../helpers/connect.ts';
import { startHerald, type TestAccount, type TestHerald } from '../helpers/herald.ts';
import { testStores, storeSuite } from '../helpers/stores.ts';
import { startThreadsFake, TH_APP, TH_USER, type ThreadsFake } from '../fakes/threads.ts';
import { containerStore, declined, graphError, setDaily, setLifetime, tokenBook } from '../fakes/meta.ts';
import { assertError } from '../helpers/api-fixtures.ts';
import { listedChannel, publishNow, settled, uploadMp4, uploadPng, saveDraft } from './support.ts';
import { serverErrorAfterCreate } from './create-5xx.ts';
import { teardown } from '../helpers/teardown.ts';

/** The last `n` days (UTC), oldest first. */
const lastDays = (n: number, now = Date.now()) => Array.from({ length: n }, (_, i) => new Date(now - (n - 1 - i) * 86_400_000).toISOString().slice(0, 10));
/** A Graph timestamp as Herald gives it back (Graph has no milliseconds). */
const toSecond = (at: number) => new Date(Math.floor(at / 1000) * 1000).toISOString();

describe('Threads text length', () => {
  it('counts characters, and an emoji as its UTF-8 bytes, as the Threads docs say', () => {
    assert.equal(threadsLength('hello'), 5);
    assert.equal(threadsLength('héllo'), 5);
    assert.equal(threadsLength('😀'), 4);
    assert.equal(threadsLength('👍🏽'), 8);
  });
});

for (const store of await testStores()) {
  describe(`threads (${store})`, storeSuite(store), () => {
    let fake: ThreadsFake;
    let herald: TestHerald;
    let account: TestAccount;
    let channelId: string;
    let token = 'th-long-1';

    before(async () => {
      fake = await startThreadsFake();
      herald = await startHerald(store, {
        // A publish gives up after 4 s here, so a video Threads takes longer to process spans attempts.
        engine: { pollMs: 50, publishTimeoutMs: 4_000 },
        env: {
          HERALD_THREADS_CLIENT_ID: TH_APP.id,
          HERALD_THREADS_CLIENT_SECRET: TH_APP.secret,
          HERALD_THREADS_API_URL: fake.url,
          HERALD_THREADS_LOGIN_URL: fake.url,
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
    const posts = (from: number) => since(from).filter((r) => r.method === 'POST');

    it('connects with Threads OAuth and a long-lived token', async () => {
      const connected = await connectOAuth(herald, account, 'threads');
      channelId = connected.id;
      const consent = fake.state.authorize;
      assert.equal(consent.client_id, TH_APP.id);
      assert.equal(consent.redirect_uri, `${herald.url}/connect/threads/callback`);
      assert.equal(consent.response_type, 'code');
      for (const scope of ['threads_basic', 'threads_content_publish', 'threads_manage_replies', 'threads_manage_insights'])
        assert.ok(consent.scope.split(',').includes(scope), scope);
      const [code] = fake.calls('POST /oauth/access_token');
      assert.deepEqual(code.form, {
        client_id: TH_APP.id,
        client_secret: TH_APP.secret,
        grant_type: 'authorization_code',
        redirect_uri: consent.redirect_uri,
        code: 'th-code-1',
      });
      const [exchange] = fake.calls('GET /access_token');
      assert.deepEqual(exchange.query, { grant_type: 'th_exchange_token', client_secret: TH_APP.secret, access_token: 'th-short' });
      const [me] = fake.calls('GET /:version/me');
      assert.equal(me.path, '/v1.0/me');
      assert.equal(me.query.access_token, token);
      assert.equal(me.headers.authorization, undefined);
      const channel = await listedChannel(account, channelId);
      assert.equal(channel.name, TH_USER.name);
      assert.equal(channel.profile, TH_USER.username);
    });

    it('publishes text: a TEXT container, polled until FINISHED, then threads_publish', async () => {
      const from = fake.requests.length;
      containerStore(fake).processingMs.other = 900;
      const post = await settled(account, await publishNow(account, channelId, ['Hello Threads']));
      containerStore(fake).processingMs.other = 0;
      assert.equal(post.state, 'PUBLISHED', post.error);
      const [create, publish] = posts(from);
      assert.equal(create.path, `/v1.0/${TH_USER.id}/threads`);
      assert.deepEqual(create.form, { media_type: 'TEXT', text: 'Hello Threads', access_token: token });
      const containerId = fake.posts.at(-1)!.container;
      const looks = since(from).filter((r) => r.method === 'GET' && r.path === `/v1.0/${containerId}`);
      assert.equal(looks.length, 2);
      assert.equal(looks[0].query.fields, 'status,error_message');
      assert.equal(publish.path, `/v1.0/${TH_USER.id}/threads_publish`);
      assert.deepEqual(publish.form, { creation_id: containerId, access_token: token });
      assert.equal(post.releaseId, fake.posts.at(-1)!.id);
      assert.equal(post.releaseURL, `https://www.threads.net/@${TH_USER.username}/post/S${post.releaseId}`);
    });

    it('publishes a text of exactly 500 characters as Threads counts them (a letter outside the BMP is one)', async () => {
      const text = `${'a'.repeat(499)}𝐀`;
      const post = await settled(account, await publishNow(account, channelId, [text]));
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
    });

    it('publishes an image, and several media as a carousel of finished children', async () => {
      const png = await uploadPng(account, herald);
      const clip = await uploadMp4(account, herald, 4096);
      let from = fake.requests.length;
      const one = await settled(account, await publishNow(account, channelId, [{ content: 'A picture', media: [png] }]));
      assert.equal(one.state, 'PUBLISHED', one.error);
      const [image] = posts(from);
      assert.equal(image.form!.media_type, 'IMAGE');
      assert.equal(image.form!.text, 'A picture');
      const fetched = fake.state.containers.containers.get(fake.posts.at(-1)!.container).fetched;
      assert.equal(fetched.status, 200, 'Threads fetched the image from its public URL');

      from = fake.requests.length;
      const carousel = await settled(account, await publishNow(account, channelId, [{ content: 'Both', media: [png, clip] }]));
      assert.equal(carousel.state, 'PUBLISHED', carousel.error);
      const [c1, c2, parent, publish] = posts(from);
      assert.deepEqual([c1.form!.media_type, c1.form!.is_carousel_item, c2.form!.media_type, c2.form!.is_carousel_item], ['IMAGE', 'true', 'VIDEO', 'true']);
      assert.ok(c2.form!.video_url.startsWith(herald.url), 'c2.form!.video_url.startsWith(herald.url)');
      assert.equal(parent.form!.media_type, 'CAROUSEL');
      assert.equal(parent.form!.text, 'Both');
      assert.equal(parent.form!.children, fake.posts.at(-1)!.children.join(','));
      assert.equal(publish.path, `/v1.0/${TH_USER.id}/threads_publish`);
    });

    it('a carousel video still processing when an attempt ends is taken up again by the next one, never made twice', async () => {
      const png = await uploadPng(account, herald);
      const clip = await uploadMp4(account, herald, 6000);
      containerStore(fake).processingMs.video = 6_000;
      const from = fake.requests.length;
      const post = await settled(account, await publishNow(account, channelId, [{ content: 'A slow video', media: [png, clip] }]), 30_000);
      containerStore(fake).processingMs.video = 0;
      assert.equal(post.state, 'PUBLISHED', post.error);
      const made = posts(from).filter((r) => r.path === `/v1.0/${TH_USER.id}/threads`);
      assert.deepEqual(
        made.map((r) => r.form!.media_type),
        ['IMAGE', 'VIDEO', 'CAROUSEL'],
        'each container made once',
      );
      assert.deepEqual(
        post.thread[0].attempts.map((a: any) => a.outcome),
        ['retry', 'published'],
      );
    });

    it('publishes a thread as a chain of replies (reply_to_id)', async () => {
      const post = await settled(account, await publishNow(account, channelId, ['1/3 a thread', '2/3 continues', '3/3 ends']));
      assert.equal(post.state, 'PUBLISHED', post.error);
      const [first, second, third] = post.thread.map((t: any) => fake.posts.find((p) => p.id === t.releaseId)!);
      assert.equal(first.replyTo, undefined);
      assert.equal(second.replyTo, first.id);
      assert.equal(third.replyTo, second.id);
      assert.equal(third.text, '3/3 ends');
    });

    it('refuses before queueing text over 500 (emoji counted in bytes) or with more than 5 links', async () => {
      const body = (content: string) => ({
        type: 'now',
        date: new Date().toISOString(),
        shortLink: false,
        tags: [],
        posts: [{ integration: { id: channelId }, value: [{ content, image: [] }] }],
      });
      const long = await account.callUntyped('POST', '/posts', body(`${'a'.repeat(497)}😀`));
      assert.equal(long.status, 400);
      assert.ok(
        long.body.errors.some((e: any) => e.path === 'posts.0.value.0.content' && /501/.test(e.message)),
        JSON.stringify(long.body),
      );
      const links = await account.callUntyped('POST', '/posts', body([1, 2, 3, 4, 5, 6].map((n) => `https://l${n}.example`).join(' ')));
      assert.equal(links.status, 400);
      assert.ok(
        links.body.errors.some((e: any) => /6 different links/.test(e.message)),
        'a post with more than 5 different links is refused, saying so',
      );
    });

    it("ends in ERROR with Threads' message when it refuses the post", async () => {
      fake.failNext('POST /:version/:user/threads', graphError(100, 'The user is restricted from posting', { subcode: 4279013 }));
      const post = await settled(account, await publishNow(account, channelId, ['Not today']));
      assert.equal(post.state, 'ERROR');
      assert.match(post.error, /restricted from posting/);
      assert.deepEqual(
        post.thread[0].attempts.map((a: any) => a.outcome),
        ['failed'],
      );
    });

    it('waits when Threads throttles (code 4), then publishes once', async () => {
      fake.failNext('POST /:version/:user/threads_publish', graphError(4, 'Application request limit reached'));
      const post = await settled(account, await publishNow(account, channelId, ['Slowly']));
      assert.equal(post.state, 'PUBLISHED', post.error);
      assert.deepEqual(
        post.thread[0].attempts.map((a: any) => a.outcome),
        ['retry', 'published'],
      );
      assert.equal(fake.posts.filter((p) => p.text === 'Slowly').length, 1);
    });

    serverErrorAfterCreate(() => ({
      fake,
      account,
      publish: (text) => publishNow(account, channelId, [text]),
      held: (text) => fake.posts.filter((p) => p.text === text).length,
    }));

    it("reads the profile's daily views, the period's likes, replies, reposts and quotes, and its followers", async () => {
      const days = lastDays(7);
      setDaily(fake, TH_USER.id, 'views', Object.fromEntries(days.map((d, i) => [d, i * 2])));
      setDaily(fake, TH_USER.id, 'likes', { [days[2]]: 5, [days[6]]: 1, [lastDays(8)[0]]: 100 });
      setDaily(fake, TH_USER.id, 'replies', { [days[6]]: 2 });
      setDaily(fake, TH_USER.id, 'quotes', { [days[3]]: 1 });
      setLifetime(fake, TH_USER.id, { followers_count: 77 });
      const week = await account.callUntyped('GET', `/analytics/${channelId}?date=7`);
      assert.equal(week.status, 200, JSON.stringify(week.body));
      const today = days[6];
      assert.deepEqual(week.body, [
        { label: 'Profile views', data: days.map((date, i) => ({ date, total: i * 2 })), percentageChange: 400 },
        ...[
          ['Likes', 6],
          ['Replies', 2],
          ['Reposts', 0],
          ['Quotes', 1],
          ['Followers', 77],
        ].map(([label, total]) => ({ label, data: [{ total, date: today }], percentageChange: 0 })),
      ]);
      const [read] = fake.calls('GET /:version/:user/threads_insights').slice(-1);
      assert.equal(read.path, `/v1.0/${TH_USER.id}/threads_insights`);
      assert.deepEqual(
        { ...read.query, since: 's', until: 'u' },
        { metric: 'views,likes,replies,reposts,quotes,followers_count', since: 's', until: 'u', access_token: token },
      );
      assert.equal(Number(read.query.since), Date.parse(`${days[0]}T00:00:00Z`) / 1000);

      // Threads keeps no user insights from before 2024-04-13: a longer period starts there.
      const year = await account.callUntyped('GET', `/analytics/${channelId}?date=365`);
      assert.equal(year.status, 200, JSON.stringify(year.body));
      assert.ok(
        Number(fake.calls('GET /:version/:user/threads_insights').at(-1)!.query.since) >= 1712991600,
        'insights are asked for no further back than Threads allows',
      );
    });

    it("reads a post's lifetime figures, its replies counting the whole thread under it", async () => {
      const post = await settled(account, await publishNow(account, channelId, ['Counted', 'a reply', 'and one more']));
      assert.equal(post.state, 'PUBLISHED', post.error);
      setLifetime(fake, post.releaseId, { views: 500, likes: 40, reposts: 3, quotes: 2, shares: 1 });
      const figures = await account.callUntyped('GET', `/analytics/post/${post.id}?date=7`);
      assert.equal(figures.status, 200, JSON.stringify(figures.body));
      assert.deepEqual(
        figures.body.map((s: any) => [s.label, s.data[0].total]),
        [
          ['Views', 500],
          ['Likes', 40],
          ['Replies', 2],
          ['Reposts', 3],
          ['Quotes', 2],
          ['Shares', 1],
        ],
      );
      const [read] = fake.calls('GET /:version/:media/insights').slice(-1);
      assert.equal(read.path, `/v1.0/${post.releaseId}/insights`);
      assert.equal(read.query.metric, 'views,likes,replies,reposts,quotes,shares');
    });

    it("answers 400 with Threads' own words when threads_manage_insights was taken away", async () => {
      const post = await settled(account, await publishNow(account, channelId, ['Not counted yet']));
      declined(fake).add('threads_manage_insights');
      try {
        assertError(await account.callUntyped('GET', `/analytics/${channelId}?date=14`), 400, {
          code: 'network_refused',
          message: /Application does not have permission for this action.*code 10/,
        });
        assertError(await account.callUntyped('GET', `/analytics/post/${post.id}?date=14`), 400, {
          code: 'network_refused',
          message: /does not have permission/,
        });
      } finally {
        declined(fake).delete('threads_manage_insights');
      }
      assert.equal((await account.callUntyped('GET', `/analytics/${channelId}?date=14`)).status, 200, 'a refusal is not kept');
    });

    it("lists the profile's latest posts, not its replies, for a post published by hand (GET /posts/{id}/missing)", async () => {
      const draft = await saveDraft(account, channelId, 'by hand');
      const missing = await account.callUntyped('GET', `/posts/${draft}/missing`);
      assert.equal(missing.status, 200, JSON.stringify(missing.body));
      const roots = fake.posts.filter((p) => !p.replyTo).reverse();
      assert.ok(roots.length > 3 && roots.length < fake.posts.length, 'several posts and replies were published');
      assert.deepEqual(
        missing.body,
        roots.slice(0, 25).map((p) => ({ id: p.id, url: `https://www.threads.net/@${TH_USER.username}/post/S${p.id}`, text: p.text, at: toSecond(p.at) })),
      );
    });

    it('renews the long-lived token before it lapses, then publishes with the new one', async () => {
      fake.lifetime = 3600;
      assert.equal((await connectOAuth(herald, account, 'threads')).id, channelId);
      fake.lifetime = 5_184_000;
      const from = fake.requests.length;
      const post = await settled(account, await publishNow(account, channelId, ['Fresh token']));
      assert.equal(post.state, 'PUBLISHED', post.error);
      const refresh = since(from).find((r) => r.path === '/refresh_access_token')!;
      assert.deepEqual(refresh.query, { grant_type: 'th_refresh_token', access_token: 'th-long-2' });
      token = 'th-long-3';
      assert.equal(posts(from)[0].form!.access_token, token);
    });

    it('asks for a reconnection when the token has expired and cannot be renewed', async () => {
      for (const t of tokenBook(fake).valid.keys()) tokenBook(fake).revoked.add(t);
      const post = await settled(account, await publishNow(account, channelId, ['Lapsed']));
      assert.equal(post.state, 'ERROR');
      assert.match(post.error, /must be reconnected/);
      assert.equal((await listedChannel(account, channelId)).needsReconnect, true);
    });
  });
}
