import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { connectOAuth } from '../helpers/connect.ts';
import { startHerald, type TestAccount, type TestHerald } from '../helpers/herald.ts';
import { testStores, storeSuite } from '../helpers/stores.ts';
import { PINTEREST_APP, PINTEREST_BOARDS, PINTEREST_USER, startPinterestFake, type PinterestFake } from '../fakes/pinterest.ts';
import { listedChannel, publishNow, settled, uploadMp4, uploadPng, saveDraft } from './support.ts';
import { serverErrorAfterCreate } from './create-5xx.ts';
import { teardown } from '../helpers/teardown.ts';

for (const store of await testStores()) {
  describe(`pinterest network (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let fake: PinterestFake;
    let account: TestAccount;
    let channelId: string;
    let png: { id: string; path: string };
    const settings = { __type: 'pinterest', board: '2222', title: 'A pin', link: 'https://example.com/recipe' };

    before(async () => {
      fake = await startPinterestFake();
      herald = await startHerald(store, {
        engine: { pollMs: 50 },
        env: {
          HERALD_PINTEREST_CLIENT_ID: PINTEREST_APP.id,
          HERALD_PINTEREST_CLIENT_SECRET: PINTEREST_APP.secret,
          HERALD_PINTEREST_AUTH_URL: fake.url,
          HERALD_PINTEREST_API_URL: fake.url,
          HERALD_POSTS_PER_HOUR: '1000',
        },
      });
      account = await herald.newAccount();
    });
    after(() =>
      teardown(
        () => herald.close(),
        () => fake.close(),
      ),
    );

    it('connects through OAuth 2 with the client in HTTP Basic', async () => {
      const connected = await connectOAuth(herald, account, 'pinterest');
      channelId = connected.id;
      assert.equal(connected.name, 'Herald Pins');
      assert.equal(fake.state.authorize.scope, 'user_accounts:read,boards:read,boards:write,pins:read,pins:write');
      assert.equal(fake.state.authorize.response_type, 'code');
      const [token] = fake.calls('POST /v5/oauth/token');
      assert.equal(token.headers.authorization, `Basic ${Buffer.from(`${PINTEREST_APP.id}:${PINTEREST_APP.secret}`).toString('base64')}`);
      assert.deepEqual(token.form, {
        grant_type: 'authorization_code',
        code: 'pin-code-1',
        redirect_uri: `${herald.url}/connect/pinterest/callback`,
        continuous_refresh: 'true',
      });
      assert.equal((await listedChannel(account, channelId)).profile, PINTEREST_USER.username);
    });

    it('lists every board through the "boards" tool, following the bookmark', async () => {
      const answer = await account.call('POST', `/integration-trigger/${channelId}`, { methodName: 'boards' });
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      assert.deepEqual(answer.body.output, PINTEREST_BOARDS);
      assert.equal(fake.calls('GET /v5/boards').length, 2);
    });

    it('requires a board and media before the post is queued', async () => {
      const created = await account.call('POST', '/posts', {
        type: 'now',
        date: new Date().toISOString(),
        shortLink: false,
        tags: [],
        posts: [{ integration: { id: channelId }, value: [{ content: 'text only', image: [] }], settings: { __type: 'pinterest' } }],
      });
      assert.equal(created.status, 400);
      const paths = created.body.errors.map((e: any) => e.path);
      assert.ok(paths.includes('posts.0.settings.board'), JSON.stringify(created.body.errors));
      assert.ok(paths.includes('posts.0.value.0.image'), JSON.stringify(created.body.errors));
    });

    it('pins an image by URL on the chosen board', async () => {
      png = await uploadPng(account, herald);
      const post = await settled(
        account,
        await publishNow(account, channelId, [{ content: 'Tasty', media: [png] }], { ...settings, dominant_color: '#6E7874' }),
      );
      assert.equal(post.state, 'PUBLISHED', post.error);
      const [sent] = fake.calls('POST /v5/pins');
      assert.match(String(sent.headers.authorization), /^Bearer pina_/);
      assert.deepEqual(sent.json, {
        board_id: '2222',
        title: 'A pin',
        description: 'Tasty',
        link: 'https://example.com/recipe',
        dominant_color: '#6E7874',
        media_source: { source_type: 'image_url', url: png.path },
      });
      const id = fake.pins[0].id;
      assert.equal(post.releaseId, id);
      assert.equal(post.releaseURL, `https://www.pinterest.com/pin/${id}/`);
    });

    it('registers, uploads and waits for a video, then pins it with the image as cover', async () => {
      const video = await uploadMp4(account, herald, 64 * 1024);
      const post = await settled(account, await publishNow(account, channelId, [{ content: 'Watch', media: [video, png] }], settings));
      assert.equal(post.state, 'PUBLISHED', post.error);
      const [register] = fake.calls('POST /v5/media');
      assert.deepEqual(register.json, { media_type: 'video' });
      const [s3] = fake.calls('POST /s3-upload/');
      assert.deepEqual(Object.keys(s3.multipart!.fields), ['key', 'x-amz-signature', 'policy']);
      assert.equal(s3.headers.authorization, undefined, 'the storage upload carries no Pinterest token');
      assert.ok(s3.multipart!.files[0].data.equals(video.bytes), 's3.multipart!.files[0].data.equals(video.bytes)');
      assert.ok(fake.calls('GET /v5/media/:id').length >= 2, 'polled until succeeded');
      const mediaId = /uploads\/(\d+)/.exec(s3.multipart!.fields.key)![1];
      assert.deepEqual(fake.pins.at(-1)!.body.media_source, { source_type: 'video_id', media_id: mediaId, cover_image_url: png.path });
    });

    it("ends in ERROR with Pinterest's message when the board does not exist", async () => {
      const post = await settled(account, await publishNow(account, channelId, [{ content: 'lost', media: [png] }], { ...settings, board: '9999' }));
      assert.equal(post.state, 'ERROR');
      assert.match(post.error, /404/);
      assert.match(post.error, /Board not found/);
    });

    it('refreshes an expired token (storing the rotated refresh token) and publishes', async () => {
      fake.tokens.clear();
      const post = await settled(account, await publishNow(account, channelId, [{ content: 'after expiry', media: [png] }], settings));
      assert.equal(post.state, 'PUBLISHED', post.error);
      const refreshes = fake.calls('POST /v5/oauth/token').filter((r) => r.form?.grant_type === 'refresh_token');
      assert.equal(refreshes.length, 1);
      // The used refresh token is spent; the next refresh must use the new one.
      fake.tokens.clear();
      const again = await settled(account, await publishNow(account, channelId, [{ content: 'after second expiry', media: [png] }], settings));
      assert.equal(again.state, 'PUBLISHED', again.error);
      const [first, second] = fake.calls('POST /v5/oauth/token').filter((r) => r.form?.grant_type === 'refresh_token');
      assert.notEqual(first.form?.refresh_token, second.form?.refresh_token);
    });

    it('retries after a 429 and pins once', async () => {
      const before = fake.calls('POST /v5/pins').length;
      fake.failNext('POST /v5/pins', {
        status: 429,
        headers: { 'retry-after': '1' },
        body: { code: 8, message: 'You have exceeded your rate limit. Try again later.' },
      });
      const post = await settled(account, await publishNow(account, channelId, [{ content: 'after the limit', media: [png] }], settings));
      assert.equal(post.state, 'PUBLISHED', post.error);
      assert.equal(fake.calls('POST /v5/pins').length - before, 2);
      assert.equal(fake.pins.filter((p) => p.body.description === 'after the limit').length, 1);
    });

    serverErrorAfterCreate(() => ({
      fake,
      account,
      publish: (text) => publishNow(account, channelId, [{ content: text, media: [png] }], settings),
      held: (text) => fake.pins.filter((p) => p.body.description === text).length,
    }));

    describe('analytics and recent pins', () => {
      const DAY = 86_400_000;
      const dayOf = (t: number) => new Date(t).toISOString().slice(0, 10);

      it("reports the account's daily metrics, asking Pinterest for at most the 90 days it keeps", async () => {
        const now = Date.now();
        fake.accountMetrics.set(dayOf(now - 6 * DAY), { IMPRESSION: 200, SAVE: 4, PIN_CLICK: 10, OUTBOUND_CLICK: 2, ENGAGEMENT: 16 });
        fake.accountMetrics.set(dayOf(now), { IMPRESSION: 300, SAVE: 2, PIN_CLICK: 15, OUTBOUND_CLICK: 1, ENGAGEMENT: 18 });
        const answer = await account.call('GET', `/analytics/${channelId}?date=7`);
        assert.equal(answer.status, 200, JSON.stringify(answer.body));
        const days = Array.from({ length: 7 }, (_, i) => dayOf(now - (6 - i) * DAY));
        const series = (first: number, last: number) => days.map((date, i) => ({ date, total: i === 0 ? first : i === 6 ? last : 0 }));
        assert.deepEqual(answer.body, [
          { label: 'Impressions', data: series(200, 300), percentageChange: 50 },
          { label: 'Saves', data: series(4, 2), percentageChange: -50 },
          { label: 'Pin clicks', data: series(10, 15), percentageChange: 50 },
          { label: 'Outbound clicks', data: series(2, 1), percentageChange: -50 },
          { label: 'Engagements', data: series(16, 18), percentageChange: 12.5 },
        ]);
        const [sent] = fake.calls('GET /v5/user_account/analytics');
        assert.deepEqual(sent.query, { start_date: days[0], end_date: days[6], metric_types: 'IMPRESSION,SAVE,PIN_CLICK,OUTBOUND_CLICK,ENGAGEMENT' });
        assert.match(String(sent.headers.authorization), /^Bearer pina_/);

        // A year asked for: Pinterest refuses start dates more than 90 days back, so 90 days are read.
        const tooOld = await fetch(`${fake.url}/v5/user_account/analytics?start_date=${dayOf(now - 100 * DAY)}&end_date=${dayOf(now)}`, {
          headers: { authorization: sent.headers.authorization! },
        });
        assert.deepEqual([tooOld.status, (await tooOld.json()).message], [400, 'You can only get data from the last 90 days.']);
        const year = await account.call('GET', `/analytics/${channelId}?date=365`);
        assert.equal(year.status, 200, JSON.stringify(year.body));
        assert.equal(year.body[0].data.length, 90);
        assert.equal(fake.calls('GET /v5/user_account/analytics').at(-1)!.query.start_date, dayOf(now - 89 * DAY));
      });

      it("reports a pin's daily metrics from the day it was created", async () => {
        const post = await settled(account, await publishNow(account, channelId, [{ content: 'Counted pin', media: [png] }], settings));
        assert.equal(post.state, 'PUBLISHED', post.error);
        const today = dayOf(Date.now());
        fake.pinMetrics.set(`${post.releaseId} ${today}`, { IMPRESSION: 42, SAVE: 3, PIN_CLICK: 5, OUTBOUND_CLICK: 1 });
        const figures = await account.call('GET', `/analytics/post/${post.id}?date=7`);
        assert.equal(figures.status, 200, JSON.stringify(figures.body));
        // The days before the pin existed carry no metrics and are left out.
        assert.deepEqual(figures.body, [
          { label: 'Impressions', data: [{ date: today, total: 42 }], percentageChange: 0 },
          { label: 'Saves', data: [{ date: today, total: 3 }], percentageChange: 0 },
          { label: 'Pin clicks', data: [{ date: today, total: 5 }], percentageChange: 0 },
          { label: 'Outbound clicks', data: [{ date: today, total: 1 }], percentageChange: 0 },
        ]);
        const sent = fake.calls('GET /v5/pins/:id/analytics').at(-1)!;
        assert.equal(sent.path, `/v5/pins/${post.releaseId}/analytics`);
        assert.deepEqual(sent.query, { start_date: dayOf(Date.now() - 6 * DAY), end_date: today, metric_types: 'IMPRESSION,SAVE,PIN_CLICK,OUTBOUND_CLICK' });
      });

      it("answers Pinterest's refusal for a pin deleted on Pinterest", async () => {
        const post = await settled(account, await publishNow(account, channelId, [{ content: 'Soon gone', media: [png] }], settings));
        assert.equal(post.state, 'PUBLISHED', post.error);
        fake.pins.splice(
          fake.pins.findIndex((p) => p.id === post.releaseId),
          1,
        );
        const figures = await account.call('GET', `/analytics/post/${post.id}?date=7`);
        assert.equal(figures.status, 400, JSON.stringify(figures.body));
        assert.equal(figures.body.code, 'network_refused');
        assert.match(figures.body.message, /Pinterest answered 404: Pin not found\./);
      });

      it("lists the user's latest pins for a post published by hand (GET /posts/{id}/missing)", async () => {
        const draft = await saveDraft(account, channelId, 'by hand', settings);
        const missing = await account.call('GET', `/posts/${draft}/missing`);
        assert.equal(missing.status, 200, JSON.stringify(missing.body));
        const newest = [...fake.pins].reverse();
        assert.deepEqual(
          missing.body,
          newest.map((p) => ({
            id: p.id,
            url: `https://www.pinterest.com/pin/${p.id}/`,
            text: p.body.description,
            at: new Date(Date.parse(p.created_at)).toISOString(),
          })),
        );
        assert.ok(missing.body.length >= 5, 'every pin published here');
        assert.equal(fake.calls('GET /v5/pins').at(-1)!.query.page_size, '50');
      });
    });
  });
}
