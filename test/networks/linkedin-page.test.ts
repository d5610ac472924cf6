import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { connectOAuth } from '../helpers/connect.ts';
import { startHerald, type TestAccount, type TestHerald } from '../helpers/herald.ts';
import { testStores, storeSuite } from '../helpers/stores.ts';
import { LINKEDIN_APP, LINKEDIN_ORGS, startLinkedInFake, type LinkedInFake } from '../fakes/linkedin.ts';
import { listedChannel, publishNow, settled, uploadPng, saveDraft } from './support.ts';
import { serverErrorAfterCreate } from './create-5xx.ts';
import { teardown } from '../helpers/teardown.ts';

for (const store of await testStores()) {
  describe(`linkedin-page network (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let fake: LinkedInFake;
    let account: TestAccount;
    let channelId: string;
    const page = LINKEDIN_ORGS[1];
    const author = `urn:li:organization:${page.id}`;
    const settings = { __type: 'linkedin-page' };

    before(async () => {
      fake = await startLinkedInFake();
      herald = await startHerald(store, {
        engine: { pollMs: 50 },
        env: {
          HERALD_LINKEDIN_PAGE_CLIENT_ID: LINKEDIN_APP.id,
          HERALD_LINKEDIN_PAGE_CLIENT_SECRET: LINKEDIN_APP.secret,
          HERALD_LINKEDIN_PAGE_AUTH_URL: fake.url,
          HERALD_LINKEDIN_PAGE_API_URL: fake.url,
          HERALD_LINKEDIN_PAGE_API_VERSION: '202609',
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

    it('connects through OAuth 2 and lets the member pick one of the pages they may post for', async () => {
      let offered: string[] = [];
      const connected = await connectOAuth(herald, account, 'linkedin-page', {
        pick: (choices) => {
          offered = choices.map((c) => c.name);
          return choices.findIndex((c) => c.name === page.name);
        },
      });
      channelId = connected.id;
      assert.deepEqual(offered, ['Herald Inc', 'Side Project'], 'pages where the member is only an analyst are left out');
      assert.equal(connected.name, page.name);
      assert.equal(fake.state.authorize.scope, 'openid profile w_organization_social r_organization_social rw_organization_admin');
      const [acls] = fake.calls('GET /rest/organizationAcls');
      assert.equal(acls.query.q, 'roleAssignee');
      assert.equal(acls.query.state, 'APPROVED');
      assert.equal((await listedChannel(account, channelId)).profile, `https://www.linkedin.com/company/${page.vanityName}`);
    });

    it('the pages tool lists the pages the member may post for', async () => {
      const listed = await account.callUntyped('POST', `/integration-trigger/${channelId}`, { methodName: 'pages' });
      assert.equal(listed.status, 200, JSON.stringify(listed.body));
      assert.deepEqual(
        listed.body.output.map((p: { name: string }) => p.name),
        ['Herald Inc', 'Side Project'],
      );
      const calls = fake.calls('GET /rest/organizationAcls');
      assert.equal(calls.at(-1)!.headers.authorization, calls[0].headers.authorization, 'with the token stored when the channel was connected');
    });

    it('publishes text and an image as the organization', async () => {
      const png = await uploadPng(account, herald);
      const post = await settled(account, await publishNow(account, channelId, [{ content: 'Page news', media: [png] }], settings));
      assert.equal(post.state, 'PUBLISHED', post.error);
      const [init] = fake.calls('POST /rest/images');
      assert.deepEqual(init.json, { initializeUploadRequest: { owner: author } });
      const body = fake.posts.at(-1)!.body;
      assert.equal(body.author, author);
      assert.equal(body.commentary, 'Page news');
      assert.match(body.content.media.id, /^urn:li:image:/);
      assert.equal(post.releaseURL, `https://www.linkedin.com/feed/update/${fake.posts.at(-1)!.urn}`);
    });

    it('comments on its own post as the organization', async () => {
      const post = await settled(account, await publishNow(account, channelId, ['Page post', 'Page comment'], settings));
      assert.ok(
        post.thread.every((t: any) => t.state === 'PUBLISHED'),
        JSON.stringify(post.thread),
      );
      const comment = fake.comments.at(-1)!;
      assert.deepEqual(comment.body, { actor: author, object: post.releaseId, message: { text: 'Page comment' } });
    });

    it('refreshes an expired token, then retries a 429, publishing once', async () => {
      fake.tokens.clear();
      fake.failNext('POST /rest/posts', { status: 429, headers: { 'retry-after': '0' }, body: { status: 429, message: 'Too many requests' } });
      const post = await settled(account, await publishNow(account, channelId, ['after expiry and limit'], settings));
      assert.equal(post.state, 'PUBLISHED', post.error);
      // The throttle answers before the token is looked at; the retry then meets the expired token.
      assert.deepEqual(
        post.thread[0].attempts.map((a: any) => a.outcome),
        ['retry', 'failed', 'published'],
      );
      assert.equal(fake.calls('POST /oauth/v2/accessToken').filter((r) => r.form?.grant_type === 'refresh_token').length, 1);
      assert.equal(fake.posts.filter((p) => p.body.commentary === 'after expiry and limit').length, 1);
    });

    serverErrorAfterCreate(() => ({
      fake,
      account,
      publish: (text) => publishNow(account, channelId, [text], settings),
      held: (text) => fake.posts.filter((p) => p.body.commentary === text).length,
    }));

    it('fails with a pointer to the setting when LinkedIn retired the API version', async () => {
      fake.versions.clear();
      fake.versions.add('202610');
      const post = await settled(account, await publishNow(account, channelId, ['with an old version'], settings));
      assert.equal(post.state, 'ERROR');
      assert.match(post.error, /426/);
      assert.match(post.error, /Requested version 202609 is not active/);
      assert.match(post.error, /HERALD_LINKEDIN_PAGE_API_VERSION/);
      fake.versions.add('202609');
    });

    describe('analytics', () => {
      const admin = LINKEDIN_ORGS[0];
      const adminUrn = `urn:li:organization:${admin.id}`;
      const DAY = 86_400_000;
      const midnight = Date.now() - (Date.now() % DAY);
      const dayOf = (t: number) => new Date(t).toISOString().slice(0, 10);
      let adminChannel: string;

      before(async () => {
        adminChannel = (await connectOAuth(herald, account, 'linkedin-page', { pick: (choices) => choices.findIndex((c) => c.name === admin.name) })).id;
      });

      it("reports the page's daily share figures and new followers over the last whole UTC days", async () => {
        fake.dailyShareStatistics.set(`${adminUrn} ${dayOf(midnight - 7 * DAY)}`, {
          impressionCount: 100,
          clickCount: 4,
          likeCount: 3,
          commentCount: 1,
          shareCount: 0,
        });
        fake.dailyShareStatistics.set(`${adminUrn} ${dayOf(midnight - DAY)}`, {
          impressionCount: 150,
          clickCount: 2,
          likeCount: 6,
          commentCount: 2,
          shareCount: 1,
        });
        // Today is not over: LinkedIn is not asked for it.
        fake.dailyShareStatistics.set(`${adminUrn} ${dayOf(midnight)}`, { impressionCount: 999 });
        fake.dailyFollowerGains.set(`${adminUrn} ${dayOf(midnight - 2 * DAY)}`, { organicFollowerGain: 5, paidFollowerGain: 2 });
        // Another page's figures stay out.
        fake.dailyShareStatistics.set(`urn:li:organization:${page.id} ${dayOf(midnight - DAY)}`, { impressionCount: 7 });

        const answer = await account.callUntyped('GET', `/analytics/${adminChannel}?date=7`);
        assert.equal(answer.status, 200, JSON.stringify(answer.body));
        const days = Array.from({ length: 7 }, (_, i) => dayOf(midnight - (7 - i) * DAY));
        const series = (values: Record<number, number>) => days.map((date, i) => ({ date, total: values[i] ?? 0 }));
        assert.deepEqual(answer.body, [
          { label: 'Impressions', data: series({ 0: 100, 6: 150 }), percentageChange: 50 },
          { label: 'Clicks', data: series({ 0: 4, 6: 2 }), percentageChange: -50 },
          { label: 'Reactions', data: series({ 0: 3, 6: 6 }), percentageChange: 100 },
          { label: 'Comments', data: series({ 0: 1, 6: 2 }), percentageChange: 100 },
          { label: 'Reposts', data: series({ 6: 1 }), percentageChange: 0 },
          { label: 'New followers', data: series({ 5: 7 }), percentageChange: 0 },
        ]);

        const timeIntervals = `(timeRange:(start:${midnight - 7 * DAY},end:${midnight}),timeGranularityType:DAY)`;
        const [shares] = fake.calls('GET /rest/organizationalEntityShareStatistics');
        assert.deepEqual(shares.query, { q: 'organizationalEntity', organizationalEntity: adminUrn, timeIntervals });
        assert.equal(shares.headers['linkedin-version'], '202609');
        const [followers] = fake.calls('GET /rest/organizationalEntityFollowerStatistics');
        assert.deepEqual(followers.query, { q: 'organizationalEntity', organizationalEntity: adminUrn, timeIntervals });
      });

      it("reports a post's lifetime figures, for a share and for a ugcPost", async () => {
        const post = await settled(account, await publishNow(account, adminChannel, ['Counted on the page'], settings));
        assert.equal(post.state, 'PUBLISHED', post.error);
        fake.postStatistics.set(post.releaseId, {
          impressionCount: 320,
          uniqueImpressionsCount: 210,
          clickCount: 12,
          likeCount: 9,
          commentCount: 3,
          shareCount: 2,
          engagement: 0.08,
        });
        const figures = await account.callUntyped('GET', `/analytics/post/${post.id}?date=30`);
        assert.equal(figures.status, 200, JSON.stringify(figures.body));
        const today = new Date().toISOString().slice(0, 10);
        assert.deepEqual(
          figures.body,
          [
            ['Impressions', 320],
            ['Unique impressions', 210],
            ['Clicks', 12],
            ['Reactions', 9],
            ['Comments', 3],
            ['Reposts', 2],
          ].map(([label, total]) => ({ label, data: [{ total, date: today }], percentageChange: 0 })),
        );
        const sent = fake.calls('GET /rest/organizationalEntityShareStatistics').at(-1)!;
        assert.deepEqual(sent.query, { q: 'organizationalEntity', organizationalEntity: adminUrn, shares: `List(${post.releaseId})` });

        // A video post is a ugcPost: attached by hand here, as LinkedIn names it.
        const ugcPost = 'urn:li:ugcPost:7100000000000000001';
        fake.posts.push({ urn: ugcPost, body: { author: adminUrn, commentary: 'a video' }, activity: 'urn:li:activity:7100000000000000002' });
        fake.postStatistics.set(ugcPost, { impressionCount: 40, likeCount: 1 });
        const draft = await saveDraft(account, adminChannel, 'a video', settings);
        assert.equal((await account.callUntyped('PUT', `/posts/${draft}/release-id`, { releaseId: ugcPost })).status, 200);
        const video = await account.callUntyped('GET', `/analytics/post/${draft}`);
        assert.equal(video.status, 200, JSON.stringify(video.body));
        assert.deepEqual(
          video.body.map((s: any) => [s.label, s.data[0].total]),
          [
            ['Impressions', 40],
            ['Unique impressions', 0],
            ['Clicks', 0],
            ['Reactions', 1],
            ['Comments', 0],
            ['Reposts', 0],
          ],
        );
        assert.equal(fake.calls('GET /rest/organizationalEntityShareStatistics').at(-1)!.query.ugcPosts, `List(${ugcPost})`);
      });

      it("answers LinkedIn's refusal when the member is not the page's ADMINISTRATOR", async () => {
        const answer = await account.callUntyped('GET', `/analytics/${channelId}?date=7`);
        assert.equal(answer.status, 400, JSON.stringify(answer.body));
        assert.equal(answer.body.code, 'network_refused');
        assert.match(answer.body.message, /403/);
        assert.match(answer.body.message, /Not enough permissions to access: organizationalEntityShareStatistics/);
        const post = await settled(account, await publishNow(account, channelId, ['Not for the analyst'], settings));
        const figures = await account.callUntyped('GET', `/analytics/post/${post.id}`);
        assert.equal(figures.status, 400, JSON.stringify(figures.body));
        assert.equal(figures.body.code, 'network_refused');
      });
    });
  });
}
