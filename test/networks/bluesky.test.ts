import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PNG_1x1, startHerald, type TestAccount, type TestHerald } from '../helpers/herald.ts';
import { testStores, storeSuite } from '../helpers/stores.ts';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { facetsOf, itemRecordKey } from '../../src/providers/networks/bluesky.ts';
import { graphemes } from '../../src/providers/text-counting.ts';
import { APP_PASSWORD, DID, HANDLE, startBlueskyFake, type BlueskyFake } from '../fakes/bluesky.ts';
import { listedChannel, publishNow, settled, uploadMp4, uploadPng, saveDraft } from './support.ts';
import { serverErrorAfterCreate } from './create-5xx.ts';

describe('bluesky text rules', () => {
  it('counts graphemes, not code units or bytes', () => {
    assert.equal(graphemes('👩‍👩‍👧‍👦 é'), 3);
    assert.equal(graphemes('e\u0301'), 1);
  });
  it('keeps facets apart: one that starts inside a link is dropped, even after another was dropped', async () => {
    // Both mentions sit inside the link; comparing with a dropped facet would keep the second.
    const text = 'see https://x.org/(@a.bc(@d.ef';
    const facets = await facetsOf(text, async () => 'did:plc:someone');
    assert.deepEqual(
      facets.map((f) => f.features[0].$type),
      ['app.bsky.richtext.facet#link'],
    );
  });
  it('derives one 13-character record key per item, the same every time', () => {
    const at = new Date('2026-05-01T12:00:00Z');
    const key = itemRecordKey(at, 'post-item-1');
    assert.match(key, /^[234567abcdefghij][234567a-z]{12}$/);
    assert.equal(itemRecordKey(at, 'post-item-1'), key);
    assert.notEqual(itemRecordKey(at, 'post-item-2'), key);
  });
});

for (const store of await testStores()) {
  describe(`bluesky (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let fake: BlueskyFake;
    let account: TestAccount;
    let channelId: string;

    let pages: http.Server;
    let pagesUrl: string;

    before(async () => {
      fake = await startBlueskyFake();
      // A web site whose pages have Open Graph tags, for link cards.
      pages = http.createServer((req, res) => {
        if (req.url === '/article') {
          res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
          res.end(`<!doctype html><html><head><title>Fallback title</title>
            <meta property="og:title" content="Herald &amp; the art of scheduling">
            <meta content="Posts that go out on time, exactly once." property="og:description">
            <meta property="og:image" content="/cover.png"></head><body>…</body></html>`);
        } else if (req.url === '/cover.png') {
          res.writeHead(200, { 'content-type': 'image/png' });
          res.end(PNG_1x1);
        } else {
          res.writeHead(404).end();
        }
      });
      await new Promise<void>((resolve) => pages.listen(0, '127.0.0.1', resolve));
      pagesUrl = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`;
      // A publish whose answer never comes is given up after 4 s (its outcome then unknown).
      herald = await startHerald(store, {
        engine: { pollMs: 50, publishTimeoutMs: 4_000 },
        env: { HERALD_BLUESKY_SERVICE_URL: 'https://bsky.invalid', HERALD_BLUESKY_VIDEO_URL: fake.url, HERALD_POSTS_PER_HOUR: '1000' },
      });
      account = await herald.newAccount();
    });
    after(async () => {
      await herald?.close();
      await fake?.close();
      pages?.close();
    });

    it('connects with a handle and an app password on the given PDS (createSession), never showing the password', async () => {
      const added = await account.callUntyped('POST', '/integrations', {
        identifier: 'bluesky',
        credentials: { identifier: HANDLE, password: APP_PASSWORD, service: fake.url },
      });
      assert.equal(added.status, 201, JSON.stringify(added.body));
      channelId = added.body.id;
      assert.equal(added.body.name, 'Herald on Bluesky');
      const [login] = fake.calls('POST /xrpc/com.atproto.server.createSession');
      assert.deepEqual(login.json, { identifier: HANDLE, password: APP_PASSWORD });
      const [profile] = fake.calls('GET /xrpc/app.bsky.actor.getProfile');
      assert.equal(profile.query.actor, DID);
      const listed = await listedChannel(account, channelId);
      assert.equal(listed.profile, HANDLE);
      assert.equal(listed.picture, 'https://cdn.bsky.example/avatar.jpg');
      assert.doesNotMatch(JSON.stringify((await account.callUntyped('GET', '/integrations')).body), new RegExp(APP_PASSWORD));
    });

    it("refuses wrong credentials with Bluesky's message, and bad fields by name", async () => {
      const wrong = await account.callUntyped('POST', '/integrations', {
        identifier: 'bluesky',
        credentials: { identifier: HANDLE, password: 'nope-nope-nope-nope', service: fake.url },
      });
      assert.equal(wrong.status, 400);
      assert.match(wrong.body.message, /Invalid identifier or password/);
      const empty = await account.callUntyped('POST', '/integrations', { identifier: 'bluesky', credentials: { service: 'ftp://x' } });
      assert.equal(empty.status, 400);
      assert.deepEqual(empty.body.errors.map((e: any) => e.path).sort(), ['credentials.identifier', 'credentials.password', 'credentials.service']);
      const privateService = await account.callUntyped('POST', '/integrations', {
        identifier: 'bluesky',
        credentials: { identifier: HANDLE, password: APP_PASSWORD, service: 'http://10.9.8.7' },
      });
      assert.equal(privateService.status, 400);
      assert.equal(privateService.body.errors[0].path, 'credentials.service');
    });

    it('publishes text with link, mention and hashtag facets at UTF-8 byte offsets', async () => {
      const text = 'Ça va @alice.test? https://example.com/a #tag @nobody.test';
      const post = await settled(account, await publishNow(account, channelId, [text]));
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      const [create] = fake.calls('POST /xrpc/com.atproto.repo.createRecord');
      assert.match(String(create.headers.authorization), /^Bearer ey/);
      const { repo, collection, rkey, record } = create.json;
      assert.deepEqual({ repo, collection }, { repo: DID, collection: 'app.bsky.feed.post' });
      assert.match(rkey, /^[234567a-z]{13}$/);
      assert.equal(record.$type, 'app.bsky.feed.post');
      assert.equal(record.text, text);
      assert.ok(!Number.isNaN(Date.parse(record.createdAt)), '!Number.isNaN(Date.parse(record.createdAt))');
      // "Ç" is two bytes, so everything after it sits one byte later than its character index.
      assert.deepEqual(record.facets, [
        { index: { byteStart: 7, byteEnd: 18 }, features: [{ $type: 'app.bsky.richtext.facet#mention', did: 'did:plc:alice000000000000000000' }] },
        { index: { byteStart: 20, byteEnd: 41 }, features: [{ $type: 'app.bsky.richtext.facet#link', uri: 'https://example.com/a' }] },
        { index: { byteStart: 42, byteEnd: 46 }, features: [{ $type: 'app.bsky.richtext.facet#tag', tag: 'tag' }] },
      ]);
      assert.deepEqual(
        fake.calls('GET /xrpc/com.atproto.identity.resolveHandle').map((r) => r.query.handle),
        ['alice.test', 'nobody.test'],
      );
      const stored = fake.records.at(-1)!;
      assert.equal(post.releaseId, stored.uri);
      assert.equal(post.releaseURL, `https://bsky.app/profile/${DID}/post/${stored.rkey}`);
    });

    it('uploads pictures with uploadBlob and embeds them with their alt text', async () => {
      const png = await uploadPng(account, herald);
      await herald.services.media.describe(account.id, png.id, { alt: 'A white square' });
      const post = await settled(account, await publishNow(account, channelId, [{ content: 'A picture', media: [png] }]));
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      const [blobCall] = fake.calls('POST /xrpc/com.atproto.repo.uploadBlob');
      assert.equal(blobCall.headers['content-type'], 'image/png');
      const blob = fake.blobs.at(-1)!;
      assert.deepEqual(blobCall.raw, blob.bytes);
      assert.deepEqual(fake.records.at(-1)!.value.embed, {
        $type: 'app.bsky.embed.images',
        images: [
          {
            image: { $type: 'blob', ref: { $link: blob.cid }, mimeType: 'image/png', size: blob.bytes.length },
            alt: 'A white square',
            aspectRatio: { width: 1, height: 1 },
          },
        ],
      });
    });

    it("builds the link card of the first link from the page's Open Graph tags, with its image as the thumbnail", async () => {
      const post = await settled(
        account,
        await publishNow(account, channelId, [`Read this: ${pagesUrl}/article`], { __type: 'bluesky', langs: ['en', 'pt-BR'] }),
      );
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      const record = fake.records.at(-1)!.value;
      const thumb = fake.blobs.at(-1)!;
      assert.deepEqual(thumb.bytes, PNG_1x1);
      assert.deepEqual(record.embed, {
        $type: 'app.bsky.embed.external',
        external: {
          uri: `${pagesUrl}/article`,
          title: 'Herald & the art of scheduling',
          description: 'Posts that go out on time, exactly once.',
          thumb: { $type: 'blob', ref: { $link: thumb.cid }, mimeType: 'image/png', size: PNG_1x1.length },
        },
      });
      assert.deepEqual(record.langs, ['en', 'pt-BR']);
    });

    it('publishes without a card when the page is on a private address the server may not reach', async () => {
      const post = await settled(account, await publishNow(account, channelId, ['Intranet: http://10.1.2.3/wiki']));
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      assert.equal(fake.records.at(-1)!.value.embed, undefined);
      assert.equal(fake.records.at(-1)!.value.langs, undefined, 'no languages unless given');
    });

    it('refuses before queueing a text over 3,000 bytes, though under 300 graphemes, and more than 3 languages', async () => {
      const family = '👨‍👩‍👧‍👦';
      const text = family.repeat(130);
      assert.ok(graphemes(text) <= 300 && Buffer.byteLength(text) > 3000, 'the text fits in 300 graphemes though it is over 3000 bytes');
      const body = (content: string, settings: Record<string, unknown> = { __type: 'bluesky' }) => ({
        type: 'now',
        date: new Date().toISOString(),
        shortLink: false,
        tags: [],
        posts: [{ integration: { id: channelId }, value: [{ content, image: [] }], settings }],
      });
      const long = await account.callUntyped('POST', '/posts', body(text));
      assert.equal(long.status, 400, JSON.stringify(long.body));
      assert.ok(
        long.body.errors.some((e: any) => e.path === 'posts.0.value.0.content' && /3000/.test(e.message)),
        JSON.stringify(long.body.errors),
      );
      const langs = await account.callUntyped('POST', '/posts', body('hello', { __type: 'bluesky', langs: ['en', 'de', 'fr', 'it'] }));
      assert.equal(langs.status, 400);
      assert.ok(
        langs.body.errors.some((e: any) => String(e.path).startsWith('posts.0.settings.langs')),
        JSON.stringify(langs.body.errors),
      );
    });

    it('posts a video through the video service, and a retry follows the same job instead of uploading again', async () => {
      const video = await uploadMp4(account, herald, 3000);
      fake.videoProcessingMs = 6_000;
      const before = fake.calls('POST /xrpc/app.bsky.video.uploadVideo').length;
      const post = await settled(account, await publishNow(account, channelId, [{ content: 'A clip', media: [video] }]), 30_000);
      fake.videoProcessingMs = 0;
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      const uploads = fake.calls('POST /xrpc/app.bsky.video.uploadVideo').slice(before);
      assert.equal(uploads.length, 1, 'uploaded once');
      assert.deepEqual(uploads[0].raw, video.bytes);
      assert.equal(uploads[0].query.did, DID);
      const [auth] = fake.calls('GET /xrpc/com.atproto.server.getServiceAuth').slice(-1);
      assert.equal(auth.query.lxm, 'com.atproto.repo.uploadBlob');
      assert.equal(auth.query.aud, 'did:web:127.0.0.1');
      assert.deepEqual(
        post.thread[0].attempts.map((a: any) => a.outcome),
        ['retry', 'published'],
      );
      const embed = fake.records.at(-1)!.value.embed;
      assert.equal(embed.$type, 'app.bsky.embed.video');
      assert.deepEqual(fake.blobs.find((b) => b.cid === embed.video.ref.$link)!.bytes, video.bytes);
      assert.equal(
        fake.calls('POST /xrpc/com.atproto.repo.uploadBlob').filter((r) => r.headers['content-type'] === 'video/mp4').length,
        0,
        'not as a plain blob',
      );
    });

    it("reports the profile's and a post's counts, and lists recent posts for one published by hand", async () => {
      fake.followers = 321;
      const channel = await account.callUntyped('GET', `/analytics/${channelId}?date=30`);
      assert.equal(channel.status, 200, JSON.stringify(channel.body));
      assert.deepEqual(
        channel.body.map((s: any) => [s.label, s.data[0].total]),
        [
          ['Followers', 321],
          ['Following', 12],
          ['Posts', fake.records.length],
        ],
      );

      const post = await settled(account, await publishNow(account, channelId, ['Counted on Bluesky']));
      fake.counts.set(post.releaseId, { likeCount: 9, repostCount: 3, replyCount: 2, quoteCount: 1 });
      const figures = await account.callUntyped('GET', `/analytics/post/${post.id}`);
      assert.equal(figures.status, 200, JSON.stringify(figures.body));
      assert.deepEqual(
        figures.body.map((s: any) => [s.label, s.data[0].total]),
        [
          ['Likes', 9],
          ['Reposts', 3],
          ['Replies', 2],
          ['Quotes', 1],
        ],
      );

      const draft = await saveDraft(account, channelId, 'by hand', { __type: 'bluesky' });
      const missing = await account.callUntyped('GET', `/posts/${draft}/missing`);
      assert.equal(missing.status, 200, JSON.stringify(missing.body));
      assert.equal(missing.body[0].id, post.releaseId);
      assert.equal(missing.body[0].url, post.releaseURL);
      assert.equal(missing.body[0].text, 'Counted on Bluesky');
    });

    it('publishes a thread with reply refs: the first post as root, the previous as parent', async () => {
      const post = await settled(account, await publishNow(account, channelId, ['first', 'second', 'third']));
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      const [a, b, c] = fake.records.slice(-3);
      assert.equal(a.value.reply, undefined);
      assert.deepEqual(b.value.reply, { root: { uri: a.uri, cid: a.cid }, parent: { uri: a.uri, cid: a.cid } });
      assert.deepEqual(c.value.reply, { root: { uri: a.uri, cid: a.cid }, parent: { uri: b.uri, cid: b.cid } });
      assert.deepEqual(
        post.thread.map((t: any) => t.releaseId),
        [a.uri, b.uri, c.uri],
      );
    });

    it("ends in ERROR with Bluesky's message when it refuses the record", async () => {
      fake.failNext('POST /xrpc/com.atproto.repo.createRecord', {
        status: 400,
        body: { error: 'InvalidRequest', message: 'Invalid app.bsky.feed.post record: Record/langs must not be longer than 3 elements' },
      });
      const post = await settled(account, await publishNow(account, channelId, ['refused']));
      assert.equal(post.state, 'ERROR');
      assert.match(post.error, /InvalidRequest: Invalid app\.bsky\.feed\.post record/);
    });

    it('after an answer it cannot read, finds the record by its key instead of posting twice', async () => {
      const before = fake.records.length;
      fake.garbleNextCreate = true;
      const post = await settled(account, await publishNow(account, channelId, ['Did it land?']));
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      assert.equal(fake.records.length, before + 1);
      assert.equal(post.releaseId, fake.records.at(-1)!.uri);
      assert.equal(fake.calls('GET /xrpc/com.atproto.repo.getRecord').at(-1)!.query.rkey, fake.records.at(-1)!.rkey);
    });

    it('when the create request is lost, sends it again with the same record key: one post', async () => {
      const before = fake.records.length;
      fake.failNext('POST /xrpc/com.atproto.repo.createRecord', { hang: true });
      const post = await settled(account, await publishNow(account, channelId, ['lost on the way']), 30_000);
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      assert.deepEqual(
        post.thread[0].attempts.map((a: { outcome: string }) => a.outcome),
        ['unknown', 'published'],
      );
      assert.equal(fake.records.length, before + 1, 'one record');
      const [first, second] = fake.calls('POST /xrpc/com.atproto.repo.createRecord').slice(-2);
      assert.equal(second.json.rkey, first.json.rkey, 'the same record key both times');
    });

    it('refreshes an expired session with refreshSession, and logs in again when the refresh token died too', async () => {
      const refreshJwt = [...fake.refreshTokens].at(-1)!;
      fake.accessTokens.clear();
      const post = await settled(account, await publishNow(account, channelId, ['after refresh']));
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      const refreshes = fake.calls('POST /xrpc/com.atproto.server.refreshSession');
      assert.equal(refreshes.length, 1);
      assert.equal(refreshes[0].headers.authorization, `Bearer ${refreshJwt}`);

      const logins = fake.calls('POST /xrpc/com.atproto.server.createSession').length;
      fake.accessTokens.clear();
      fake.refreshTokens.clear();
      const again = await settled(account, await publishNow(account, channelId, ['after a new login']));
      assert.equal(again.state, 'PUBLISHED', again.error ?? '');
      assert.equal(fake.calls('POST /xrpc/com.atproto.server.createSession').length, logins + 1);
      assert.equal((await listedChannel(account, channelId)).needsReconnect, false);
    });

    it('waits out a 429 until RateLimit-Reset and publishes once', async () => {
      const before = fake.records.length;
      fake.failNext('POST /xrpc/com.atproto.repo.createRecord', {
        status: 429,
        body: { error: 'RateLimitExceeded', message: 'Rate Limit Exceeded' },
        headers: {
          'ratelimit-limit': '5000',
          'ratelimit-remaining': '0',
          'ratelimit-reset': String(Math.ceil(Date.now() / 1000) + 1),
          'ratelimit-policy': '5000;w=3600',
        },
      });
      const post = await settled(account, await publishNow(account, channelId, ['Patient']));
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      assert.equal(fake.records.length, before + 1);
      assert.deepEqual(
        post.thread[0].attempts.map((a: any) => a.outcome),
        ['retry', 'published'],
      );
    });

    serverErrorAfterCreate(() => ({
      fake,
      account,
      publish: (text) => publishNow(account, channelId, [text]),
      held: (text) => fake.records.filter((r) => r.value.text === text).length,
    }));
  });
}
