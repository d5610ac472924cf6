import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startHerald, type TestAccount, type TestHerald } from '../helpers/herald.ts';
import { testStores, storeSuite } from '../helpers/stores.ts';
import { connectOAuth } from '../helpers/connect.ts';
import { entry, postBody } from '../helpers/api-fixtures.ts';
import { CLIENT_ID, startWhopFake, type WhopFake } from '../fakes/whop.ts';
import { listedChannel, publishNow, settled, uploadMp4, uploadPng } from './support.ts';
import { serverErrorAfterCreate } from './create-5xx.ts';
import { teardown } from '../helpers/teardown.ts';

const FORUM = { company: 'biz_Studio', experience: 'exp_General' };

for (const store of await testStores()) {
  describe(`whop (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let fake: WhopFake;
    let account: TestAccount;
    let channelId: string;

    const post = async (items: Parameters<typeof publishNow>[2], settings: Record<string, unknown> = FORUM) =>
      settled(account, await publishNow(account, channelId, items, settings));
    const postsSent = () => fake.calls('POST /api/v1/forum_posts');

    before(async () => {
      fake = await startWhopFake();
      herald = await startHerald(store, {
        engine: { pollMs: 50, publishTimeoutMs: 1_500 },
        env: {
          HERALD_WHOP_CLIENT_ID: CLIENT_ID,
          HERALD_WHOP_API_URL: fake.url,
          HERALD_POSTS_PER_HOUR: '1000',
          HERALD_REQUESTS_PER_MINUTE: '100000',
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

    it('connects through OAuth 2.1 with PKCE and a nonce; the token request is JSON with the verifier; the member from userinfo', async () => {
      const connected = await connectOAuth(herald, account, 'whop');
      channelId = connected.id;
      assert.equal(connected.identifier, 'whop');
      assert.equal(connected.name, 'Ada Member');
      const consent = fake.state.authorize;
      assert.equal(consent.client_id, CLIENT_ID);
      assert.equal(consent.redirect_uri, `${herald.url}/connect/whop/callback`);
      assert.equal(consent.code_challenge_method, 'S256');
      assert.ok(consent.nonce, 'a nonce is sent');
      assert.deepEqual(consent.scope.split(' '), ['openid', 'profile', 'email', 'forum:post:create', 'forum:read', 'company:basic:read']);
      const token = fake.calls('POST /oauth/token').at(-1)!;
      assert.match(String(token.headers['content-type']), /application\/json/);
      assert.equal(token.json.grant_type, 'authorization_code');
      assert.ok(token.json.code_verifier, 'the token exchange sends the PKCE code verifier');
      assert.equal(token.json.client_secret, undefined, 'a public client sends no secret');
      assert.equal(fake.calls('GET /oauth/userinfo').at(-1)!.headers.authorization, 'Bearer whop-access-1');
      const listed = await listedChannel(account, channelId);
      assert.equal(listed.profile, 'ada');
      assert.equal(listed.picture, 'https://img.whop.example/ada.png');
    });

    it('lists companies and their forums with its tools', async () => {
      const companies = await account.callUntyped('POST', `/integration-trigger/${channelId}`, { methodName: 'companies' });
      assert.equal(companies.status, 200, JSON.stringify(companies.body));
      assert.deepEqual(companies.body.output, [{ id: 'biz_Studio', name: 'Studio Club' }]);
      const forums = await account.callUntyped('POST', `/integration-trigger/${channelId}`, { methodName: 'forums', data: { company: 'biz_Studio' } });
      assert.equal(forums.status, 200, JSON.stringify(forums.body));
      assert.deepEqual(forums.body.output, [
        { id: 'exp_General', name: 'General' },
        { id: 'exp_Announce', name: 'Announcements' },
      ]);
      assert.equal(fake.calls('GET /api/v1/forums').at(-1)!.query.company_id, 'biz_Studio');
    });

    it('refuses before acceptance a post without company and forum, or over 50,000 characters', async () => {
      const missing = await account.callUntyped(
        'POST',
        '/posts',
        postBody('now', [entry(channelId, ['hi'], { settings: {} })], { date: new Date().toISOString() }),
      );
      assert.equal(missing.status, 400, JSON.stringify(missing.body));
      const paths = missing.body.errors.map((e: any) => e.path);
      assert.ok(paths.includes('posts.0.settings.company') && paths.includes('posts.0.settings.experience'), JSON.stringify(paths));
      const long = await account.callUntyped(
        'POST',
        '/posts',
        postBody('now', [entry(channelId, ['x'.repeat(50_001)], { settings: FORUM })], { date: new Date().toISOString() }),
      );
      assert.equal(long.status, 400);
      assert.ok(
        long.body.errors.some((e: any) => e.path === 'posts.0.value.0.content' && /at most 50000/.test(e.message)),
        'a too-long post is refused at the content, naming the 50000-character limit',
      );
    });

    it('publishes a forum post with the Api-Version-Date header and links it', async () => {
      const done = await post(['Welcome to the **club**'], { ...FORUM, title: 'Hello' });
      assert.equal(done.state, 'PUBLISHED', done.error ?? '');
      const sent = postsSent().at(-1)!;
      assert.equal(sent.headers.authorization, 'Bearer whop-access-1');
      assert.equal(sent.headers['api-version-date'], '2026-08-21-1');
      assert.deepEqual(sent.json, { experience_id: 'exp_General', content: 'Welcome to the **club**', title: 'Hello' });
      const stored = fake.posts.at(-1)!;
      assert.equal(done.releaseId, stored.id);
      assert.equal(done.releaseURL, `https://whop.com/experiences/exp_General/${stored.id}`);
    });

    it('posts to the public forum of a company by naming the company', async () => {
      const done = await post(['For everyone'], { company: 'biz_Studio', experience: 'public' });
      assert.equal(done.state, 'PUBLISHED', done.error ?? '');
      assert.deepEqual(postsSent().at(-1)!.json, { experience_id: 'public', company_id: 'biz_Studio', content: 'For everyone' });
    });

    it('attaches media through the Files API: create, PUT the bytes with its headers, wait until ready, attach', async () => {
      const png = await uploadPng(account, herald);
      const video = await uploadMp4(account, herald, 4000);
      const done = await post([{ content: 'With files', media: [png, video] }]);
      assert.equal(done.state, 'PUBLISHED', done.error ?? '');
      const creates = fake.calls('POST /api/v1/files').slice(-2);
      assert.ok(
        creates.every((c) => c.headers['api-version-date'] === '2026-08-21-1' && c.headers.authorization === 'Bearer whop-access-1'),
        'every create sends the API version date and the channel’s token',
      );
      assert.match(creates[0].json.filename, /\.png$/);
      assert.match(creates[1].json.filename, /\.mp4$/);
      const puts = fake.calls('PUT /upload/:id').slice(-2);
      assert.deepEqual(
        puts.map((p) => [p.params.id, p.headers['x-amz-meta-file'], p.headers['content-type'], p.headers.authorization]),
        [
          ['file_1', 'file_1', 'application/octet-stream', undefined],
          ['file_2', 'file_2', 'application/octet-stream', undefined],
        ],
        'the upload headers Whop gave, and no Whop token to the storage host',
      );
      assert.deepEqual(fake.files.get('file_2')!.bytes, video.bytes);
      assert.ok(fake.calls('GET /api/v1/files/:id').length >= 2, 'asked until ready');
      assert.deepEqual(postsSent().at(-1)!.json.attachments, [{ id: 'file_1' }, { id: 'file_2' }]);
    });

    it('fails with Whop’s word when an upload ends in failed, without creating the post', async () => {
      const before = postsSent().length;
      fake.failNextFile = true;
      const png = await uploadPng(account, herald);
      const done = await post([{ content: 'Broken file', media: [png] }]);
      assert.equal(done.state, 'ERROR');
      assert.match(done.error, /Whop could not process the attachment: the upload of .* failed/);
      assert.equal(postsSent().length, before);
    });

    it('publishes a thread as comments, each under the one before; the title only on the post', async () => {
      const done = await post(['Root', 'First comment', 'Second comment'], { ...FORUM, title: 'Thread' });
      assert.deepEqual(
        done.thread.map((t) => t.state),
        ['PUBLISHED', 'PUBLISHED', 'PUBLISHED'],
      );
      const [root, first, second] = postsSent()
        .slice(-3)
        .map((r) => r.json);
      assert.equal(root.parent_id, undefined);
      assert.equal(root.title, 'Thread');
      assert.equal(first.parent_id, done.thread[0].releaseId);
      assert.equal(first.title, undefined);
      assert.equal(second.parent_id, done.thread[1].releaseId);
      assert.equal(first.experience_id, 'exp_General');
    });

    it('ends in ERROR with Whop’s message for a forum that does not exist, and for one the member may not post in', async () => {
      const gone = await post(['Nowhere'], { company: 'biz_Studio', experience: 'exp_Gone' });
      assert.equal(gone.state, 'ERROR');
      assert.match(gone.error, /Whop answered 404: not_found: Experience not found/);
      assert.equal(gone.thread[0].attempts.length, 1);

      fake.failNext('POST /api/v1/forum_posts', { status: 403, body: { error: { type: 'forbidden', message: 'Only admins can post in this forum' } } });
      const denied = await post(['Members only']);
      assert.equal(denied.state, 'ERROR');
      assert.match(denied.error, /403: forbidden: Only admins can post in this forum.*"who can post"/);
      assert.equal((await listedChannel(account, channelId)).needsReconnect, false);
    });

    it('waits out a 429 and posts once', async () => {
      const before = fake.posts.length;
      fake.failNext('POST /api/v1/forum_posts', {
        status: 429,
        headers: { 'retry-after': '1' },
        body: { error: { type: 'rate_limited', message: 'Too many requests' } },
      });
      const done = await post(['Patient']);
      assert.equal(done.state, 'PUBLISHED', done.error ?? '');
      assert.deepEqual(
        done.thread[0].attempts.map((a) => a.outcome),
        ['retry', 'published'],
      );
      assert.equal(fake.posts.length, before + 1);
    });

    it('after a lost answer, finds the post in the forum instead of posting again', async () => {
      const before = fake.posts.length;
      fake.failNext('POST /api/v1/forum_posts', { handleThenHang: true });
      const done = await post(['Did it arrive?']);
      assert.equal(done.state, 'PUBLISHED', done.error ?? '');
      assert.equal(fake.posts.length, before + 1, 'one post');
      assert.equal(done.releaseId, fake.posts.at(-1)!.id);
      assert.deepEqual(
        done.thread[0].attempts.map((a) => a.outcome),
        ['unknown'],
      );
      const lookup = fake.calls('GET /api/v1/forum_posts').at(-1)!;
      assert.deepEqual([lookup.query.experience_id, lookup.query.first], ['exp_General', '10']);
    });

    it('after a 500 with nothing made, fails asking the user to check instead of posting twice', async () => {
      const sent = postsSent().length;
      fake.failNext('POST /api/v1/forum_posts', { status: 500, body: { error: { type: 'internal_error', message: 'Something went wrong' } } });
      const done = await post(['Server trouble']);
      assert.equal(done.state, 'ERROR');
      assert.match(done.error, /does not show it yet/);
      assert.equal(postsSent().length, sent + 1);
    });

    serverErrorAfterCreate(() => ({
      fake,
      account,
      publish: (text) => publishNow(account, channelId, [text], FORUM),
      held: (text) => fake.posts.filter((p) => p.content === text).length,
    }));

    it('refreshes an expired token and stores the rotated refresh token for the next time', async () => {
      const refreshes = () => fake.calls('POST /oauth/token').filter((r) => r.json?.grant_type === 'refresh_token');
      const expire = () => {
        for (const t of fake.accessTokens.values()) t.expiresAt = 0;
      };
      expire();
      const first = await post(['After refresh']);
      assert.equal(first.state, 'PUBLISHED', first.error ?? '');
      assert.equal(refreshes().at(-1)!.json.refresh_token, 'whop-refresh-1');
      assert.equal(refreshes().at(-1)!.json.client_id, CLIENT_ID);
      assert.equal(postsSent().at(-1)!.headers.authorization, 'Bearer whop-access-2');

      expire();
      const second = await post(['Second refresh']);
      assert.equal(second.state, 'PUBLISHED', second.error ?? '');
      assert.equal(refreshes().at(-1)!.json.refresh_token, 'whop-refresh-2', 'the rotated token, not the used one');
    });

    it('a refused refresh (invalid_grant) marks the channel for reconnection; connecting again restores it', async () => {
      for (const t of fake.accessTokens.values()) t.expiresAt = 0;
      fake.refreshTokens.clear();
      const done = await post(['Nobody home']);
      assert.equal(done.state, 'ERROR');
      assert.match(done.error, /must be reconnected/);
      assert.match(done.error, /invalid_grant/);
      assert.equal((await listedChannel(account, channelId)).needsReconnect, true);
      const again = await connectOAuth(herald, account, 'whop');
      assert.equal(again.id, channelId);
      assert.equal((await listedChannel(account, channelId)).needsReconnect, false);
      const back = await post(['Back again']);
      assert.equal(back.state, 'PUBLISHED', back.error ?? '');
    });
  });
}

describe('whop Api-Version-Date', () => {
  it('sends the date the server is configured with, and shows Whop’s refusal of an unknown one', async () => {
    const fake = await startWhopFake();
    const start = (version: string) =>
      startHerald('sqlite', {
        engine: { pollMs: 50 },
        env: { HERALD_WHOP_CLIENT_ID: CLIENT_ID, HERALD_WHOP_API_URL: fake.url, HERALD_WHOP_API_VERSION: version },
      });
    for (const [version, outcome] of [
      ['2026-06-09', 'PUBLISHED'],
      ['2031-01-01', 'ERROR'],
    ] as const) {
      const herald = await start(version);
      try {
        const account = await herald.newAccount();
        const { id } = await connectOAuth(herald, account, 'whop');
        const done = await settled(account, await publishNow(account, id, ['Versioned'], FORUM));
        assert.equal(done.state, outcome, done.error ?? '');
        assert.equal(fake.calls('POST /api/v1/forum_posts').at(-1)!.headers['api-version-date'], version);
        if (outcome === 'ERROR') assert.match(done.error, /400: invalid_request: Unknown Api-Version-Date "2031-01-01"\. Supported versions: 2025-01-01/);
      } finally {
        await herald.close();
      }
    }
    await fake.close();
  });
});
