import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startHerald, type TestAccount, type TestHerald } from '../helpers/herald.ts';
import { testStores, storeSuite } from '../helpers/stores.ts';
import { connectOAuth } from '../helpers/connect.ts';
import { entry, postBody } from '../helpers/api-fixtures.ts';
import { startDiscordFake, type DiscordFake } from '../fakes/discord.ts';
import { channelView, publishNow, settled, uploadPng } from './publish.ts';
import { serverErrorAfterCreate } from './create-5xx.ts';
import { teardown } from '../helpers/teardown.ts';

const GUILD = '900000000000000001';
const GENERAL = '900000000000000010';
const OTHER_GUILD_CHANNEL = '900000000000000099';

for (const store of await testStores()) {
  describe(`discord (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let fake: DiscordFake;
    let account: TestAccount;
    let channelId: string;
    const inGeneral = { __type: 'discord', channel: GENERAL };

    before(async () => {
      fake = await startDiscordFake();
      fake.guilds.push(
        {
          id: GUILD,
          name: 'Herald Friends',
          icon: 'a1b2c3',
          channels: [
            { id: '900000000000000011', name: 'Text channels', type: 4, position: 0 },
            { id: '900000000000000012', name: 'announcements', type: 5, position: 2 },
            { id: GENERAL, name: 'general', type: 0, position: 1 },
            { id: '900000000000000013', name: 'Voice', type: 2, position: 3 },
          ],
        },
        { id: '900000000000000002', name: 'Someone else', icon: null, channels: [{ id: OTHER_GUILD_CHANNEL, name: 'private', type: 0, position: 0 }] },
      );
      fake.installInto = GUILD;
      herald = await startHerald(store, {
        // A publish whose answer never comes is given up after 2 s (its outcome then unknown).
        engine: { pollMs: 50, publishTimeoutMs: 2_000 },
        env: {
          HERALD_DISCORD_CLIENT_ID: fake.app.clientId,
          HERALD_DISCORD_CLIENT_SECRET: fake.app.clientSecret,
          HERALD_DISCORD_BOT_TOKEN: fake.app.botToken,
          HERALD_DISCORD_API_URL: `${fake.url}/api/v10`,
          HERALD_DISCORD_AUTHORIZE_URL: `${fake.url}/oauth2/authorize`,
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

    it('connects through the bot install flow and names the server', async () => {
      const connected = await connectOAuth(herald, account, 'discord');
      channelId = connected.id;
      assert.equal(connected.name, 'Herald Friends');
      const consent = fake.state.authorize;
      assert.equal(consent.client_id, fake.app.clientId);
      assert.equal(consent.scope, 'bot');
      assert.equal(consent.response_type, 'code');
      assert.equal(consent.redirect_uri, `${herald.url}/connect/discord/callback`);
      assert.equal(BigInt(consent.permissions) & (1n << 11n), 1n << 11n, 'asks to send messages');
      assert.equal(BigInt(consent.permissions) & (1n << 15n), 1n << 15n, 'asks to attach files');
      const [token] = fake.calls('POST /api/v10/oauth2/token');
      assert.equal(token.headers.authorization, `Basic ${Buffer.from(`${fake.app.clientId}:${fake.app.clientSecret}`).toString('base64')}`);
      assert.match(token.headers['content-type'] ?? '', /application\/x-www-form-urlencoded/);
      assert.equal(token.form?.grant_type, 'authorization_code');
      assert.equal(token.form?.redirect_uri, `${herald.url}/connect/discord/callback`);
      const [guild] = fake.calls('GET /api/v10/guilds/:id');
      assert.equal(guild.path, `/api/v10/guilds/${GUILD}`);
      assert.equal(guild.headers.authorization, `Bot ${fake.app.botToken}`);
      assert.match(guild.headers['user-agent'] ?? '', /^DiscordBot \(/);
      const list = await account.callUntyped('GET', '/integrations');
      assert.equal(list.body[0].picture, `https://cdn.discordapp.com/icons/${GUILD}/a1b2c3.png`);
    });

    it("lists the server's text channels with the channels tool and requires the channel setting", async () => {
      const listed = await account.callUntyped('POST', `/integration-trigger/${channelId}`, { methodName: 'channels' });
      assert.equal(listed.status, 200, JSON.stringify(listed.body));
      assert.deepEqual(listed.body.output, [
        { id: GENERAL, name: 'general' },
        { id: '900000000000000012', name: 'announcements' },
      ]);
      const settings = await account.callUntyped('GET', `/integration-settings/${channelId}`);
      assert.deepEqual(settings.body.output.settings.required, ['channel']);
      const missing = await account.callUntyped('POST', '/posts', postBody('now', [entry(channelId, ['no channel'])], { date: new Date().toISOString() }));
      assert.equal(missing.status, 400);
      assert.equal(missing.body.errors[0].path, 'posts.0.settings.channel');
    });

    it('publishes text as JSON with a nonce and links the message', async () => {
      const post = await settled(account, await publishNow(account, channelId, ['Hello Discord'], inGeneral));
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      const [check] = fake.calls('GET /api/v10/channels/:id');
      assert.equal(check.params.id, GENERAL);
      const [sent] = fake.calls('POST /api/v10/channels/:id/messages');
      assert.equal(sent.path, `/api/v10/channels/${GENERAL}/messages`);
      assert.equal(sent.headers.authorization, `Bot ${fake.app.botToken}`);
      assert.equal(sent.json.content, 'Hello Discord');
      assert.equal(sent.json.enforce_nonce, true);
      assert.match(sent.json.nonce, /^[A-Za-z0-9_-]{25}$/);
      const message = fake.messages.at(-1)!;
      assert.equal(post.releaseId, message.id);
      assert.equal(post.releaseURL, `https://discord.com/channels/${GUILD}/${GENERAL}/${message.id}`);
    });

    it('when the answer never comes, sends again with the same nonce: Discord returns the first message, and there is one', async () => {
      const before = fake.messages.length;
      fake.failNext('POST /api/v10/channels/:id/messages', { handleThenHang: true });
      const post = await settled(account, await publishNow(account, channelId, ['Did this arrive?'], inGeneral), 30_000);
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      assert.deepEqual(
        post.thread[0].attempts.map((a) => a.outcome),
        ['unknown', 'published'],
      );
      assert.equal(fake.messages.length, before + 1, 'one message, not two');
      const [first, second] = fake.calls('POST /api/v10/channels/:id/messages').slice(-2);
      assert.equal(second.json.nonce, first.json.nonce, 'the repeat carries the same nonce');
      assert.equal(post.releaseId, fake.messages.at(-1)!.id);
    });

    it('refuses a channel of another server (the bot is shared) without posting there', async () => {
      const count = fake.messages.length;
      const post = await settled(account, await publishNow(account, channelId, ['sneaky'], { __type: 'discord', channel: OTHER_GUILD_CHANNEL }));
      assert.equal(post.state, 'ERROR');
      assert.match(post.error!, /not in the connected Discord server/);
      assert.equal(fake.messages.length, count);
    });

    it('uploads media as multipart with payload_json and files[n]', async () => {
      const a = await uploadPng(account, herald.api, 'a.png');
      const b = await uploadPng(account, herald.api, 'b.png');
      const post = await settled(
        account,
        await publishNow(
          account,
          channelId,
          [
            {
              content: 'Two pictures',
              image: [
                { id: a.id, path: a.path },
                { id: b.id, path: b.path },
              ],
            },
          ],
          inGeneral,
        ),
      );
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      const sent = fake.calls('POST /api/v10/channels/:id/messages').at(-1)!;
      assert.match(sent.headers['content-type'] ?? '', /^multipart\/form-data; boundary=/);
      const payloadPart = sent.multipart!.files.find((f) => f.name === 'payload_json')!;
      assert.equal(payloadPart.type, 'application/json');
      const payload = JSON.parse(payloadPart.data.toString('utf8'));
      assert.equal(payload.content, 'Two pictures');
      assert.deepEqual(
        payload.attachments.map((x: { id: number }) => x.id),
        [0, 1],
      );
      const files = sent.multipart!.files.filter((f) => f.name.startsWith('files['));
      assert.deepEqual(
        files.map((f) => f.name),
        ['files[0]', 'files[1]'],
      );
      assert.deepEqual(
        files.map((f) => f.filename),
        payload.attachments.map((x: { filename: string }) => x.filename),
      );
      assert.deepEqual(files[0].data, a.bytes);
      assert.equal(fake.messages.at(-1)!.attachments.length, 2);
    });

    it('publishes a thread as replies (message_reference) to the previous message', async () => {
      const post = await settled(account, await publishNow(account, channelId, ['first', { content: 'second', delay: 0 }], inGeneral));
      assert.deepEqual(
        post.thread.map((t) => t.state),
        ['PUBLISHED', 'PUBLISHED'],
      );
      const [first, second] = fake.calls('POST /api/v10/channels/:id/messages').slice(-2);
      assert.equal(first.json.message_reference, undefined);
      assert.deepEqual(second.json.message_reference, { message_id: post.thread[0].releaseId, channel_id: GENERAL, fail_if_not_exists: true });
      assert.equal(fake.messages.at(-1)!.reference, post.thread[0].releaseId);
    });

    it("fails a refused post with Discord's message and code", async () => {
      fake.failNext('POST /api/v10/channels/:id/messages', { status: 403, body: { message: 'Missing Permissions', code: 50013 } });
      const post = await settled(account, await publishNow(account, channelId, ['no rights'], inGeneral));
      assert.equal(post.state, 'ERROR');
      assert.match(post.error!, /Discord answered 403: \(code 50013\) Missing Permissions/);
      assert.equal(post.thread[0].attempts.length, 1);
    });

    it('a channel hidden from the bot fails that post with what to fix, and leaves the channel connected', async () => {
      const hidden = '900000000000000014';
      fake.guilds[0]!.channels.push({ id: hidden, name: 'staff', type: 0, position: 4, hidden: true });
      const post = await settled(account, await publishNow(account, channelId, ['into the staff room'], { __type: 'discord', channel: hidden }));
      assert.equal(post.state, 'ERROR');
      assert.match(post.error!, /cannot use the channel 900000000000000014 .*View Channel and Send Messages/);
      assert.equal((await channelView(account, channelId)).needsReconnect, false, 'the other channels of the server still work');
      const after = await settled(account, await publishNow(account, channelId, ['still here'], inGeneral));
      assert.equal(after.state, 'PUBLISHED', after.error ?? '');
    });

    it('does not notify @everyone unless the post asks to', async () => {
      const quiet = await settled(account, await publishNow(account, channelId, ['@everyone doors open at eight'], inGeneral));
      assert.equal(quiet.state, 'PUBLISHED', quiet.error ?? '');
      assert.equal(fake.messages.at(-1)!.mentionEveryone, false);
      const loud = await settled(account, await publishNow(account, channelId, ['@everyone doors open now'], { ...inGeneral, mentionEveryone: true }));
      assert.equal(loud.state, 'PUBLISHED', loud.error ?? '');
      assert.equal(fake.messages.at(-1)!.mentionEveryone, true);
    });

    it('a bot removed from the server marks the channel for reconnection', async () => {
      fake.guilds[0]!.botRemoved = true;
      try {
        const post = await settled(account, await publishNow(account, channelId, ['after the kick'], inGeneral));
        assert.equal(post.state, 'ERROR');
        assert.match(post.error!, /Missing Access.*Add the Herald bot to the server again/);
        assert.equal((await channelView(account, channelId)).needsReconnect, true);
      } finally {
        fake.guilds[0]!.botRemoved = false;
        await herald.services.store.db.updateTable('channels').set({ needs_reconnect: 0 }).where('id', '=', channelId).execute();
      }
    });

    it('honours retry_after of a 429 and publishes once', async () => {
      fake.failNext('POST /api/v10/channels/:id/messages', {
        status: 429,
        headers: {
          'retry-after': '1',
          'x-ratelimit-limit': '5',
          'x-ratelimit-remaining': '0',
          'x-ratelimit-reset-after': '0.9',
          'x-ratelimit-scope': 'user',
          'x-ratelimit-bucket': 'abcd',
        },
        body: { message: 'You are being rate limited.', retry_after: 0.9, global: false },
      });
      const count = fake.messages.length;
      const post = await settled(account, await publishNow(account, channelId, ['after the limit'], inGeneral));
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      assert.deepEqual(
        post.thread[0].attempts.map((a) => a.outcome),
        ['retry', 'published'],
      );
      assert.match(post.thread[0].attempts[0].detail!, /You are being rate limited/);
      assert.equal(fake.messages.length, count + 1);
    });

    serverErrorAfterCreate(() => ({
      fake,
      account,
      publish: (text) => publishNow(account, channelId, [text], inGeneral),
      held: (text) => fake.messages.filter((m) => m.content === text).length,
    }));

    it('marks the channel for reconnection when Discord no longer accepts the bot token', async () => {
      fake.resetBotToken();
      const post = await settled(account, await publishNow(account, channelId, ['token reset'], inGeneral));
      assert.equal(post.state, 'ERROR');
      assert.match(post.error!, /must be reconnected: Discord answered 401/);
      assert.equal((await channelView(account, channelId)).needsReconnect, true);
    });
  });
}
