import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { connectOAuth } from '../helpers/connect.ts';
import { startHerald, type TestAccount, type TestHerald } from '../helpers/herald.ts';
import { testStores, storeSuite } from '../helpers/stores.ts';
import { IG_APP, IG_PAGES, IG_STUDIO, startInstagramFake, type InstagramFake } from '../fakes/instagram.ts';
import { containerStore, graphError, tokenBook } from '../fakes/meta.ts';
import { listedChannel, publishNow, settled, uploadMp4, uploadPng } from './support.ts';

const POST = { __type: 'instagram', post_type: 'post' };
const STUDIO_TOKEN = IG_PAGES[1].token;

for (const store of await testStores()) {
  describe(`instagram through Facebook Login (${store})`, storeSuite(store), () => {
    let fake: InstagramFake;
    let herald: TestHerald;
    let account: TestAccount;
    let channelId: string;
    let v: string;

    before(async () => {
      fake = await startInstagramFake();
      herald = await startHerald(store, {
        // A publish gives up after 4 s here, so a video Instagram takes longer to process spans attempts.
        engine: { pollMs: 50, publishTimeoutMs: 4_000 },
        env: { HERALD_INSTAGRAM_CLIENT_ID: IG_APP.id, HERALD_INSTAGRAM_CLIENT_SECRET: IG_APP.secret, HERALD_INSTAGRAM_API_URL: fake.url, HERALD_INSTAGRAM_LOGIN_URL: fake.url },
      });
      account = await herald.newAccount();
    });
    after(async () => {
      await herald?.close();
      await fake?.close();
    });

    const since = (from: number) => fake.requests.slice(from);

    it('connects the Instagram account linked to a Page of the Facebook login', async () => {
      const connected = await connectOAuth(herald, account, 'instagram');
      channelId = connected.id;
      v = fake.calls('GET /:version/dialog/oauth')[0].params.version;
      const consent = fake.state.authorize;
      assert.equal(consent.redirect_uri, `${herald.url}/connect/instagram/callback`);
      for (const scope of ['instagram_basic', 'instagram_content_publish', 'instagram_manage_comments', 'pages_show_list']) assert.ok(consent.scope.split(',').includes(scope), scope);
      const [exchange] = fake.calls('GET /:version/oauth/access_token').slice(-1);
      assert.equal(exchange.query.grant_type, 'fb_exchange_token');
      const [pages] = fake.calls('GET /:version/me/accounts');
      assert.equal(pages.headers.authorization, 'Bearer ig-user-long');
      assert.match(pages.query.fields, /instagram_business_account\{id,username,name,profile_picture_url\}/);
      // Only the Page with a linked account is offered, so there is nothing to pick.
      const channel = await listedChannel(account, channelId);
      assert.equal(channel.name, IG_STUDIO.name);
      assert.equal(channel.profile, IG_STUDIO.username);
    });

    it('refuses before queueing a post without media, a comment with media, and a missing post_type', async () => {
      const png = await uploadPng(account, herald);
      const body = (value: unknown[], settings: Record<string, unknown> = POST) => ({ type: 'now', date: new Date().toISOString(), shortLink: false, tags: [], posts: [{ integration: { id: channelId }, value, settings }] });
      const textOnly = await account.call('POST', '/posts', body([{ content: 'just words', image: [] }]));
      assert.equal(textOnly.status, 400);
      assert.ok(textOnly.body.errors.some((e: any) => e.path === 'posts.0.value.0.image' && /at least one image or video/.test(e.message)), JSON.stringify(textOnly.body));
      const comment = await account.call('POST', '/posts', body([{ content: 'pic', image: [png] }, { content: 'comment', image: [png] }]));
      assert.equal(comment.status, 400);
      assert.ok(comment.body.errors.some((e: any) => e.path === 'posts.0.value.1.image' && /text only/.test(e.message)), 'comment.body.errors.some((e: any) => e.path === \'posts.0.value.1.image\' && /text only/.test(e.mes...');
      const noType = await account.call('POST', '/posts', body([{ content: 'pic', image: [png] }], { __type: 'instagram' }));
      assert.equal(noType.status, 400);
      assert.ok(noType.body.errors.some((e: any) => e.path === 'posts.0.settings.post_type'), 'noType.body.errors.some((e: any) => e.path === \'posts.0.settings.post_type\')');
    });

    it('publishes an image: container from its public URL, polled until FINISHED, then media_publish', async () => {
      const png = await uploadPng(account, herald);
      const from = fake.requests.length;
      containerStore(fake).processingMs.image = 500;
      const post = await settled(account, await publishNow(account, channelId, [{ content: 'Studio light #photo', media: [png] }], POST));
      containerStore(fake).processingMs.image = 0;
      assert.equal(post.state, 'PUBLISHED', post.error);
      const sent = since(from);
      const create = sent.find((r) => r.method === 'POST' && r.path === `/${v}/${IG_STUDIO.id}/media`)!;
      assert.equal(create.headers.authorization, `Bearer ${STUDIO_TOKEN}`);
      assert.deepEqual(Object.keys(create.form!).sort(), ['caption', 'image_url']);
      assert.equal(create.form!.caption, 'Studio light #photo');
      const container = fake.state.containers.containers.get(fake.media.at(-1)!.container);
      assert.equal(container.fetched.status, 200, 'Instagram could fetch the image from its public URL');
      assert.match(container.fetched.type, /^image\//);
      const looks = sent.filter((r) => r.method === 'GET' && r.path === `/${v}/${container.id}`);
      assert.equal(looks.length, 2, 'IN_PROGRESS, then FINISHED');
      assert.equal(looks[0].query.fields, 'status_code,status');
      const publish = sent.find((r) => r.path === `/${v}/${IG_STUDIO.id}/media_publish`)!;
      assert.ok(sent.indexOf(publish) > sent.indexOf(looks[1]), 'published only after FINISHED');
      assert.deepEqual(publish.form, { creation_id: container.id });
      assert.equal(post.releaseId, fake.media.at(-1)!.id);
      assert.equal(post.releaseURL, `https://www.instagram.com/p/${post.releaseId}/`);
    });

    it('publishes several media as a carousel, and one video as a reel', async () => {
      const a = await uploadPng(account, herald);
      const clip = await uploadMp4(account, herald, 4096);
      let from = fake.requests.length;
      const carousel = await settled(account, await publishNow(account, channelId, [{ content: 'Two frames', media: [a, clip] }], POST));
      assert.equal(carousel.state, 'PUBLISHED', carousel.error);
      const creates = since(from).filter((r) => r.method === 'POST' && r.path.endsWith('/media'));
      assert.equal(creates.length, 3);
      assert.deepEqual({ ...creates[0].form, image_url: 'url' }, { is_carousel_item: 'true', image_url: 'url' });
      assert.deepEqual({ ...creates[1].form, video_url: 'url' }, { is_carousel_item: 'true', media_type: 'VIDEO', video_url: 'url' });
      assert.equal(creates[2].form!.media_type, 'CAROUSEL');
      assert.equal(creates[2].form!.caption, 'Two frames');
      const published = fake.media.at(-1)!;
      assert.equal(creates[2].form!.children, published.children.join(','));
      assert.equal(published.children.length, 2);

      from = fake.requests.length;
      const reel = await settled(account, await publishNow(account, channelId, [{ content: 'Behind the scenes', media: [clip] }], { ...POST, collaborators: [{ label: 'friend.cam' }] }));
      assert.equal(reel.state, 'PUBLISHED', reel.error);
      const [create] = since(from).filter((r) => r.method === 'POST' && r.path.endsWith('/media'));
      assert.equal(create.form!.media_type, 'REELS');
      assert.equal(create.form!.share_to_feed, 'true');
      assert.equal(create.form!.collaborators, '["friend.cam"]');
      assert.ok(create.form!.video_url.startsWith(herald.url), 'create.form!.video_url.startsWith(herald.url)');
      assert.equal(reel.releaseURL, `https://www.instagram.com/reel/${reel.releaseId}/`);
    });

    it('a reel still processing when an attempt ends is taken up again by the next one, never uploaded twice', async () => {
      const clip = await uploadMp4(account, herald, 6000);
      containerStore(fake).processingMs.video = 6_000;
      const from = fake.requests.length;
      const reel = await settled(account, await publishNow(account, channelId, [{ content: 'A long reel', media: [clip] }], POST), 30_000);
      containerStore(fake).processingMs.video = 0;
      assert.equal(reel.state, 'PUBLISHED', reel.error);
      const creates = since(from).filter((r) => r.method === 'POST' && r.path.endsWith('/media'));
      assert.equal(creates.length, 1, 'one container: Instagram fetched and processed the video once');
      assert.deepEqual(reel.thread[0].attempts.map((a: any) => a.outcome), ['retry', 'published']);
      assert.equal(since(from).filter((r) => r.method === 'POST' && r.path.endsWith('/media_publish')).length, 1);
    });

    it('posts the next items as comments under the post', async () => {
      const png = await uploadPng(account, herald);
      const from = fake.requests.length;
      const post = await settled(account, await publishNow(account, channelId, [{ content: 'New work', media: [png] }, 'First comment #tags', 'Second comment'], POST));
      assert.equal(post.state, 'PUBLISHED', post.error);
      const mediaId = post.thread[0].releaseId;
      const comments = since(from).filter((r) => r.method === 'POST' && r.path.endsWith('/comments'));
      assert.deepEqual(comments.map((c) => [c.path, c.form!.message]), [
        [`/${v}/${mediaId}/comments`, 'First comment #tags'],
        [`/${v}/${mediaId}/comments`, 'Second comment'],
      ]);
      assert.deepEqual(fake.comments.slice(-2).map((c) => c.id), [post.thread[1].releaseId, post.thread[2].releaseId]);
      assert.equal(post.thread[1].releaseURL, `https://www.instagram.com/p/${mediaId}/`, "a comment shows its post's address");
    });

    it("ends in ERROR with Instagram's message when it refuses the media", async () => {
      const png = await uploadPng(account, herald);
      fake.failNext('POST /:version/:user/media', graphError(100, 'The aspect ratio is not supported.', { subcode: 2207009 }));
      const refused = await settled(account, await publishNow(account, channelId, [{ content: 'Too wide', media: [png] }], POST));
      assert.equal(refused.state, 'ERROR');
      assert.match(refused.error, /aspect ratio is not supported/);
      assert.deepEqual(refused.thread[0].attempts.map((a: any) => a.outcome), ['failed']);

      // A container that fails processing is refused too, with the reason Instagram gives.
      fake.failNext('GET /:version/:id', { body: { status_code: 'ERROR', status: 'Error: Unsupported video format (2207026)' } });
      const failed = await settled(account, await publishNow(account, channelId, [{ content: 'Bad clip', media: [png] }], POST));
      assert.equal(failed.state, 'ERROR');
      assert.match(failed.error, /Unsupported video format/);
      assert.equal(fake.media.filter((m) => m.caption === 'Bad clip' || m.caption === 'Too wide').length, 0);
    });

    it('waits when Instagram throttles (code 4), then publishes once', async () => {
      const png = await uploadPng(account, herald);
      fake.failNext('POST /:version/:user/media_publish', graphError(4, 'Application request limit reached'));
      const post = await settled(account, await publishNow(account, channelId, [{ content: 'Patience', media: [png] }], POST));
      assert.equal(post.state, 'PUBLISHED', post.error);
      assert.deepEqual(post.thread[0].attempts.map((a: any) => a.outcome), ['retry', 'published']);
      assert.equal(fake.media.filter((m) => m.caption === 'Patience').length, 1);
    });

    it('lists the linked Instagram accounts through the accounts tool', async () => {
      const result = await account.call('POST', `/integration-trigger/${channelId}`, { methodName: 'accounts' });
      assert.equal(result.status, 200, JSON.stringify(result.body));
      assert.deepEqual(result.body.output.accounts.map((a: any) => [a.id, a.username, a.connected]), [[IG_STUDIO.id, IG_STUDIO.username, true]]);
    });

    it('marks the channel for reconnection when the token has expired', async () => {
      const png = await uploadPng(account, herald);
      tokenBook(fake).revoked.add(STUDIO_TOKEN);
      const post = await settled(account, await publishNow(account, channelId, [{ content: 'Expired', media: [png] }], POST));
      assert.equal(post.state, 'ERROR');
      assert.match(post.error, /must be reconnected/);
      assert.match(post.error, /Error validating access token/);
      assert.equal((await listedChannel(account, channelId)).needsReconnect, true);
    });
  });
}
