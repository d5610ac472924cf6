import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { startHerald, type TestAccount, type TestHerald } from '../helpers/herald.ts';
import { testStores, storeSuite } from '../helpers/stores.ts';
import { connectOAuth } from '../helpers/connect.ts';
import { KICK_APP, KICK_SLUG, KICK_USER, startKickFake, type KickFake } from '../fakes/kick.ts';
import { channelView, publishNow, settled, uploadPng } from './publish.ts';
import { serverErrorAfterCreate } from './create-5xx.ts';
import { teardown } from '../helpers/teardown.ts';

for (const store of await testStores()) {
  describe(`kick (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let fake: KickFake;
    let account: TestAccount;
    let channelId: string;

    before(async () => {
      fake = await startKickFake();
      herald = await startHerald(store, {
        engine: { pollMs: 50, publishTimeoutMs: 3_000 },
        env: {
          HERALD_KICK_CLIENT_ID: KICK_APP.clientId,
          HERALD_KICK_CLIENT_SECRET: KICK_APP.clientSecret,
          HERALD_KICK_API_URL: fake.url,
          HERALD_KICK_AUTH_URL: fake.url,
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

    it('connects through OAuth 2.1 with PKCE (S256) and the client secret, then reads the user and channel', async () => {
      const connected = await connectOAuth(herald, account, 'kick');
      channelId = connected.id;
      assert.equal(connected.name, KICK_USER.name);
      const consent = fake.state.authorize;
      assert.equal(consent.client_id, KICK_APP.clientId);
      assert.equal(consent.redirect_uri, `${herald.url}/connect/kick/callback`);
      assert.deepEqual(consent.scope.split(' ').sort(), ['channel:read', 'chat:write', 'user:read']);
      assert.equal(consent.code_challenge_method, 'S256');
      const exchange = fake.calls('POST /oauth/token').at(-1)!;
      assert.equal(exchange.form?.grant_type, 'authorization_code');
      assert.equal(exchange.form?.client_secret, KICK_APP.clientSecret);
      assert.equal(crypto.createHash('sha256').update(exchange.form!.code_verifier).digest('base64url'), consent.code_challenge);
      const [me] = fake.calls('GET /public/v1/users');
      assert.equal(me.headers.authorization, `Bearer ${fake.accessToken()}`);
      assert.equal(fake.calls('GET /public/v1/channels').length, 1);
      const listed = await channelView(account, channelId);
      assert.equal(listed.identifier, 'kick');
      assert.doesNotMatch(JSON.stringify((await account.callUntyped('GET', '/integrations')).body), new RegExp(fake.accessToken()));
    });

    it('sends a chat message as the user into their channel, linked to the channel page', async () => {
      const post = await settled(account, await publishNow(account, channelId, ['Live now! [emote:37226:KEKW]']));
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      const sent = fake.calls('POST /public/v1/chat').at(-1)!;
      assert.equal(sent.headers.authorization, `Bearer ${fake.accessToken()}`);
      assert.deepEqual(sent.json, { type: 'user', broadcaster_user_id: KICK_USER.user_id, content: 'Live now! [emote:37226:KEKW]' });
      assert.equal(post.releaseId, fake.messages.at(-1)!.message_id);
      assert.equal(post.releaseURL, `https://kick.com/${KICK_SLUG}`);
    });

    it('publishes a thread as replies, each to the previous message', async () => {
      const post = await settled(account, await publishNow(account, channelId, ['one', { content: 'two', delay: 0 }, { content: 'three', delay: 0 }]));
      assert.deepEqual(
        post.thread.map((t) => t.state),
        ['PUBLISHED', 'PUBLISHED', 'PUBLISHED'],
      );
      const [a, b, c] = fake.calls('POST /public/v1/chat').slice(-3);
      assert.equal(a.json.reply_to_message_id, undefined);
      assert.equal(b.json.reply_to_message_id, post.thread[0].releaseId);
      assert.equal(c.json.reply_to_message_id, post.thread[1].releaseId);
    });

    it('refuses before acceptance a message over 500 characters and any media', async () => {
      const png = await uploadPng(account, herald.api);
      const body = (value: unknown[]) => ({
        type: 'now',
        date: new Date().toISOString(),
        shortLink: false,
        tags: [],
        posts: [{ integration: { id: channelId }, value, settings: { __type: 'kick' } }],
      });
      const before = fake.calls('POST /public/v1/chat').length;
      const long = await account.callUntyped('POST', '/posts', body([{ content: 'é'.repeat(501), image: [] }]));
      assert.equal(long.status, 400, JSON.stringify(long.body));
      assert.equal(long.body.errors[0].path, 'posts.0.value.0.content');
      assert.match(long.body.errors[0].message, /501 characters.*at most 500/);
      const withMedia = await account.callUntyped('POST', '/posts', body([{ content: 'look', image: [{ id: png.id, path: png.path }] }]));
      assert.equal(withMedia.status, 400);
      assert.equal(withMedia.body.errors[0].path, 'posts.0.value.0.image');
      assert.equal(fake.calls('POST /public/v1/chat').length, before);
    });

    it('fails for good when chat does not deliver the message (is_sent false)', async () => {
      fake.dropNext();
      const count = fake.messages.length;
      const post = await settled(account, await publishNow(account, channelId, ['in slow mode']));
      assert.equal(post.state, 'ERROR');
      assert.match(post.error!, /^Kick: the chat did not deliver the message/);
      assert.equal(post.thread[0].attempts.length, 1);
      assert.equal(fake.messages.length, count);
    });

    it('fails with Kick’s message when it forbids the chat (403)', async () => {
      fake.failNext('POST /public/v1/chat', { status: 403, body: { message: 'You are banned from this chat.', data: null } });
      const post = await settled(account, await publishNow(account, channelId, ['let me in']));
      assert.equal(post.state, 'ERROR');
      assert.equal(post.error, 'Kick answered 403: You are banned from this chat.');
      assert.equal(post.thread[0].attempts.length, 1);
    });

    it('honours Retry-After on 429 and sends once', async () => {
      fake.failNext('POST /public/v1/chat', { status: 429, headers: { 'retry-after': '3' }, body: { message: 'Too Many Attempts.', data: null } });
      const count = fake.messages.length;
      const post = await settled(account, await publishNow(account, channelId, ['after the limit']));
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      assert.deepEqual(
        post.thread[0].attempts.map((a) => a.outcome),
        ['retry', 'published'],
      );
      const [limited, sent] = fake.calls('POST /public/v1/chat').slice(-2);
      assert.ok(sent.at - limited.at >= 2_900, `waited ${sent.at - limited.at} ms`);
      assert.equal(fake.messages.length, count + 1);
    });

    it('does not send again when the answer never comes; the user checks the chat', async () => {
      const count = fake.calls('POST /public/v1/chat').length;
      fake.failNext('POST /public/v1/chat', { handleThenHang: true });
      const post = await settled(account, await publishNow(account, channelId, ['did it arrive?']));
      assert.equal(post.state, 'ERROR');
      assert.match(post.error!, /timed out after it was sent, so it may have been published/);
      assert.deepEqual(
        post.thread[0].attempts.map((a) => a.outcome),
        ['unknown'],
      );
      assert.equal(fake.calls('POST /public/v1/chat').length, count + 1, 'sent once');
      assert.equal(fake.messages.at(-1)!.content, 'did it arrive?');
    });

    serverErrorAfterCreate(() => ({
      fake,
      account,
      publish: (text) => publishNow(account, channelId, [text]),
      held: (text) => fake.messages.filter((m) => m.content === text).length,
    }));

    it('refreshes an expired token, storing the rotated refresh token, and sends with the new one', async () => {
      for (const round of [1, 2]) {
        const oldAccess = fake.accessToken();
        const oldRefresh = fake.refreshToken();
        fake.expireAccessToken();
        const post = await settled(account, await publishNow(account, channelId, [`fresh token ${round}`]));
        assert.equal(post.state, 'PUBLISHED', post.error ?? '');
        const refresh = fake.calls('POST /oauth/token').at(-1)!;
        assert.deepEqual(refresh.form, {
          grant_type: 'refresh_token',
          refresh_token: oldRefresh,
          client_id: KICK_APP.clientId,
          client_secret: KICK_APP.clientSecret,
        });
        const [failed, sent] = fake.calls('POST /public/v1/chat').slice(-2);
        assert.equal(failed.headers.authorization, `Bearer ${oldAccess}`);
        assert.equal(sent.headers.authorization, `Bearer ${fake.accessToken()}`);
      }
    });

    it('marks the channel for reconnection when Kick refuses the refresh token', async () => {
      fake.revokeAll();
      const post = await settled(account, await publishNow(account, channelId, ['revoked']));
      assert.equal(post.state, 'ERROR');
      assert.match(post.error!, /must be reconnected/);
      assert.match(post.error!, /Invalid request/);
      assert.equal((await channelView(account, channelId)).needsReconnect, true);
    });
  });
}
