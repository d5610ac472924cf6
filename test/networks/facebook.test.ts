import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import { networkContext } from '../../src/providers/network-settings.ts';
import { facebook } from '../../src/providers/networks/facebook.ts';
import { OutboundGuard } from '../../src/lib/outbound.ts';
import { connectOAuth } from '../helpers/connect.ts';
import { startHerald, type TestAccount, type TestHerald } from '../helpers/herald.ts';
import { testStores, storeSuite } from '../helpers/stores.ts';
import { addBusiness, FB_APP, FB_PAGES, startFacebookFake, type FacebookFake } from '../fakes/facebook.ts';
import { declined, graphError, setDaily, setLifetime, tokenBook } from '../fakes/meta.ts';
import { assertError } from '../helpers/api-fixtures.ts';
import { listedChannel, publishNow, settled, uploadMp4, uploadPng, saveDraft } from './support.ts';
import { serverErrorAfterCreate } from './create-5xx.ts';
import { teardown } from '../helpers/teardown.ts';

const GARAGE = FB_PAGES[1];

/** The last `n` days (UTC), oldest first. */
const lastDays = (n: number, now = Date.now()) => Array.from({ length: n }, (_, i) => new Date(now - (n - 1 - i) * 86_400_000).toISOString().slice(0, 10));
/** A Graph timestamp as Herald gives it back (Graph has no milliseconds). */
const toSecond = (at: number) => new Date(Math.floor(at / 1000) * 1000).toISOString();

describe('facebook: the Graph API version is a setting', () => {
  it('uses the current default, or HERALD_FACEBOOK_API_VERSION when set', async () => {
    const start = async (env: Record<string, string>) => {
      const config = loadConfig({ HERALD_FACEBOOK_CLIENT_ID: 'id', HERALD_FACEBOOK_CLIENT_SECRET: 's', ...env });
      const ctx = networkContext(config, new OutboundGuard(), facebook, AbortSignal.timeout(1000));
      return new URL((await facebook.oauth!.start({ ...ctx, state: 'st', redirectUri: 'https://h.example/cb', options: {} })).url);
    };
    assert.match((await start({})).pathname, /^\/v\d+\.0\/dialog\/oauth$/);
    assert.equal((await start({ HERALD_FACEBOOK_API_VERSION: 'v27.0' })).pathname, '/v27.0/dialog/oauth');
  });
});

for (const store of await testStores()) {
  describe(`facebook (${store})`, storeSuite(store), () => {
    let fake: FacebookFake;
    let herald: TestHerald;
    let account: TestAccount;
    let channelId: string;
    let version: string;

    before(async () => {
      fake = await startFacebookFake();
      herald = await startHerald(store, {
        engine: { pollMs: 50 },
        env: {
          HERALD_FACEBOOK_CLIENT_ID: FB_APP.id,
          HERALD_FACEBOOK_CLIENT_SECRET: FB_APP.secret,
          HERALD_FACEBOOK_API_URL: fake.url,
          HERALD_FACEBOOK_VIDEO_URL: fake.url,
          HERALD_FACEBOOK_LOGIN_URL: fake.url,
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

    /** The requests that created content, after `from`. */
    const since = (from: number) => fake.requests.slice(from).filter((r) => r.method === 'POST');

    it('connects with Facebook Login, a long-lived token, and the Page the user picks', async () => {
      const connected = await connectOAuth(herald, account, 'facebook', {
        pick: (choices) => {
          assert.deepEqual(
            choices.map((c) => c.name),
            FB_PAGES.map((p) => p.name),
          );
          return choices.findIndex((c) => c.name === GARAGE.name);
        },
      });
      channelId = connected.id;
      const consent = fake.state.authorize;
      version = fake.calls('GET /:version/dialog/oauth')[0].params.version;
      assert.match(version, /^v\d+\.0$/);
      assert.equal(consent.client_id, FB_APP.id);
      assert.equal(consent.redirect_uri, `${herald.url}/connect/facebook/callback`);
      assert.equal(consent.response_type, 'code');
      assert.ok(consent.state.length >= 20, 'consent.state.length >= 20');
      for (const scope of ['pages_show_list', 'pages_manage_posts', 'pages_read_engagement', 'pages_manage_engagement', 'read_insights'])
        assert.ok(consent.scope.split(',').includes(scope), scope);

      const [code, exchange] = fake.calls('GET /:version/oauth/access_token');
      assert.deepEqual(code.query, { client_id: FB_APP.id, client_secret: FB_APP.secret, redirect_uri: consent.redirect_uri, code: 'fb-code-1' });
      assert.deepEqual(exchange.query, {
        grant_type: 'fb_exchange_token',
        client_id: FB_APP.id,
        client_secret: FB_APP.secret,
        fb_exchange_token: 'fb-user-short',
      });
      const pages = fake.calls('GET /:version/me/accounts');
      assert.equal(pages.length, 2, 'the result cursor is followed to the second Page');
      assert.equal(pages[0].headers.authorization, 'Bearer fb-user-long');
      assert.equal(pages[1].query.after, 'cursor-1');

      const channel = await listedChannel(account, channelId);
      assert.equal(channel.name, GARAGE.name);
      assert.equal(channel.identifier, 'facebook');
      assert.equal(channel.profile, GARAGE.username);
    });

    it('publishes text with a link to the Page feed, with the Page token', async () => {
      const from = fake.requests.length;
      const post = await settled(
        account,
        await publishNow(account, channelId, ['Fresh bread at 7'], { __type: 'facebook', url: 'https://bakery.example/menu' }),
      );
      assert.equal(post.state, 'PUBLISHED', post.error);
      const [sent] = since(from);
      assert.equal(sent.path, `/${version}/${GARAGE.id}/feed`);
      assert.equal(sent.headers.authorization, `Bearer ${GARAGE.token}`);
      assert.deepEqual(sent.form, { message: 'Fresh bread at 7', link: 'https://bakery.example/menu', published: 'true' });
      const stored = fake.posts.at(-1)!;
      assert.equal(post.releaseId, stored.id);
      assert.equal(post.releaseURL, `https://www.facebook.com/${GARAGE.id}/posts/${stored.id.split('_')[1]}`);
    });

    it('publishes one photo by its public URL, several as one post of unpublished photos, and a video', async () => {
      const a = await uploadPng(account, herald);
      const b = await uploadPng(account, herald);
      let from = fake.requests.length;
      const one = await settled(account, await publishNow(account, channelId, [{ content: 'One loaf', media: [a] }]));
      assert.equal(one.state, 'PUBLISHED', one.error);
      const [photo] = since(from);
      assert.equal(photo.path, `/${version}/${GARAGE.id}/photos`);
      assert.equal(photo.form!.caption, 'One loaf');
      assert.equal(photo.form!.published, 'true');
      assert.ok(photo.form!.url.startsWith(herald.url), 'the photo is fetched by Facebook from its public URL');
      assert.match(one.releaseId, new RegExp(`^${GARAGE.id}_\\d+$`), 'the post id, not the photo id');

      from = fake.requests.length;
      const two = await settled(account, await publishNow(account, channelId, [{ content: 'Two loaves', media: [a, b] }]));
      assert.equal(two.state, 'PUBLISHED', two.error);
      const [p1, p2, feed] = since(from);
      assert.deepEqual([p1.path, p2.path, feed.path], [`/${version}/${GARAGE.id}/photos`, `/${version}/${GARAGE.id}/photos`, `/${version}/${GARAGE.id}/feed`]);
      assert.equal(p1.form!.published, 'false');
      const photoIds = fake.posts
        .filter((p) => p.kind === 'photo')
        .slice(-2)
        .map((p) => p.id);
      assert.deepEqual(
        JSON.parse(feed.form!.attached_media),
        photoIds.map((id) => ({ media_fbid: id })),
      );
      assert.equal(feed.form!.message, 'Two loaves');

      const clip = await uploadMp4(account, herald, 4096);
      from = fake.requests.length;
      const video = await settled(account, await publishNow(account, channelId, [{ content: 'Kneading', media: [clip] }]));
      assert.equal(video.state, 'PUBLISHED', video.error);
      const [upload] = since(from);
      assert.equal(upload.path, `/${version}/${GARAGE.id}/videos`);
      assert.equal(upload.form!.description, 'Kneading');
      assert.ok(upload.form!.file_url.startsWith(herald.url), 'upload.form!.file_url.startsWith(herald.url)');
      assert.equal(video.releaseURL, `https://www.facebook.com/${GARAGE.id}/videos/${video.releaseId}/`);
    });

    it('publishes a photo and a video story', async () => {
      const photo = await uploadPng(account, herald);
      const clip = await uploadMp4(account, herald, 2048);
      const from = fake.requests.length;
      const story = await settled(
        account,
        await publishNow(account, channelId, [{ content: '', media: [photo, clip] }], { __type: 'facebook', post_type: 'story' }),
      );
      assert.equal(story.state, 'PUBLISHED', story.error);
      const paths = since(from).map((r) => r.path.replace(/\d{6,}/g, 'ID'));
      assert.deepEqual(paths, [
        `/${version}/${GARAGE.id}/photos`,
        `/${version}/${GARAGE.id}/photo_stories`,
        `/${version}/${GARAGE.id}/video_stories`,
        `/video-upload/${version}/ID`,
        `/${version}/${GARAGE.id}/video_stories`,
      ]);
      const upload = since(from)[3];
      assert.equal(upload.headers.authorization, `OAuth ${GARAGE.token}`);
      assert.ok(String(upload.headers.file_url).startsWith(herald.url), 'String(upload.headers.file_url).startsWith(herald.url)');
    });

    it('refuses before queueing what Facebook would refuse', async () => {
      const story = await account.callUntyped('POST', '/posts', {
        type: 'now',
        date: new Date().toISOString(),
        shortLink: false,
        tags: [],
        posts: [{ integration: { id: channelId }, value: [{ content: 'no media', image: [] }], settings: { __type: 'facebook', post_type: 'story' } }],
      });
      assert.equal(story.status, 400);
      assert.ok(
        story.body.errors.some((e: any) => e.path === 'posts.0.value.0.image' && /story needs at least one/.test(e.message)),
        JSON.stringify(story.body),
      );
      const long = await account.callUntyped('POST', '/posts', {
        type: 'now',
        date: new Date().toISOString(),
        shortLink: false,
        tags: [],
        posts: [{ integration: { id: channelId }, value: [{ content: 'x'.repeat(63_207), image: [] }] }],
      });
      assert.equal(long.status, 400);
      assert.ok(
        long.body.errors.some((e: any) => e.path === 'posts.0.value.0.content'),
        'a too-long post is refused at its content',
      );
    });

    it('posts the next items as a comment under the post, then a reply to that comment', async () => {
      const from = fake.requests.length;
      const post = await settled(account, await publishNow(account, channelId, ['Opening soon', 'First comment: hours are 7-19', 'And a reply']));
      assert.equal(post.state, 'PUBLISHED', post.error);
      const [feed, comment, reply] = since(from);
      assert.equal(feed.path, `/${version}/${GARAGE.id}/feed`);
      assert.equal(comment.path, `/${version}/${post.thread[0].releaseId}/comments`);
      assert.deepEqual(comment.form, { message: 'First comment: hours are 7-19' });
      assert.equal(comment.headers.authorization, `Bearer ${GARAGE.token}`);
      assert.equal(reply.path, `/${version}/${post.thread[1].releaseId}/comments`);
      assert.deepEqual(
        post.thread.map((t: any) => t.state),
        ['PUBLISHED', 'PUBLISHED', 'PUBLISHED'],
      );
    });

    it("ends in ERROR with Facebook's own message when it refuses the post, without retrying", async () => {
      fake.failNext('POST /:version/:page/feed', graphError(506, '(#506) Duplicate status message'));
      const from = fake.requests.length;
      const post = await settled(account, await publishNow(account, channelId, ['Same as yesterday']));
      assert.equal(post.state, 'ERROR');
      assert.match(post.error, /Duplicate status message/);
      assert.match(post.error, /code 506/);
      assert.equal(since(from).length, 1);
      assert.deepEqual(
        post.thread[0].attempts.map((a: any) => a.outcome),
        ['failed'],
      );
    });

    it('waits when Facebook throttles the Page (code 32), then publishes once', async () => {
      fake.failNext(
        'POST /:version/:page/feed',
        graphError(32, 'Page request limit reached', {
          headers: { 'x-business-use-case-usage': JSON.stringify({ [GARAGE.id]: [{ type: 'pages', call_count: 100, estimated_time_to_regain_access: 0 }] }) },
        }),
      );
      const from = fake.requests.length;
      const post = await settled(account, await publishNow(account, channelId, ['After the rush']));
      assert.equal(post.state, 'PUBLISHED', post.error);
      assert.deepEqual(
        post.thread[0].attempts.map((a: any) => a.outcome),
        ['retry', 'published'],
      );
      assert.equal(since(from).length, 2);
      assert.equal(fake.posts.filter((p) => p.params.message === 'After the rush').length, 1);
    });

    serverErrorAfterCreate(() => ({
      fake,
      account,
      publish: (text) => publishNow(account, channelId, [text]),
      held: (text) => fake.posts.filter((p) => p.params.message === text).length,
    }));

    it('lists the Pages of the login through the pages tool', async () => {
      const result = await account.callUntyped('POST', `/integration-trigger/${channelId}`, { methodName: 'pages' });
      assert.equal(result.status, 200, JSON.stringify(result.body));
      assert.deepEqual(
        result.body.output.pages.map((p: any) => [p.id, p.connected]),
        FB_PAGES.map((p) => [p.id, p.id === GARAGE.id]),
      );
    });

    it("reads the Page's daily insights and followers, and a post's and a video's lifetime figures", async () => {
      const days = lastDays(7);
      setDaily(fake, GARAGE.id, 'page_media_view', Object.fromEntries(days.map((d, i) => [d, (i + 1) * 10])));
      setDaily(fake, GARAGE.id, 'page_total_media_view_unique', Object.fromEntries(days.map((d, i) => [d, i < 4 ? 8 : 4])));
      setDaily(fake, GARAGE.id, 'page_post_engagements', { [days[6]]: 4 });
      // Another Page's figures and a day before the period are not counted.
      setDaily(fake, FB_PAGES[0].id, 'page_media_view', { [days[6]]: 999 });
      setDaily(fake, GARAGE.id, 'page_media_view', { [lastDays(8)[0]]: 500 });
      fake.followers.set(GARAGE.id, 321);

      const channel = await account.callUntyped('GET', `/analytics/${channelId}?date=7`);
      assert.equal(channel.status, 200, JSON.stringify(channel.body));
      const series = (values: number[]) => days.map((date, i) => ({ date, total: values[i] }));
      assert.deepEqual(channel.body, [
        { label: 'Views', data: series([10, 20, 30, 40, 50, 60, 70]), percentageChange: 200 },
        { label: 'Viewers', data: series([8, 8, 8, 8, 4, 4, 4]), percentageChange: -50 },
        { label: 'Engagements', data: series([0, 0, 0, 0, 0, 0, 4]), percentageChange: 0 },
        { label: 'New follows', data: series([0, 0, 0, 0, 0, 0, 0]), percentageChange: 0 },
        { label: 'Followers', data: [{ total: 321, date: days[6] }], percentageChange: 0 },
      ]);
      const [insights] = fake.calls('GET /:version/:object/insights').slice(-1);
      assert.equal(insights.path, `/${version}/${GARAGE.id}/insights`);
      assert.equal(insights.headers.authorization, `Bearer ${GARAGE.token}`);
      assert.equal(insights.query.metric, 'page_media_view,page_total_media_view_unique,page_post_engagements,page_daily_follows_unique');
      assert.equal(insights.query.period, 'day');
      assert.equal(Number(insights.query.since), Date.parse(`${days[0]}T00:00:00Z`) / 1000, 'from the start of the first day');

      // More than the 90 days Page Insights allow at once are read in several ranges.
      const year = await account.callUntyped('GET', `/analytics/${channelId}?date=200`);
      assert.equal(year.status, 200, JSON.stringify(year.body));
      assert.equal(year.body[0].data.length, 200);
      assert.equal(year.body[0].data.at(-1).total, 70);
      assert.equal(
        fake
          .calls('GET /:version/:object/insights')
          .slice(-3)
          .filter((r) => r.path.endsWith(`${GARAGE.id}/insights`)).length,
        3,
      );

      const post = await settled(account, await publishNow(account, channelId, ['Counted', 'A comment under it']));
      assert.equal(post.state, 'PUBLISHED', post.error);
      setLifetime(fake, post.releaseId, { post_media_view: 120, post_total_media_view_unique: 80, post_reactions_by_type_total: { like: 5, love: 2 } });
      fake.shares.set(post.releaseId, 3);
      const figures = await account.callUntyped('GET', `/analytics/post/${post.id}?date=7`);
      assert.equal(figures.status, 200, JSON.stringify(figures.body));
      assert.deepEqual(
        figures.body.map((s: any) => [s.label, s.data]),
        [
          ['Views', [{ total: 120, date: days[6] }]],
          ['Viewers', [{ total: 80, date: days[6] }]],
          ['Reactions', [{ total: 7, date: days[6] }]],
          ['Comments', [{ total: 1, date: days[6] }]],
          ['Shares', [{ total: 3, date: days[6] }]],
        ],
      );

      const clip = await uploadMp4(account, herald, 2048);
      const video = await settled(account, await publishNow(account, channelId, [{ content: 'Watch this', media: [clip] }]));
      assert.equal(video.state, 'PUBLISHED', video.error);
      setLifetime(fake, video.releaseId, { total_video_views: 40, total_video_views_unique: 30 });
      const watched = await account.callUntyped('GET', `/analytics/post/${video.id}?date=7`);
      assert.equal(watched.status, 200, JSON.stringify(watched.body));
      assert.deepEqual(
        watched.body.map((s: any) => [s.label, s.data[0].total]),
        [
          ['Views', 40],
          ['Viewers', 30],
        ],
      );
      assert.equal(fake.calls('GET /:version/:video/video_insights').at(-1)!.path, `/${version}/${video.releaseId}/video_insights`);
    });

    it("answers 400 with Facebook's own words when read_insights was taken away, and reads again once it is back", async () => {
      const post = await settled(account, await publishNow(account, channelId, ['Not counted yet']));
      declined(fake).add('read_insights');
      try {
        assertError(await account.callUntyped('GET', `/analytics/${channelId}?date=14`), 400, {
          code: 'network_refused',
          message: /Requires extended permission: read_insights.*code 200/,
        });
        assertError(await account.callUntyped('GET', `/analytics/post/${post.id}?date=14`), 400, { code: 'network_refused', message: /read_insights/ });
      } finally {
        declined(fake).delete('read_insights');
      }
      const again = await account.callUntyped('GET', `/analytics/${channelId}?date=14`);
      assert.equal(again.status, 200, 'a refusal is not kept');
      assert.equal(again.body[0].data.length, 14);
    });

    it("lists the Page's latest posts for a post published by hand (GET /posts/{id}/missing)", async () => {
      const draft = await saveDraft(account, channelId, 'by hand', { __type: 'facebook' });
      const missing = await account.callUntyped('GET', `/posts/${draft}/missing`);
      assert.equal(missing.status, 200, JSON.stringify(missing.body));
      const feed = fake.posts.filter((p) => p.page === GARAGE.id && p.kind === 'feed').reverse();
      assert.ok(feed.length > 3, 'several posts were published');
      assert.deepEqual(
        missing.body,
        feed.slice(0, 25).map((p) => ({ id: p.id, url: `https://www.facebook.com/${p.id}`, text: p.params.message, at: toSecond(p.at) })),
      );
      const [listing] = fake.calls('GET /:version/:page/published_posts').slice(-1);
      assert.equal(listing.path, `/${version}/${GARAGE.id}/published_posts`);
      assert.equal(listing.headers.authorization, `Bearer ${GARAGE.token}`);
    });

    it('offers the Pages reached only through Business Manager, owned and client ones, each once', async () => {
      const cafe = { id: '1030', name: 'Herald Cafe', username: 'heraldcafe', token: 'page-token-cafe' };
      const florist = { id: '1040', name: 'Client Florist', username: 'clientflorist', token: 'page-token-florist' };
      // The business also owns a Page the user manages directly: it is offered once.
      addBusiness(fake, { id: '3030', name: 'Herald Holdings', owned: [cafe, FB_PAGES[0]], client: [florist] });
      const from = fake.requests.length;
      const connected = await connectOAuth(herald, account, 'facebook', {
        pick: (choices) => {
          assert.deepEqual(
            choices.map((c) => c.name),
            [...FB_PAGES.map((p) => p.name), cafe.name, florist.name],
          );
          return choices.findIndex((c) => c.name === florist.name);
        },
      });
      const asked = fake.requests.slice(from).filter((r) => /owned_pages|client_pages/.test(r.path));
      assert.deepEqual(
        asked.map((r) => r.path),
        [`/${version}/3030/owned_pages`, `/${version}/3030/client_pages`],
      );
      assert.match(asked[0].query.fields, /access_token/);
      assert.equal((await listedChannel(account, connected.id)).name, florist.name);

      // The client's Page publishes with its own token.
      const post = await settled(account, await publishNow(account, connected.id, ['For the florist']));
      assert.equal(post.state, 'PUBLISHED', post.error);
      const stored = fake.posts.find((p) => p.params.message === 'For the florist')!;
      assert.equal(stored.page, florist.id);
      assert.equal(stored.token, florist.token);

      const tool = await account.callUntyped('POST', `/integration-trigger/${channelId}`, { methodName: 'pages' });
      assert.deepEqual(
        tool.body.output.pages.map((p: any) => p.id),
        [...FB_PAGES.map((p) => p.id), cafe.id, florist.id],
      );
    });

    it('marks the channel for reconnection when the Page token has expired, and a reconnect clears it', async () => {
      tokenBook(fake).revoked.add(GARAGE.token);
      const post = await settled(account, await publishNow(account, channelId, ['Too late']));
      assert.equal(post.state, 'ERROR');
      assert.match(post.error, /must be reconnected/);
      assert.match(post.error, /Session has expired/);
      assert.equal((await listedChannel(account, channelId)).needsReconnect, true);

      tokenBook(fake).revoked.delete(GARAGE.token);
      const again = await connectOAuth(herald, account, 'facebook', { pick: (choices) => choices.findIndex((c) => c.name === GARAGE.name) });
      assert.equal(again.id, channelId, 'the same Page updates the same channel');
      assert.equal((await listedChannel(account, channelId)).needsReconnect, false);
    });
  });
}
