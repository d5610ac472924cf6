import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startHerald, type TestAccount, type TestHerald } from '../helpers/herald.ts';
import { testStores, storeSuite } from '../helpers/stores.ts';
import { connectOAuth } from '../helpers/connect.ts';
import { mastodonLength } from '../../src/providers/text-counting.ts';
import { startMastodonFake, type MastodonFake } from '../fakes/mastodon.ts';
import { listedChannel, publishNow, settled, uploadMp4, uploadPng, saveDraft } from './support.ts';
import { serverErrorAfterCreate } from './create-5xx.ts';
import { teardown } from '../helpers/teardown.ts';

describe('mastodon length', () => {
  it('counts every link as 23 characters and a remote mention by its local part', () => {
    assert.equal(mastodonLength('see https://example.com/a/very/long/path/that/goes/on/and/on'), 4 + 23);
    assert.equal(mastodonLength('hi @alice@social.example.org'), 'hi @alice'.length);
    assert.equal(mastodonLength('héllo 👋'), 7);
  });
});

for (const store of await testStores()) {
  describe(`mastodon (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let fake: MastodonFake;
    let other: MastodonFake;
    let account: TestAccount;
    let channelId: string;

    before(async () => {
      fake = await startMastodonFake();
      other = await startMastodonFake();
      // A publish whose answer never comes is given up after 4 s (its outcome then unknown).
      herald = await startHerald(store, {
        engine: { pollMs: 50, publishTimeoutMs: 4_000 },
        env: { HERALD_POSTS_PER_HOUR: '1000', HERALD_REQUESTS_PER_MINUTE: '100000' },
      });
      account = await herald.newAccount();
    });
    after(() =>
      teardown(
        () => herald?.close(),
        () => fake?.close(),
        () => other?.close(),
      ),
    );

    it('connects to the instance the user names: registers an app there, then OAuth with PKCE', async () => {
      const connected = await connectOAuth(herald, account, 'mastodon', { query: { instance: fake.url } });
      channelId = connected.id;
      assert.equal(connected.name, 'Herald Test');

      const [app] = fake.calls('POST /api/v1/apps');
      assert.deepEqual(app.json, {
        client_name: 'Herald',
        redirect_uris: `${herald.url}/connect/mastodon/callback`,
        scopes: 'read:accounts read:statuses write:statuses write:media',
        website: herald.url,
      });
      const consent = fake.state.authorize;
      assert.equal(consent.client_id, fake.apps[0].client_id);
      assert.equal(consent.code_challenge_method, 'S256');
      const [token] = fake.calls('POST /oauth/token');
      assert.equal(token.form?.client_secret, fake.apps[0].client_secret);
      assert.equal(token.form?.grant_type, 'authorization_code');
      assert.ok(token.form?.code_verifier, 'token.form?.code_verifier');
      const [me] = fake.calls('GET /api/v1/accounts/verify_credentials');
      assert.match(String(me.headers.authorization), /^Bearer /);
      const listed = await listedChannel(account, channelId);
      assert.equal(listed.profile, `@herald@${fake.host}`);
      assert.equal(listed.picture, fake.account.avatar);

      // Another instance: its own app, its own channel.
      const second = await connectOAuth(herald, account, 'mastodon', { query: { instance: other.url } });
      assert.notEqual(second.id, channelId);
      assert.equal(other.apps.length, 1);
      assert.equal((await listedChannel(account, second.id)).profile, `@herald@${other.host}`);
    });

    it('asks for the instance, and refuses one on a private address', async () => {
      const missing = await account.call('GET', '/social/mastodon');
      assert.equal(missing.status, 400);
      assert.equal(missing.body.errors[0].path, 'instance');
      const privateOne = await account.call('GET', `/social/mastodon?instance=${encodeURIComponent('http://10.20.30.40')}`);
      assert.equal(privateOne.status, 400, JSON.stringify(privateOne.body));
      assert.equal(privateOne.body.errors[0].path, 'instance');
      assert.match(privateOne.body.message, /private/);
      const withPath = await account.call('GET', `/social/mastodon?instance=${encodeURIComponent('https://mastodon.example/@someone')}`);
      assert.equal(withPath.status, 400);
      assert.equal(withPath.body.errors[0].path, 'instance');
    });

    it('publishes a status with an Idempotency-Key and links it', async () => {
      const post = await settled(account, await publishNow(account, channelId, ['Hello fediverse https://example.com/news']));
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      const [sent] = fake.calls('POST /api/v1/statuses');
      assert.deepEqual(sent.json, { status: 'Hello fediverse https://example.com/news' });
      assert.equal(sent.headers['idempotency-key'], post.thread[0].id);
      assert.match(String(sent.headers.authorization), /^Bearer /);
      const status = fake.statuses.at(-1)!;
      assert.equal(post.releaseId, status.id);
      assert.equal(post.releaseURL, status.url);
    });

    it('uploads media with /api/v2/media (with its alt text as the description), waits for the video to be processed, then attaches both', async () => {
      const png = await uploadPng(account, herald);
      await herald.services.media.describe(account.id, png.id, { alt: 'A white square' });
      const video = await uploadMp4(account, herald, 4000);
      const post = await settled(
        account,
        await publishNow(account, channelId, [
          { content: 'Pictures', media: [png] },
          { content: 'A clip', media: [video] },
        ]),
      );
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      const uploads = fake.calls('POST /api/v2/media');
      assert.equal(uploads.length, 2);
      assert.equal(uploads[0].multipart?.files[0].name, 'file');
      assert.equal(uploads[0].multipart?.files[0].type, 'image/png');
      assert.equal(fake.media.get(fake.statuses.at(-2)!.media_ids[0])?.description, 'A white square', 'the picture carries its alt text');
      assert.equal(uploads[1].multipart?.fields.description, undefined, 'a file without alt text sends no description');
      assert.equal(uploads[1].multipart?.files[0].type, 'video/mp4');
      assert.deepEqual(uploads[1].multipart?.files[0].data, video.bytes);
      // The video answered 202: Herald asked until it was processed (206, then 200).
      const polls = fake.calls('GET /api/v1/media/:id');
      assert.ok(polls.length >= 2, `polled ${polls.length} times`);
      const [first, second] = fake.statuses.slice(-2);
      assert.equal(first.media_ids.length, 1);
      assert.equal(second.media_ids.length, 1);
      assert.equal(second.in_reply_to_id, first.id);
    });

    it('a video still processing when an attempt ends is waited for again by the next one, never uploaded twice', async () => {
      const video = await uploadMp4(account, herald, 5000);
      fake.videoProcessingMs = 6_000;
      const uploadsBefore = fake.calls('POST /api/v2/media').length;
      const post = await settled(account, await publishNow(account, channelId, [{ content: 'A long clip', media: [video] }]), 30_000);
      fake.videoProcessingMs = 300;
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      assert.equal(fake.calls('POST /api/v2/media').length - uploadsBefore, 1, 'uploaded once');
      assert.deepEqual(
        post.thread[0].attempts.map((a: any) => a.outcome),
        ['retry', 'published'],
      );
      assert.equal(fake.statuses.at(-1)!.media_ids[0], fake.calls('GET /api/v1/media/:id').at(-1)!.params.id);
    });

    it('publishes a thread as replies, each to the one before', async () => {
      const post = await settled(account, await publishNow(account, channelId, ['one', 'two', 'three']));
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      const [a, b, c] = fake.statuses.slice(-3);
      assert.deepEqual([a.text, b.text, c.text], ['one', 'two', 'three']);
      assert.equal(a.in_reply_to_id, null);
      assert.equal(b.in_reply_to_id, a.id);
      assert.equal(c.in_reply_to_id, b.id);
      const keys = fake
        .calls('POST /api/v1/statuses')
        .slice(-3)
        .map((r) => r.headers['idempotency-key']);
      assert.deepEqual(
        keys,
        post.thread.map((t: { id: string }) => t.id),
      );
    });

    it('sends the content warning (spoiler_text) with every status of the thread', async () => {
      const post = await settled(
        account,
        await publishNow(account, channelId, ['The ending, in full', 'And the credits'], { __type: 'mastodon', spoiler_text: 'Film spoilers' }),
      );
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      const sent = fake.calls('POST /api/v1/statuses').slice(-2);
      assert.deepEqual(
        sent.map((r) => r.json?.spoiler_text),
        ['Film spoilers', 'Film spoilers'],
      );
      assert.deepEqual(
        fake.statuses.slice(-2).map((s) => s.spoiler_text),
        ['Film spoilers', 'Film spoilers'],
      );
    });

    it('refuses a content warning over 500 characters, or one that takes the text over the limit, naming the field', async () => {
      const post = (content: string, spoiler: string) => ({
        type: 'now' as const,
        date: new Date().toISOString(),
        shortLink: false,
        tags: [],
        posts: [{ integration: { id: channelId }, value: [{ content, image: [] }], settings: { __type: 'mastodon', spoiler_text: spoiler } }],
      });
      const long = await account.call('POST', '/posts', post('Short text', 'w'.repeat(501)));
      assert.equal(long.status, 400, JSON.stringify(long.body));
      assert.ok(
        long.body.errors.some((e: any) => e.path === 'posts.0.settings.spoiler_text' && /500/.test(e.message)),
        JSON.stringify(long.body),
      );
      const together = await account.call('POST', '/posts', post('t'.repeat(450), 'w'.repeat(60)));
      assert.equal(together.status, 400, JSON.stringify(together.body));
      assert.ok(
        together.body.errors.some((e: any) => String(e.path).startsWith('posts.0.value.0.content') && /content warning/.test(e.message)),
        JSON.stringify(together.body),
      );
    });

    it("ends in ERROR with the instance's message when it refuses the status", async () => {
      fake.failNext('POST /api/v1/statuses', { status: 422, body: { error: 'Validation failed: Text contains a word this server does not allow' } });
      const post = await settled(account, await publishNow(account, channelId, ['refused words']));
      assert.equal(post.state, 'ERROR');
      assert.match(post.error, /422/);
      assert.match(post.error, /contains a word this server does not allow/);
    });

    it('after an answer it cannot read, finds the status among the recent ones instead of posting again', async () => {
      const before = fake.statuses.length;
      fake.garbleNextStatusAnswer = true;
      const post = await settled(account, await publishNow(account, channelId, ['Did it go out? https://example.com/x']));
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      assert.equal(fake.statuses.length, before + 1, 'one status, not two');
      assert.equal(post.releaseId, fake.statuses.at(-1)!.id);
      assert.equal(fake.calls('GET /api/v1/accounts/:id/statuses').at(-1)!.params.id, fake.account.id);
      assert.deepEqual(
        post.thread[0].attempts.map((a: any) => a.outcome),
        ['unknown'],
      );
    });

    it('when the status request is lost, sends it again with the same Idempotency-Key: one status', async () => {
      const before = fake.statuses.length;
      fake.failNext('POST /api/v1/statuses', { hang: true });
      const post = await settled(account, await publishNow(account, channelId, ['lost on the way']), 30_000);
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      assert.deepEqual(
        post.thread[0].attempts.map((a: any) => a.outcome),
        ['unknown', 'published'],
      );
      assert.equal(fake.statuses.length, before + 1, 'one status');
      const [first, second] = fake.calls('POST /api/v1/statuses').slice(-2);
      assert.equal(second.headers['idempotency-key'], first.headers['idempotency-key'], 'the same key both times');
    });

    it('waits out a 429 until X-RateLimit-Reset and publishes once', async () => {
      const before = fake.statuses.length;
      fake.failNext('POST /api/v1/statuses', {
        status: 429,
        body: { error: 'Too many requests' },
        headers: { 'x-ratelimit-limit': '300', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': new Date(Date.now() + 1000).toISOString() },
      });
      const post = await settled(account, await publishNow(account, channelId, ['Patient']));
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      assert.equal(fake.statuses.length, before + 1);
      assert.deepEqual(
        post.thread[0].attempts.map((a: any) => a.outcome),
        ['retry', 'published'],
      );
    });

    serverErrorAfterCreate(() => ({
      fake,
      account,
      publish: (text) => publishNow(account, channelId, [text]),
      held: (text) => fake.statuses.filter((s) => s.text === text).length,
    }));

    it("reports the account's and a post's figures as the instance gives them, kept a while so a dashboard does not spend the quota", async () => {
      fake.account.followers_count = 42;
      fake.account.following_count = 7;
      const channel = await account.call('GET', `/analytics/${channelId}?date=7`);
      assert.equal(channel.status, 200, JSON.stringify(channel.body));
      const today = new Date().toISOString().slice(0, 10);
      assert.deepEqual(channel.body, [
        { label: 'Followers', data: [{ total: 42, date: today }], percentageChange: 0 },
        { label: 'Following', data: [{ total: 7, date: today }], percentageChange: 0 },
        { label: 'Posts', data: [{ total: fake.statuses.length, date: today }], percentageChange: 0 },
      ]);
      fake.account.followers_count = 43;
      const again = await account.call('GET', `/analytics/${channelId}?date=7`);
      assert.deepEqual(again.body, channel.body, 'kept, not read again');
      assert.equal(fake.calls('GET /api/v1/accounts/verify_credentials').filter((r) => r.at > Date.now() - 5_000).length, 1);

      const post = await settled(account, await publishNow(account, channelId, ['Counted']));
      fake.reactions.set(post.releaseId, { favourites_count: 5, reblogs_count: 2, replies_count: 1, quotes_count: 0 });
      const figures = await account.call('GET', `/analytics/post/${post.id}?date=7`);
      assert.equal(figures.status, 200, JSON.stringify(figures.body));
      assert.deepEqual(
        figures.body.map((s: any) => [s.label, s.data[0].total]),
        [
          ['Favourites', 5],
          ['Boosts', 2],
          ['Replies', 1],
          ['Quotes', 0],
        ],
      );

      const draft = await saveDraft(account, channelId, 'not yet', { __type: 'mastodon' });
      const notOut = await account.call('GET', `/analytics/post/${draft}`);
      assert.equal(notOut.status, 400);
      assert.equal(notOut.body.code, 'post_not_published');
    });

    it("lists the account's recent statuses for a post published by hand (GET /posts/{id}/missing)", async () => {
      const draft = await saveDraft(account, channelId, 'by hand', { __type: 'mastodon' });
      const missing = await account.call('GET', `/posts/${draft}/missing`);
      assert.equal(missing.status, 200, JSON.stringify(missing.body));
      const newest = fake.statuses.at(-1)!;
      assert.deepEqual(missing.body[0], { id: newest.id, url: newest.url, text: newest.text, at: new Date(newest.created_at).toISOString() });
      assert.equal(missing.body.length, Math.min(fake.statuses.length, 40));
    });

    it('a revoked token (Mastodon has no refresh) marks the channel for reconnection; connecting again restores it', async () => {
      fake.validTokens.clear();
      const post = await settled(account, await publishNow(account, channelId, ['Nobody home']));
      assert.equal(post.state, 'ERROR');
      assert.match(post.error, /must be reconnected/);
      assert.match(post.error, /access token is invalid/);
      assert.equal((await listedChannel(account, channelId)).needsReconnect, true);

      const again = await connectOAuth(herald, account, 'mastodon', { query: { instance: fake.url } });
      assert.equal(again.id, channelId, 'the same account on the same instance is the same channel');
      assert.equal((await listedChannel(account, channelId)).needsReconnect, false);
      const after = await settled(account, await publishNow(account, channelId, ['Back again']));
      assert.equal(after.state, 'PUBLISHED', after.error ?? '');
    });
  });
}
