import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { connectOAuth } from '../helpers/connect.ts';
import { startHerald, type TestAccount, type TestHerald } from '../helpers/herald.ts';
import { testStores, storeSuite } from '../helpers/stores.ts';
import { LINKEDIN_APP, LINKEDIN_ORGS, startLinkedInFake, type LinkedInFake } from '../fakes/linkedin.ts';
import { listedChannel, publishNow, settled, uploadPng } from './support.ts';

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
    after(async () => {
      await herald.close();
      await fake.close();
    });

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
      const listed = await account.call('POST', `/integration-trigger/${channelId}`, { methodName: 'pages' });
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
      assert.ok(post.thread.every((t: any) => t.state === 'PUBLISHED'), JSON.stringify(post.thread));
      const comment = fake.comments.at(-1)!;
      assert.deepEqual(comment.body, { actor: author, object: post.releaseId, message: { text: 'Page comment' } });
    });

    it('refreshes an expired token, then retries a 429, publishing once', async () => {
      fake.tokens.clear();
      fake.failNext('POST /rest/posts', { status: 429, headers: { 'retry-after': '0' }, body: { status: 429, message: 'Too many requests' } });
      const post = await settled(account, await publishNow(account, channelId, ['after expiry and limit'], settings));
      assert.equal(post.state, 'PUBLISHED', post.error);
      // The throttle answers before the token is looked at; the retry then meets the expired token.
      assert.deepEqual(post.thread[0].attempts.map((a: any) => a.outcome), ['retry', 'failed', 'published']);
      assert.equal(fake.calls('POST /oauth/v2/accessToken').filter((r) => r.form?.grant_type === 'refresh_token').length, 1);
      assert.equal(fake.posts.filter((p) => p.body.commentary === 'after expiry and limit').length, 1);
    });

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
  });
}
