import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { littleText } from '../../src/providers/networks/linkedin/api.ts';
import { connectOAuth } from '../helpers/connect.ts';
import { startHerald, type TestAccount, type TestHerald } from '../helpers/herald.ts';
import { testStores, storeSuite } from '../helpers/stores.ts';
import { LINKEDIN_APP, LINKEDIN_MEMBER, startLinkedInFake, type LinkedInFake } from '../fakes/linkedin.ts';
import { listedChannel, publishNow, settled, uploadMp4, uploadPng } from './support.ts';
import { serverErrorAfterCreate } from './create-5xx.ts';
import { teardown } from '../helpers/teardown.ts';

describe('LinkedIn little text format', () => {
  it('escapes reserved characters and turns #words into hashtags', () => {
    assert.equal(littleText('Hi (all) @you_ #launch *now*'), 'Hi \\(all\\) \\@you\\_ {hashtag|\\#|launch} \\*now\\*');
  });

  it('makes hashtags only of words that start with #: never inside a link or a word', () => {
    assert.equal(littleText('Read https://example.com/docs#install'), 'Read https://example.com/docs\\#install');
    assert.equal(littleText('We use C# and F#, see #dotnet'), 'We use C\\# and F\\#, see {hashtag|\\#|dotnet}');
    assert.equal(littleText('(#news) and x#y'), '\\({hashtag|\\#|news}\\) and x\\#y');
  });
});

for (const store of await testStores()) {
  describe(`linkedin network (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let fake: LinkedInFake;
    let account: TestAccount;
    let channelId: string;
    const author = `urn:li:person:${LINKEDIN_MEMBER.sub}`;

    before(async () => {
      fake = await startLinkedInFake();
      herald = await startHerald(store, {
        engine: { pollMs: 50 },
        env: {
          HERALD_LINKEDIN_CLIENT_ID: LINKEDIN_APP.id,
          HERALD_LINKEDIN_CLIENT_SECRET: LINKEDIN_APP.secret,
          HERALD_LINKEDIN_AUTH_URL: fake.url,
          HERALD_LINKEDIN_API_URL: fake.url,
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

    it('connects through OAuth 2: consent, code exchange with the client secret, userinfo', async () => {
      const connected = await connectOAuth(herald, account, 'linkedin');
      channelId = connected.id;
      assert.equal(connected.name, LINKEDIN_MEMBER.name);
      const authorize = fake.state.authorize;
      assert.equal(authorize.client_id, LINKEDIN_APP.id);
      assert.equal(authorize.redirect_uri, `${herald.url}/connect/linkedin/callback`);
      assert.equal(authorize.scope, 'openid profile w_member_social');
      const [token] = fake.calls('POST /oauth/v2/accessToken');
      assert.deepEqual(token.form, {
        grant_type: 'authorization_code',
        code: 'li-code-1',
        redirect_uri: `${herald.url}/connect/linkedin/callback`,
        client_id: LINKEDIN_APP.id,
        client_secret: LINKEDIN_APP.secret,
      });
      assert.equal((await listedChannel(account, channelId)).identifier, 'linkedin');
    });

    it('publishes text through the Posts API with the version headers', async () => {
      const post = await settled(account, await publishNow(account, channelId, ['Hello LinkedIn #herald'], { __type: 'linkedin' }));
      assert.equal(post.state, 'PUBLISHED', post.error);
      const [sent] = fake.calls('POST /rest/posts');
      assert.equal(sent.headers['linkedin-version'], '202609');
      assert.equal(sent.headers['x-restli-protocol-version'], '2.0.0');
      assert.match(String(sent.headers.authorization), /^Bearer AQV-access-/);
      assert.deepEqual(sent.json, {
        author,
        commentary: 'Hello LinkedIn {hashtag|\\#|herald}',
        visibility: 'PUBLIC',
        distribution: { feedDistribution: 'MAIN_FEED', targetEntities: [], thirdPartyDistributionChannels: [] },
        lifecycleState: 'PUBLISHED',
        isReshareDisabledByAuthor: false,
      });
      const urn = fake.posts[0].urn;
      assert.equal(post.releaseId, urn);
      assert.equal(post.releaseURL, `https://www.linkedin.com/feed/update/${urn}`);
    });

    it('uploads images (initializeUpload, PUT) and posts them as a multi-image post', async () => {
      const a = await uploadPng(account, herald);
      const b = await uploadPng(account, herald);
      const post = await settled(account, await publishNow(account, channelId, [{ content: 'two pictures', media: [a, b] }], { __type: 'linkedin' }));
      assert.equal(post.state, 'PUBLISHED', post.error);
      const inits = fake.calls('POST /rest/images');
      assert.equal(inits.length, 2);
      assert.deepEqual(inits[0].query, { action: 'initializeUpload' });
      assert.deepEqual(inits[0].json, { initializeUploadRequest: { owner: author } });
      const puts = fake.calls('PUT /dms-uploads/image/:id');
      assert.equal(puts.length, 2);
      assert.equal(puts[0].headers['content-type'], 'image/png');
      const body = fake.posts.at(-1)!.body;
      assert.equal(body.content.multiImage.images.length, 2);
      assert.match(body.content.multiImage.images[0].id, /^urn:li:image:/);
    });

    it('uploads a video in byte ranges, finalizes with the ETags and waits until AVAILABLE', async () => {
      const video = await uploadMp4(account, herald, 4_194_304 + 1000);
      const post = await settled(account, await publishNow(account, channelId, [{ content: 'a video', media: [video] }], { __type: 'linkedin' }));
      assert.equal(post.state, 'PUBLISHED', post.error);
      const [init, finalize] = fake.calls('POST /rest/videos');
      assert.deepEqual(init.json, {
        initializeUploadRequest: { owner: author, fileSizeBytes: video.bytes.length, uploadCaptions: false, uploadThumbnail: false },
      });
      const parts = fake.calls('PUT /dms-uploads/video/:id/:part');
      assert.equal(parts.length, 2);
      assert.ok(Buffer.concat(parts.map((p) => p.raw)).equals(video.bytes), 'Buffer.concat(parts.map((p) => p.raw)).equals(video.bytes)');
      assert.deepEqual(finalize.query, { action: 'finalizeUpload' });
      assert.equal(finalize.json.finalizeUploadRequest.uploadedPartIds.length, 2);
      assert.ok(fake.calls('GET /rest/videos/:urn').length >= 2, 'polled the status until AVAILABLE');
      assert.match(fake.posts.at(-1)!.body.content.media.id, /^urn:li:video:/);
    });

    it('publishes thread items as comments on the post', async () => {
      const post = await settled(account, await publishNow(account, channelId, ['the post', 'first comment', 'second comment'], { __type: 'linkedin' }));
      assert.ok(
        post.thread.every((t: any) => t.state === 'PUBLISHED'),
        JSON.stringify(post.thread),
      );
      const shareUrn = post.releaseId;
      const [c1, c2] = fake.comments.slice(-2);
      assert.equal(c1.on, shareUrn);
      assert.deepEqual(c1.body, { actor: author, object: shareUrn, message: { text: 'first comment' } });
      assert.equal(post.thread[1].releaseId, `urn:li:comment:(${shareUrn},${c1.urn.match(/,(\d+)\)$/)![1]})`);
      // The next comment goes on the post itself too (never on the activity LinkedIn names comments by), not nested under the first.
      assert.equal(c2.on, shareUrn);
      assert.equal(c2.body.message.text, 'second comment');
    });

    it("ends in ERROR with LinkedIn's message on a duplicate post", async () => {
      const post = await settled(account, await publishNow(account, channelId, ['Hello LinkedIn #herald'], { __type: 'linkedin' }));
      assert.equal(post.state, 'ERROR');
      assert.match(post.error, /422/);
      assert.match(post.error, /Content is a duplicate of urn:li:share:/);
    });

    it('refreshes an expired token once and publishes', async () => {
      fake.tokens.clear();
      const refreshesBefore = fake.calls('POST /oauth/v2/accessToken').length;
      const post = await settled(account, await publishNow(account, channelId, ['after expiry'], { __type: 'linkedin' }));
      assert.equal(post.state, 'PUBLISHED', post.error);
      const refresh = fake.calls('POST /oauth/v2/accessToken').slice(refreshesBefore);
      assert.equal(refresh.length, 1);
      assert.equal(refresh[0].form?.grant_type, 'refresh_token');
      assert.match(refresh[0].form?.refresh_token ?? '', /^AQX-refresh-/);
      assert.deepEqual(
        post.thread[0].attempts.map((a: any) => a.outcome),
        ['failed', 'published'],
      );
      assert.equal((await listedChannel(account, channelId)).needsReconnect, false);
    });

    it('retries after a 429 and publishes once', async () => {
      const before = fake.calls('POST /rest/posts').length;
      fake.failNext('POST /rest/posts', {
        status: 429,
        headers: { 'retry-after': '0' },
        body: { status: 429, message: 'Resource level throttle APPLICATION DAY limit for calls to this resource is reached.' },
      });
      const post = await settled(account, await publishNow(account, channelId, ['after the limit'], { __type: 'linkedin' }));
      assert.equal(post.state, 'PUBLISHED', post.error);
      assert.equal(fake.calls('POST /rest/posts').length - before, 2);
      assert.equal(fake.posts.filter((p) => p.body.commentary === 'after the limit').length, 1);
    });

    serverErrorAfterCreate(() => ({
      fake,
      account,
      publish: (text) => publishNow(account, channelId, [text], { __type: 'linkedin' }),
      held: (text) => fake.posts.filter((p) => p.body.commentary === text).length,
    }));

    it('has no analytics for a member profile (its post statistics are for approved apps only): a clear 400', async () => {
      const channel = await account.call('GET', `/analytics/${channelId}?date=7`);
      assert.equal(channel.status, 400, JSON.stringify(channel.body));
      assert.equal(channel.body.code, 'analytics_unavailable');
      const post = await settled(account, await publishNow(account, channelId, ['no figures here'], { __type: 'linkedin' }));
      assert.equal(post.state, 'PUBLISHED', post.error);
      const sent = fake.requests.length;
      const figures = await account.call('GET', `/analytics/post/${post.id}?date=7`);
      assert.equal(figures.status, 400, JSON.stringify(figures.body));
      assert.equal(figures.body.code, 'analytics_unavailable');
      assert.match(figures.body.message, /LinkedIn does not report analytics/);
      assert.equal(fake.requests.length, sent, 'LinkedIn is not asked');
    });
  });
}
