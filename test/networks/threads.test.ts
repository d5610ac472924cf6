import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { threadsLength } from '../../src/providers/text-counting.ts';
import { connectOAuth } from '../helpers/connect.ts';
import { startHerald, type TestAccount, type TestHerald } from '../helpers/herald.ts';
import { testStores, storeSuite } from '../helpers/stores.ts';
import { startThreadsFake, TH_APP, TH_USER, type ThreadsFake } from '../fakes/threads.ts';
import { containerStore, graphError, tokenBook } from '../fakes/meta.ts';
import { listedChannel, publishNow, settled, uploadMp4, uploadPng } from './support.ts';

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
        env: { HERALD_THREADS_CLIENT_ID: TH_APP.id, HERALD_THREADS_CLIENT_SECRET: TH_APP.secret, HERALD_THREADS_API_URL: fake.url, HERALD_THREADS_LOGIN_URL: fake.url },
      });
      account = await herald.newAccount();
    });
    after(async () => {
      await herald?.close();
      await fake?.close();
    });

    const since = (from: number) => fake.requests.slice(from);
    const posts = (from: number) => since(from).filter((r) => r.method === 'POST');

    it('connects with Threads OAuth and a long-lived token', async () => {
      const connected = await connectOAuth(herald, account, 'threads');
      channelId = connected.id;
      const consent = fake.state.authorize;
      assert.equal(consent.client_id, TH_APP.id);
      assert.equal(consent.redirect_uri, `${herald.url}/connect/threads/callback`);
      assert.equal(consent.response_type, 'code');
      for (const scope of ['threads_basic', 'threads_content_publish', 'threads_manage_replies']) assert.ok(consent.scope.split(',').includes(scope), scope);
      const [code] = fake.calls('POST /oauth/access_token');
      assert.deepEqual(code.form, { client_id: TH_APP.id, client_secret: TH_APP.secret, grant_type: 'authorization_code', redirect_uri: consent.redirect_uri, code: 'th-code-1' });
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
      containerStore(fake).processingMs.other = 500;
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
      assert.deepEqual(made.map((r) => r.form!.media_type), ['IMAGE', 'VIDEO', 'CAROUSEL'], 'each container made once');
      assert.deepEqual(post.thread[0].attempts.map((a: any) => a.outcome), ['retry', 'published']);
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
      const body = (content: string) => ({ type: 'now', date: new Date().toISOString(), shortLink: false, tags: [], posts: [{ integration: { id: channelId }, value: [{ content, image: [] }] }] });
      const long = await account.call('POST', '/posts', body(`${'a'.repeat(497)}😀`));
      assert.equal(long.status, 400);
      assert.ok(long.body.errors.some((e: any) => e.path === 'posts.0.value.0.content' && /501/.test(e.message)), JSON.stringify(long.body));
      const links = await account.call('POST', '/posts', body([1, 2, 3, 4, 5, 6].map((n) => `https://l${n}.example`).join(' ')));
      assert.equal(links.status, 400);
      assert.ok(links.body.errors.some((e: any) => /6 different links/.test(e.message)), 'links.body.errors.some((e: any) => /6 different links/.test(e.message))');
    });

    it("ends in ERROR with Threads' message when it refuses the post", async () => {
      fake.failNext('POST /:version/:user/threads', graphError(100, 'The user is restricted from posting', { subcode: 4279013 }));
      const post = await settled(account, await publishNow(account, channelId, ['Not today']));
      assert.equal(post.state, 'ERROR');
      assert.match(post.error, /restricted from posting/);
      assert.deepEqual(post.thread[0].attempts.map((a: any) => a.outcome), ['failed']);
    });

    it('waits when Threads throttles (code 4), then publishes once', async () => {
      fake.failNext('POST /:version/:user/threads_publish', graphError(4, 'Application request limit reached'));
      const post = await settled(account, await publishNow(account, channelId, ['Slowly']));
      assert.equal(post.state, 'PUBLISHED', post.error);
      assert.deepEqual(post.thread[0].attempts.map((a: any) => a.outcome), ['retry', 'published']);
      assert.equal(fake.posts.filter((p) => p.text === 'Slowly').length, 1);
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
