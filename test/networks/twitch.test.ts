import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startHerald, type TestAccount, type TestHerald } from '../helpers/herald.ts';
import { testStores, storeSuite } from '../helpers/stores.ts';
import { connectOAuth, followToCallback, startConnect } from '../helpers/connect.ts';
import { startTwitchFake, TWITCH_APP, TWITCH_USER, type TwitchFake } from '../fakes/twitch.ts';
import { channelView, publishNow, settled, uploadPng } from './publish.ts';
import { serverErrorAfterCreate } from './create-5xx.ts';
import { teardown } from '../helpers/teardown.ts';

const ANNOUNCE = { __type: 'twitch', messageType: 'announcement', announcementColor: 'purple' };

for (const store of await testStores()) {
  describe(`twitch (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let fake: TwitchFake;
    let account: TestAccount;
    let channelId: string;

    before(async () => {
      fake = await startTwitchFake();
      herald = await startHerald(store, {
        engine: { pollMs: 50, publishTimeoutMs: 3_000 },
        env: {
          HERALD_TWITCH_CLIENT_ID: TWITCH_APP.clientId,
          HERALD_TWITCH_CLIENT_SECRET: TWITCH_APP.clientSecret,
          HERALD_TWITCH_API_URL: `${fake.url}/helix`,
          HERALD_TWITCH_AUTH_URL: `${fake.url}/oauth2`,
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

    it('refuses to connect when Twitch did not grant sending chat messages', async () => {
      fake.grantOnly = ['user:read:chat'];
      try {
        const finished = await followToCallback(herald, await startConnect(account, 'twitch'));
        assert.equal(finished.status, 400, JSON.stringify(finished.body));
        assert.match(JSON.stringify(finished.body), /did not grant user:write:chat, moderator:manage:announcements/);
      } finally {
        fake.grantOnly = undefined;
      }
      assert.equal((await account.callUntyped('GET', '/integrations')).body.length, 0);
    });

    it('connects through OAuth 2 (client secret, no PKCE) and reads the user from Helix with Client-Id', async () => {
      const connected = await connectOAuth(herald, account, 'twitch');
      channelId = connected.id;
      assert.equal(connected.name, TWITCH_USER.display_name);
      const consent = fake.state.authorize;
      assert.equal(consent.response_type, 'code');
      assert.equal(consent.client_id, TWITCH_APP.clientId);
      assert.equal(consent.redirect_uri, `${herald.url}/connect/twitch/callback`);
      assert.deepEqual(consent.scope.split(' ').sort(), ['moderator:manage:announcements', 'user:read:chat', 'user:write:chat']);
      assert.equal(consent.code_challenge, undefined);
      const exchange = fake.calls('POST /oauth2/token').at(-1)!;
      assert.equal(exchange.form?.grant_type, 'authorization_code');
      assert.equal(exchange.form?.client_secret, TWITCH_APP.clientSecret);
      assert.equal(exchange.form?.redirect_uri, `${herald.url}/connect/twitch/callback`);
      const [me] = fake.calls('GET /helix/users');
      assert.equal(me.headers.authorization, `Bearer ${fake.accessToken()}`);
      assert.equal(me.headers['client-id'], TWITCH_APP.clientId);
      const listed = await channelView(account, channelId);
      assert.equal(listed.identifier, 'twitch');
      assert.doesNotMatch(JSON.stringify((await account.callUntyped('GET', '/integrations')).body), new RegExp(fake.accessToken()));
    });

    it('sends a chat message as the user into their own chat', async () => {
      const post = await settled(account, await publishNow(account, channelId, ['Going live at 8 Kappa']));
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      const sent = fake.calls('POST /helix/chat/messages').at(-1)!;
      assert.equal(sent.headers.authorization, `Bearer ${fake.accessToken()}`);
      assert.equal(sent.headers['client-id'], TWITCH_APP.clientId);
      assert.deepEqual(sent.json, { broadcaster_id: TWITCH_USER.id, sender_id: TWITCH_USER.id, message: 'Going live at 8 Kappa' });
      const line = fake.lines.at(-1)!;
      assert.equal(post.releaseId, line.message_id);
      assert.equal(post.releaseURL, `https://www.twitch.tv/${TWITCH_USER.login}`);
    });

    it('publishes a thread as chat replies, each to the previous message', async () => {
      const post = await settled(account, await publishNow(account, channelId, ['first', { content: 'second', delay: 0 }, { content: 'third', delay: 0 }]));
      assert.deepEqual(
        post.thread.map((t) => t.state),
        ['PUBLISHED', 'PUBLISHED', 'PUBLISHED'],
      );
      const [a, b, c] = fake.calls('POST /helix/chat/messages').slice(-3);
      assert.equal(a.json.reply_parent_message_id, undefined);
      assert.equal(b.json.reply_parent_message_id, post.thread[0].releaseId);
      assert.equal(c.json.reply_parent_message_id, post.thread[1].releaseId);
    });

    it('sends an announcement in the chosen colour (204, no id); later items go out as plain chat messages', async () => {
      const post = await settled(account, await publishNow(account, channelId, ['Big news!', { content: 'details below', delay: 0 }], ANNOUNCE));
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      const announced = fake.calls('POST /helix/chat/announcements').at(-1)!;
      assert.deepEqual(announced.query, { broadcaster_id: TWITCH_USER.id, moderator_id: TWITCH_USER.id });
      assert.deepEqual(announced.json, { message: 'Big news!', color: 'purple' });
      assert.equal(announced.headers['client-id'], TWITCH_APP.clientId);
      assert.equal(post.thread[0].releaseId, `announcement:${post.thread[0].id}`);
      const follow = fake.calls('POST /helix/chat/messages').at(-1)!;
      assert.deepEqual(follow.json, { broadcaster_id: TWITCH_USER.id, sender_id: TWITCH_USER.id, message: 'details below' });
      assert.deepEqual(
        fake.lines.slice(-2).map((l) => [l.kind, l.text]),
        [
          ['announcement', 'Big news!'],
          ['message', 'details below'],
        ],
      );
    });

    it('refuses before acceptance a message over 500 characters, media, and an unknown colour', async () => {
      const png = await uploadPng(account, herald.api);
      const body = (value: unknown[], settings: Record<string, unknown> = { __type: 'twitch' }) => ({
        type: 'now',
        date: new Date().toISOString(),
        shortLink: false,
        tags: [],
        posts: [{ integration: { id: channelId }, value, settings }],
      });
      const before = fake.calls('POST /helix/chat/messages').length;
      const long = await account.callUntyped('POST', '/posts', body([{ content: 'x'.repeat(501), image: [] }]));
      assert.equal(long.status, 400, JSON.stringify(long.body));
      assert.deepEqual(
        long.body.errors.map((e: { path: string }) => e.path),
        ['posts.0.value.0.content'],
      );
      assert.match(long.body.errors[0].message, /501 characters.*at most 500/);
      const withMedia = await account.callUntyped('POST', '/posts', body([{ content: 'look', image: [{ id: png.id, path: png.path }] }]));
      assert.equal(withMedia.status, 400);
      assert.equal(withMedia.body.errors[0].path, 'posts.0.value.0.image');
      const colour = await account.callUntyped('POST', '/posts', body([{ content: 'hi', image: [] }], { ...ANNOUNCE, announcementColor: 'red' }));
      assert.equal(colour.status, 400);
      assert.equal(colour.body.errors[0].path, 'posts.0.settings.announcementColor');
      assert.equal(fake.calls('POST /helix/chat/messages').length, before);
    });

    it('fails with the drop reason when chat does not deliver the message (is_sent false)', async () => {
      fake.dropNext({ code: 'msg_duplicate', message: 'Your message is identical to the one you sent within the last 30 seconds.' });
      const count = fake.lines.length;
      const post = await settled(account, await publishNow(account, channelId, ['Going live at 8 Kappa']));
      assert.equal(post.state, 'ERROR');
      assert.equal(
        post.error,
        'Twitch: the chat did not deliver the message: Your message is identical to the one you sent within the last 30 seconds. (msg_duplicate)',
      );
      assert.equal(post.thread[0].attempts.length, 1);
      assert.equal(fake.lines.length, count);
    });

    it('fails with Twitch’s message when it forbids the announcement (403)', async () => {
      fake.failNext('POST /helix/chat/announcements', {
        status: 403,
        body: { error: 'Forbidden', status: 403, message: 'The user in moderator_id is not one of the broadcaster’s moderators' },
      });
      const post = await settled(account, await publishNow(account, channelId, ['mods only'], ANNOUNCE));
      assert.equal(post.state, 'ERROR');
      assert.equal(post.error, 'Twitch answered 403: The user in moderator_id is not one of the broadcaster’s moderators');
      assert.equal(post.thread[0].attempts.length, 1);
    });

    it('waits until Ratelimit-Reset after a 429 and then sends once', async () => {
      const reset = Math.ceil(Date.now() / 1000) + 3;
      fake.failNext('POST /helix/chat/messages', {
        status: 429,
        headers: { 'ratelimit-limit': '800', 'ratelimit-remaining': '0', 'ratelimit-reset': String(reset) },
        body: { error: 'Too Many Requests', status: 429, message: 'Too Many Requests' },
      });
      const count = fake.lines.length;
      const post = await settled(account, await publishNow(account, channelId, ['after the limit']));
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      assert.deepEqual(
        post.thread[0].attempts.map((a) => a.outcome),
        ['retry', 'published'],
      );
      const sent = fake.calls('POST /helix/chat/messages').at(-1)!;
      assert.ok(sent.at >= reset * 1000 - 50, `sent ${reset * 1000 - sent.at} ms before the bucket refilled`);
      assert.equal(fake.lines.length, count + 1);
    });

    it('an announcement sent within 2 s of another is retried after the reset Twitch gives', async () => {
      const first = await publishNow(account, channelId, ['one'], ANNOUNCE);
      const second = await publishNow(account, channelId, ['two'], ANNOUNCE);
      const [a, b] = [await settled(account, first), await settled(account, second)];
      assert.equal(a.state, 'PUBLISHED', a.error ?? '');
      assert.equal(b.state, 'PUBLISHED', b.error ?? '');
      const announcements = fake.lines.filter((l) => l.kind === 'announcement').slice(-2);
      assert.deepEqual(announcements.map((l) => l.text).sort(), ['one', 'two']);
      assert.ok(announcements[1].at - announcements[0].at >= 1_000, 'the second waited for the limit');
      const outcomes = [a, b].map((p) => p.thread[0].attempts.map((x) => x.outcome).join(',')).sort();
      assert.deepEqual(outcomes, ['published', 'retry,published']);
    });

    it('does not send again after a server error once the message may be out; the user checks the chat', async () => {
      const count = fake.calls('POST /helix/chat/messages').length;
      fake.failNext('POST /helix/chat/messages', { handleFirst: true, status: 502, body: { error: 'Bad Gateway', status: 502, message: '' } });
      const post = await settled(account, await publishNow(account, channelId, ['maybe out']));
      assert.equal(post.state, 'ERROR');
      assert.match(post.error!, /Twitch answered 502.*may have been published/);
      assert.deepEqual(
        post.thread[0].attempts.map((a) => a.outcome),
        ['unknown'],
      );
      assert.equal(fake.calls('POST /helix/chat/messages').length, count + 1, 'sent once');
      assert.equal(fake.lines.at(-1)!.text, 'maybe out');
    });

    serverErrorAfterCreate(() => ({
      fake,
      account,
      publish: (text) => publishNow(account, channelId, [text]),
      held: (text) => fake.lines.filter((l) => l.text === text).length,
    }));

    it('refreshes an expired token, storing the rotated refresh token, and sends with the new one', async () => {
      for (const round of [1, 2]) {
        const oldAccess = fake.accessToken();
        const oldRefresh = fake.refreshToken();
        fake.expireAccessToken();
        const post = await settled(account, await publishNow(account, channelId, [`fresh token ${round}`]));
        assert.equal(post.state, 'PUBLISHED', post.error ?? '');
        const refresh = fake.calls('POST /oauth2/token').at(-1)!;
        assert.deepEqual(refresh.form, {
          grant_type: 'refresh_token',
          refresh_token: oldRefresh,
          client_id: TWITCH_APP.clientId,
          client_secret: TWITCH_APP.clientSecret,
        });
        const [failed, sent] = fake.calls('POST /helix/chat/messages').slice(-2);
        assert.equal(failed.headers.authorization, `Bearer ${oldAccess}`);
        assert.equal(sent.headers.authorization, `Bearer ${fake.accessToken()}`);
      }
    });

    it('marks the channel for reconnection when Twitch refuses the refresh token (app disconnected)', async () => {
      fake.revokeAll();
      const post = await settled(account, await publishNow(account, channelId, ['revoked']));
      assert.equal(post.state, 'ERROR');
      assert.match(post.error!, /must be reconnected/);
      assert.match(post.error!, /Invalid refresh token/);
      assert.equal((await channelView(account, channelId)).needsReconnect, true);
    });

    it("validates the token as Twitch's policy asks, at once and hourly; a lapsed one is renewed, a revoked one asks for a reconnect", async () => {
      const again = await connectOAuth(herald, account, 'twitch');
      assert.equal(again.id, channelId, 'connecting again takes up the same channel');
      assert.equal((await channelView(account, channelId)).needsReconnect, false);
      const checks = herald.engine!.tokenChecks;
      const validations = () => fake.calls('GET /oauth2/validate');
      const from = validations().length;
      const now = Date.now();
      const hour = 60 * 60_000;

      await checks.run(now);
      assert.equal(validations().length, from + 1, 'checked once the engine looks');
      assert.equal(validations().at(-1)!.headers.authorization, `OAuth ${fake.accessToken()}`);
      await checks.run(now + hour / 2);
      assert.equal(validations().length, from + 1, 'not again within the hour');
      await checks.run(now + hour);
      assert.equal(validations().length, from + 2, 'again an hour later');

      // A token that lapsed: renewed with the refresh token, and the new one validated.
      const lapsed = fake.accessToken();
      fake.expireAccessToken();
      await checks.run(now + 2 * hour);
      assert.notEqual(fake.accessToken(), lapsed);
      assert.deepEqual(
        validations()
          .slice(-2)
          .map((r) => r.headers.authorization),
        [`OAuth ${lapsed}`, `OAuth ${fake.accessToken()}`],
      );
      assert.equal((await channelView(account, channelId)).needsReconnect, false);

      // The user disconnected the app: the channel waits for a reconnect, found before any post fails.
      fake.revokeAll();
      await checks.run(now + 3 * hour);
      const channel = await channelView(account, channelId);
      assert.equal(channel.needsReconnect, true);
    });
  });
}
