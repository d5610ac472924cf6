import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { connectOAuth } from '../helpers/connect.ts';
import { startHerald, type TestAccount, type TestHerald } from '../helpers/herald.ts';
import { testStores, storeSuite } from '../helpers/stores.ts';
import { IG_APP, IG_PAGES, IG_STUDIO, instagramContentRoutes, startInstagramFake, type InstagramFake } from '../fakes/instagram.ts';
import { containerStore, declined, graphError, setDaily, setLifetime, tokenBook } from '../fakes/meta.ts';
import { assertError } from '../helpers/api-fixtures.ts';
import { listedChannel, publishNow, settled, uploadMp4, uploadPng, saveDraft } from './support.ts';
import { serverErrorAfterCreate } from './create-5xx.ts';
import { teardown } from '../helpers/teardown.ts';

const POST = { __type: 'instagram', post_type: 'post' };
const STUDIO_TOKEN = IG_PAGES[1].token;

/** The last `n` days (UTC), oldest first. */
const lastDays = (n: number, now = Date.now()) => Array.from({ length: n }, (_, i) => new Date(now - (n - 1 - i) * 86_400_000).toISOString().slice(0, 10));
/** A Graph timestamp as Herald gives it back (Graph has no milliseconds). */
const toSecond = (at: number) => new Date(Math.floor(at / 1000) * 1000).toISOString();

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
        env: {
          HERALD_INSTAGRAM_CLIENT_ID: IG_APP.id,
          HERALD_INSTAGRAM_CLIENT_SECRET: IG_APP.secret,
          HERALD_INSTAGRAM_API_URL: fake.url,
          HERALD_INSTAGRAM_LOGIN_URL: fake.url,
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

    it('connects the Instagram account linked to a Page of the Facebook login', async () => {
      const connected = await connectOAuth(herald, account, 'instagram');
      channelId = connected.id;
      v = fake.calls('GET /:version/dialog/oauth')[0].params.version;
      const consent = fake.state.authorize;
      assert.equal(consent.redirect_uri, `${herald.url}/connect/instagram/callback`);
      for (const scope of ['instagram_basic', 'instagram_content_publish', 'instagram_manage_comments', 'instagram_manage_insights', 'pages_show_list'])
        assert.ok(consent.scope.split(',').includes(scope), scope);
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
      const body = (value: unknown[], settings: Record<string, unknown> = POST) => ({
        type: 'now',
        date: new Date().toISOString(),
        shortLink: false,
        tags: [],
        posts: [{ integration: { id: channelId }, value, settings }],
      });
      const textOnly = await account.callUntyped('POST', '/posts', body([{ content: 'just words', image: [] }]));
      assert.equal(textOnly.status, 400);
      assert.ok(
        textOnly.body.errors.some((e: any) => e.path === 'posts.0.value.0.image' && /at least one image or video/.test(e.message)),
        JSON.stringify(textOnly.body),
      );
      const comment = await account.callUntyped(
        'POST',
        '/posts',
        body([
          { content: 'pic', image: [png] },
          { content: 'comment', image: [png] },
        ]),
      );
      assert.equal(comment.status, 400);
      assert.ok(
        comment.body.errors.some((e: any) => e.path === 'posts.0.value.1.image' && /text only/.test(e.message)),
        'a comment with media is refused: comments are text only',
      );
      const noType = await account.callUntyped('POST', '/posts', body([{ content: 'pic', image: [png] }], { __type: 'instagram' }));
      assert.equal(noType.status, 400);
      assert.ok(
        noType.body.errors.some((e: any) => e.path === 'posts.0.settings.post_type'),
        'a post without its post type is refused at that setting',
      );
    });

    it('publishes an image: container from its public URL, polled until FINISHED, then media_publish', async () => {
      const png = await uploadPng(account, herald);
      const from = fake.requests.length;
      containerStore(fake).processingMs.image = 900;
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
      // Collaborators are asked for, but a carousel cannot take them: it is published without.
      const carousel = await settled(
        account,
        await publishNow(account, channelId, [{ content: 'Two frames', media: [a, clip] }], { ...POST, collaborators: [{ label: 'friend.cam' }] }),
      );
      assert.equal(carousel.state, 'PUBLISHED', carousel.error);
      const creates = since(from).filter((r) => r.method === 'POST' && r.path.endsWith('/media'));
      assert.equal(creates.length, 3);
      assert.deepEqual({ ...creates[0].form, image_url: 'url' }, { is_carousel_item: 'true', image_url: 'url' });
      assert.deepEqual({ ...creates[1].form, video_url: 'url' }, { is_carousel_item: 'true', media_type: 'VIDEO', video_url: 'url' });
      assert.equal(creates[2].form!.media_type, 'CAROUSEL');
      assert.equal(creates[2].form!.caption, 'Two frames');
      assert.equal(creates[2].form!.collaborators, undefined);
      const published = fake.media.at(-1)!;
      assert.equal(creates[2].form!.children, published.children.join(','));
      assert.equal(published.children.length, 2);

      from = fake.requests.length;
      const reel = await settled(
        account,
        await publishNow(account, channelId, [{ content: 'Behind the scenes', media: [clip] }], { ...POST, collaborators: [{ label: 'friend.cam' }] }),
      );
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
      assert.deepEqual(
        reel.thread[0].attempts.map((a: any) => a.outcome),
        ['retry', 'published'],
      );
      assert.equal(since(from).filter((r) => r.method === 'POST' && r.path.endsWith('/media_publish')).length, 1);
    });

    const storiesFrom = (from: number) => since(from).filter((r) => r.method === 'POST' && r.path.endsWith('/media_publish'));

    it('several stories wait for a video still processing before any goes out, and each is posted once', async () => {
      const png = await uploadPng(account, herald);
      const clip = await uploadMp4(account, herald, 6000);
      // Longer than one attempt (4 s): the image is ready at once, the video only in the next attempt.
      containerStore(fake).processingMs.video = 6_000;
      const from = fake.requests.length;
      const before = fake.media.length;
      const story = await settled(
        account,
        await publishNow(account, channelId, [{ content: '', media: [png, clip] }], { ...POST, post_type: 'story' }),
        30_000,
      );
      containerStore(fake).processingMs.video = 0;
      assert.equal(story.state, 'PUBLISHED', story.error);
      assert.deepEqual(
        fake.media.slice(before).map((m) => m.type),
        ['STORIES', 'STORIES'],
      );
      assert.equal(storiesFrom(from).length, 2, 'each story published once');
      assert.equal(since(from).filter((r) => r.method === 'POST' && r.path.endsWith('/media')).length, 2, 'one container per media');
      assert.equal(story.releaseId, fake.media[before].id);
    });

    it('a story already live is not posted again when the next one is throttled', async () => {
      const [first, second] = [await uploadPng(account, herald), await uploadPng(account, herald)];
      // Instagram throttles (code 4) the second media_publish of the attempt, after the first story went out.
      const publish = instagramContentRoutes(fake, 'instagram_manage_insights')['POST /:version/:user/media_publish'];
      let published = 0;
      fake.route({
        'POST /:version/:user/media_publish': (request, f) => (++published === 2 ? graphError(4, 'Application request limit reached') : publish(request, f)),
      });
      const from = fake.requests.length;
      const before = fake.media.length;
      const story = await settled(account, await publishNow(account, channelId, [{ content: '', media: [first, second] }], { ...POST, post_type: 'story' }));
      fake.route({ 'POST /:version/:user/media_publish': publish });
      assert.equal(story.state, 'PUBLISHED', story.error);
      assert.deepEqual(
        story.thread[0].attempts.map((a: any) => a.outcome),
        ['retry', 'published'],
      );
      assert.equal(fake.media.length - before, 2, 'two stories, none twice');
      assert.equal(storiesFrom(from).length, 3, 'the throttled one was asked for again, the live one was not');
      assert.equal(story.releaseId, fake.media[before].id);
    });

    it('posts the next items as comments under the post', async () => {
      const png = await uploadPng(account, herald);
      const from = fake.requests.length;
      const post = await settled(
        account,
        await publishNow(account, channelId, [{ content: 'New work', media: [png] }, 'First comment #tags', 'Second comment'], POST),
      );
      assert.equal(post.state, 'PUBLISHED', post.error);
      const mediaId = post.thread[0].releaseId;
      const comments = since(from).filter((r) => r.method === 'POST' && r.path.endsWith('/comments'));
      assert.deepEqual(
        comments.map((c) => [c.path, c.form!.message]),
        [
          [`/${v}/${mediaId}/comments`, 'First comment #tags'],
          [`/${v}/${mediaId}/comments`, 'Second comment'],
        ],
      );
      assert.deepEqual(
        fake.comments.slice(-2).map((c) => c.id),
        [post.thread[1].releaseId, post.thread[2].releaseId],
      );
      assert.equal(post.thread[1].releaseURL, `https://www.instagram.com/p/${mediaId}/`, "a comment shows its post's address");
    });

    it("ends in ERROR with Instagram's message when it refuses the media", async () => {
      const png = await uploadPng(account, herald);
      fake.failNext('POST /:version/:user/media', graphError(100, 'The aspect ratio is not supported.', { subcode: 2207009 }));
      const refused = await settled(account, await publishNow(account, channelId, [{ content: 'Too wide', media: [png] }], POST));
      assert.equal(refused.state, 'ERROR');
      assert.match(refused.error, /aspect ratio is not supported/);
      assert.deepEqual(
        refused.thread[0].attempts.map((a: any) => a.outcome),
        ['failed'],
      );

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
      assert.deepEqual(
        post.thread[0].attempts.map((a: any) => a.outcome),
        ['retry', 'published'],
      );
      assert.equal(fake.media.filter((m) => m.caption === 'Patience').length, 1);
    });

    serverErrorAfterCreate(() => ({
      fake,
      account,
      publish: async (text) => publishNow(account, channelId, [{ content: text, media: [await uploadPng(account, herald)] }], POST),
      held: (text) => fake.media.filter((m) => m.caption === text).length,
    }));

    it('lists the linked Instagram accounts through the accounts tool', async () => {
      const result = await account.callUntyped('POST', `/integration-trigger/${channelId}`, { methodName: 'accounts' });
      assert.equal(result.status, 200, JSON.stringify(result.body));
      assert.deepEqual(
        result.body.output.accounts.map((a: any) => [a.id, a.username, a.connected]),
        [[IG_STUDIO.id, IG_STUDIO.username, true]],
      );
    });

    it("reads the account's daily reach, its interactions over the period and its followers, 30 days at a time", async () => {
      const days = lastDays(7);
      setDaily(fake, IG_STUDIO.id, 'reach', Object.fromEntries(days.map((d, i) => [d, i < 4 ? 5 : 10])));
      setDaily(fake, IG_STUDIO.id, 'views', Object.fromEntries(days.map((d) => [d, 100])));
      setDaily(fake, IG_STUDIO.id, 'likes', { [days[1]]: 3, [days[5]]: 4, [lastDays(41)[0]]: 6 });
      setDaily(fake, IG_STUDIO.id, 'comments', { [days[6]]: 2 });
      setDaily(fake, IG_STUDIO.id, 'saves', { [days[0]]: 1 });
      setDaily(fake, IG_STUDIO.id, 'total_interactions', { [days[6]]: 10 });
      fake.followers.set(IG_STUDIO.id, 150);
      const posts = fake.media.filter((m) => m.owner === IG_STUDIO.id && m.type !== 'STORIES').length;

      const from = fake.requests.length;
      const week = await account.callUntyped('GET', `/analytics/${channelId}?date=7`);
      assert.equal(week.status, 200, JSON.stringify(week.body));
      const today = days[6];
      assert.deepEqual(week.body, [
        { label: 'Reach', data: days.map((date, i) => ({ date, total: i < 4 ? 5 : 10 })), percentageChange: 100 },
        ...[
          ['Views', 700],
          ['Likes', 7],
          ['Comments', 2],
          ['Shares', 0],
          ['Saves', 1],
          ['Interactions', 10],
          ['Followers', 150],
          ['Posts', posts],
        ].map(([label, total]) => ({ label, data: [{ total, date: today }], percentageChange: 0 })),
      ]);
      const [series, totals] = since(from).filter((r) => r.path === `/${v}/${IG_STUDIO.id}/insights`);
      assert.equal(series.headers.authorization, `Bearer ${STUDIO_TOKEN}`);
      assert.deepEqual({ ...series.query, since: 's', until: 'u' }, { metric: 'reach', period: 'day', metric_type: 'time_series', since: 's', until: 'u' });
      assert.equal(totals.query.metric, 'views,likes,comments,shares,saves,total_interactions');
      assert.equal(totals.query.metric_type, 'total_value');

      // 45 days are two ranges (Instagram allows 30 at once); totals add up across them.
      const longer = await account.callUntyped('GET', `/analytics/${channelId}?date=45`);
      assert.equal(longer.status, 200, JSON.stringify(longer.body));
      assert.equal(longer.body[0].data.length, 45);
      assert.equal(longer.body.find((s: any) => s.label === 'Likes').data[0].total, 13);
    });

    it("reads a post's and a story's lifetime figures, asking each only for the metrics its type has", async () => {
      const png = await uploadPng(account, herald);
      const post = await settled(account, await publishNow(account, channelId, [{ content: 'Counted', media: [png] }, 'Nice one'], POST));
      assert.equal(post.state, 'PUBLISHED', post.error);
      setLifetime(fake, post.releaseId, { views: 300, reach: 200, likes: 25, saved: 4, shares: 2, total_interactions: 32 });
      const figures = await account.callUntyped('GET', `/analytics/post/${post.id}?date=7`);
      assert.equal(figures.status, 200, JSON.stringify(figures.body));
      assert.deepEqual(
        figures.body.map((s: any) => [s.label, s.data[0].total]),
        [
          ['Views', 300],
          ['Reach', 200],
          ['Likes', 25],
          ['Comments', 1],
          ['Saves', 4],
          ['Shares', 2],
          ['Interactions', 32],
        ],
      );

      const story = await settled(account, await publishNow(account, channelId, [{ content: '', media: [png] }], { ...POST, post_type: 'story' }));
      assert.equal(story.state, 'PUBLISHED', story.error);
      setLifetime(fake, story.releaseId, { views: 50, reach: 40, replies: 3, shares: 1, total_interactions: 4 });
      const storyFigures = await account.callUntyped('GET', `/analytics/post/${story.id}?date=7`);
      assert.equal(storyFigures.status, 200, JSON.stringify(storyFigures.body));
      assert.deepEqual(
        storyFigures.body.map((s: any) => [s.label, s.data[0].total]),
        [
          ['Views', 50],
          ['Reach', 40],
          ['Replies', 3],
          ['Shares', 1],
          ['Interactions', 4],
        ],
      );
      const [asked] = fake.calls('GET /:version/:id/insights').slice(-1);
      assert.equal(asked.path, `/${v}/${story.releaseId}/insights`);
      assert.equal(asked.query.metric, 'views,reach,replies,shares,total_interactions');
    });

    it("answers 400 with Instagram's own words when instagram_manage_insights was taken away", async () => {
      const png = await uploadPng(account, herald);
      const post = await settled(account, await publishNow(account, channelId, [{ content: 'Not counted yet', media: [png] }], POST));
      declined(fake).add('instagram_manage_insights');
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
        declined(fake).delete('instagram_manage_insights');
      }
      assert.equal((await account.callUntyped('GET', `/analytics/${channelId}?date=14`)).status, 200, 'a refusal is not kept');
    });

    it("lists the account's latest posts and reels for a post published by hand (GET /posts/{id}/missing)", async () => {
      const draft = await saveDraft(account, channelId, 'by hand', POST);
      const missing = await account.callUntyped('GET', `/posts/${draft}/missing`);
      assert.equal(missing.status, 200, JSON.stringify(missing.body));
      const listed = fake.media.filter((m) => m.owner === IG_STUDIO.id && m.type !== 'STORIES').reverse();
      assert.ok(listed.length > 3, 'several posts were published');
      assert.deepEqual(
        missing.body,
        listed.slice(0, 25).map((m) => ({ id: m.id, url: `https://www.instagram.com/p/${m.id}/`, text: m.caption, at: toSecond(m.at) })),
      );
      const [listing] = fake.calls('GET /:version/:user/media').slice(-1);
      assert.equal(listing.path, `/${v}/${IG_STUDIO.id}/media`);
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
