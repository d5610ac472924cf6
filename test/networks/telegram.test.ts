import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startHerald, type TestAccount, type TestHerald } from '../helpers/herald.ts';
import { testStores, storeSuite } from '../helpers/stores.ts';
import { fail, startTelegramFake, type TelegramFake } from '../fakes/telegram.ts';
import { channelView, publishNow, settled, uploadPng } from './publish.ts';
import { uploadMp4 } from './support.ts';
import { serverErrorAfterCreate } from './create-5xx.ts';
import { teardown } from '../helpers/teardown.ts';

const CHANNEL_ID = -1001234567890;

for (const store of await testStores()) {
  describe(`telegram (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let fake: TelegramFake;
    let account: TestAccount;
    let channelId: string;

    before(async () => {
      fake = await startTelegramFake();
      fake.addChat({
        id: CHANNEL_ID,
        type: 'channel',
        title: 'Herald News',
        username: 'heraldnews',
        bot: { status: 'administrator', can_post_messages: true },
      });
      fake.addChat({ id: -1009876543210, type: 'channel', title: 'Read only', username: 'readonlynews', bot: { status: 'member' } });
      // A publish whose answer never comes is given up after 4 s (its outcome then unknown).
      herald = await startHerald(store, { engine: { pollMs: 50, publishTimeoutMs: 4_000 }, env: { HERALD_TELEGRAM_API_URL: fake.url } });
      account = await herald.newAccount();
    });
    after(() =>
      teardown(
        () => herald?.close(),
        () => fake?.close(),
      ),
    );

    it('connects with a bot token and a @channel, checked with getMe, getChat and getChatMember', async () => {
      const added = await account.call('POST', '/integrations', { identifier: 'telegram', credentials: { botToken: fake.bot.token, chat: '@heraldnews' } });
      assert.equal(added.status, 201, JSON.stringify(added.body));
      channelId = added.body.id;
      assert.equal(added.body.name, 'Herald News');
      assert.equal(added.body.identifier, 'telegram');
      const paths = fake.requests.map((r) => `${r.method} ${r.path}`);
      assert.deepEqual(paths, [`POST /bot${fake.bot.token}/getMe`, `POST /bot${fake.bot.token}/getChat`, `POST /bot${fake.bot.token}/getChatMember`]);
      assert.deepEqual(fake.requests[1].json, { chat_id: '@heraldnews' });
      assert.deepEqual(fake.requests[2].json, { chat_id: CHANNEL_ID, user_id: fake.bot.id });
      // The token is a secret: never in what the API shows.
      assert.doesNotMatch(JSON.stringify((await account.call('GET', '/integrations')).body), /AAHdqTcv/);
    });

    it('refuses a wrong token and a chat where the bot may not post, naming the field', async () => {
      const wrong = await account.call('POST', '/integrations', {
        identifier: 'telegram',
        credentials: { botToken: '7000001:AAwrongwrongwrongwrongwrongwrong', chat: '@heraldnews' },
      });
      assert.equal(wrong.status, 400, JSON.stringify(wrong.body));
      assert.equal(wrong.body.errors[0].path, 'credentials');
      assert.match(wrong.body.message, /401: Unauthorized/);
      const readOnly = await account.call('POST', '/integrations', {
        identifier: 'telegram',
        credentials: { botToken: fake.bot.token, chat: '@readonlynews' },
      });
      assert.equal(readOnly.status, 400, JSON.stringify(readOnly.body));
      assert.match(readOnly.body.message, /must be an administrator allowed to post messages/);
      const malformed = await account.call('POST', '/integrations', { identifier: 'telegram', credentials: { botToken: 'nope', chat: 'not a chat' } });
      assert.equal(malformed.status, 400);
      assert.deepEqual(malformed.body.errors.map((e: { path: string }) => e.path).sort(), ['credentials.botToken', 'credentials.chat']);
    });

    it('publishes text with sendMessage and links the message on t.me', async () => {
      const postId = await publishNow(account, channelId, ['Hello <b>Telegram</b> & friends']);
      const post = await settled(account, postId);
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      const [sent] = fake.calls('POST /bot:token/sendMessage');
      assert.equal(sent.path, `/bot${fake.bot.token}/sendMessage`);
      assert.match(sent.headers['content-type'] ?? '', /application\/json/);
      assert.deepEqual(sent.json, { chat_id: String(CHANNEL_ID), text: 'Hello <b>Telegram</b> & friends' });
      const stored = fake.messages.at(-1)!;
      assert.equal(post.releaseId, String(stored.message_id));
      assert.equal(post.releaseURL, `https://t.me/heraldnews/${stored.message_id}`);
    });

    it('uploads one image with sendPhoto and two as an album with sendMediaGroup', async () => {
      const a = await uploadPng(account, herald.api, 'a.png');
      const b = await uploadPng(account, herald.api, 'b.png');
      const single = await settled(account, await publishNow(account, channelId, [{ content: 'One photo', image: [{ id: a.id, path: a.path }] }]));
      assert.equal(single.state, 'PUBLISHED', single.error ?? '');
      const [photo] = fake.calls('POST /bot:token/sendPhoto');
      assert.equal(photo.multipart?.fields.chat_id, String(CHANNEL_ID));
      assert.equal(photo.multipart?.fields.caption, 'One photo');
      assert.equal(photo.multipart?.files.length, 1);
      assert.equal(photo.multipart?.files[0].name, 'photo');
      assert.equal(photo.multipart?.files[0].type, 'image/png');
      assert.deepEqual(photo.multipart?.files[0].data, a.bytes);

      const album = await settled(
        account,
        await publishNow(account, channelId, [
          {
            content: 'Two photos',
            image: [
              { id: a.id, path: a.path },
              { id: b.id, path: b.path },
            ],
          },
        ]),
      );
      assert.equal(album.state, 'PUBLISHED', album.error ?? '');
      const [group] = fake.calls('POST /bot:token/sendMediaGroup');
      assert.deepEqual(JSON.parse(group.multipart!.fields.media), [
        { type: 'photo', media: 'attach://file0', caption: 'Two photos' },
        { type: 'photo', media: 'attach://file1' },
      ]);
      assert.deepEqual(
        group.multipart!.files.map((f) => f.name),
        ['file0', 'file1'],
      );
      const first = fake.messages.filter((m) => m.media_group_id).at(0)!;
      assert.equal(album.releaseId, String(first.message_id), 'the album is known by its first message');
    });

    it('uploads a video with sendVideo, streamable', async () => {
      const clip = await uploadMp4(account, herald, 4096);
      const post = await settled(account, await publishNow(account, channelId, [{ content: 'A clip', image: [{ id: clip.id, path: clip.path }] }]));
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      const [video] = fake.calls('POST /bot:token/sendVideo');
      assert.equal(video.multipart?.fields.caption, 'A clip');
      assert.equal(video.multipart?.fields.supports_streaming, 'true');
      assert.equal(video.multipart?.files[0].name, 'video');
      assert.equal(video.multipart?.files[0].type, 'video/mp4');
      assert.deepEqual(video.multipart?.files[0].data, clip.bytes);
    });

    it('sends a caption too long for media as a reply to the media', async () => {
      const a = await uploadPng(account, herald.api);
      const long = 'x'.repeat(1500);
      const before = fake.calls('POST /bot:token/sendMessage').length;
      const post = await settled(account, await publishNow(account, channelId, [{ content: long, image: [{ id: a.id, path: a.path }] }]));
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      const photo = fake.calls('POST /bot:token/sendPhoto').at(-1)!;
      assert.equal(photo.multipart?.fields.caption, undefined);
      const text = fake.calls('POST /bot:token/sendMessage')[before];
      assert.equal(text.json.text, long);
      assert.deepEqual(text.json.reply_parameters, { message_id: Number(post.releaseId) });
    });

    it('publishes a thread as replies to the previous message', async () => {
      const post = await settled(
        account,
        await publishNow(account, channelId, ['Thread start', { content: 'second', delay: 0 }, { content: 'third', delay: 0 }]),
      );
      assert.deepEqual(
        post.thread.map((t) => t.state),
        ['PUBLISHED', 'PUBLISHED', 'PUBLISHED'],
      );
      const sent = fake.calls('POST /bot:token/sendMessage').slice(-3);
      assert.equal(sent[0].json.reply_parameters, undefined);
      assert.deepEqual(sent[1].json.reply_parameters, { message_id: Number(post.thread[0].releaseId) });
      assert.deepEqual(sent[2].json.reply_parameters, { message_id: Number(post.thread[1].releaseId) });
    });

    it('a message whose answer never comes is not sent again (Telegram would post it twice): ERROR telling the user to check', async () => {
      const before = fake.messages.length;
      fake.failNext('POST /bot:token/sendMessage', { handleThenHang: true });
      const post = await settled(account, await publishNow(account, channelId, ['Sent, never confirmed']), 30_000);
      assert.equal(post.state, 'ERROR');
      assert.match(post.error ?? '', /may have been published.*[Cc]heck/);
      assert.equal(fake.messages.length, before + 1, 'the one message Telegram took');
      assert.equal(fake.calls('POST /bot:token/sendMessage').filter((c) => c.json.text === 'Sent, never confirmed').length, 1, 'sent once');
    });

    it('a gateway error after Telegram took the message is an unknown outcome, never a second message', async () => {
      const before = fake.messages.length;
      fake.failNext('POST /bot:token/sendMessage', {
        handleFirst: true,
        status: 502,
        body: '<html><body>502 Bad Gateway</body></html>',
        headers: { 'content-type': 'text/html' },
      });
      const post = await settled(account, await publishNow(account, channelId, ['Taken, then a 502']), 30_000);
      assert.equal(post.state, 'ERROR');
      assert.match(post.error ?? '', /Telegram answered 502.*may have been published.*[Cc]heck/);
      assert.deepEqual(
        post.thread[0].attempts.map((a) => a.outcome),
        ['unknown'],
      );
      assert.equal(fake.messages.length, before + 1, 'the one message Telegram took');
    });

    serverErrorAfterCreate(() => ({
      fake,
      account,
      publish: (text) => publishNow(account, channelId, [text]),
      held: (text) => fake.messages.filter((m) => m.text === text).length,
    }));

    it("fails a refused post with Telegram's own description, without retrying", async () => {
      fake.failNext('POST /bot:token/sendMessage', fail(400, 'Bad Request: need administrator rights in the channel chat'));
      const calls = fake.calls('POST /bot:token/sendMessage').length;
      const post = await settled(account, await publishNow(account, channelId, ['refused']));
      assert.equal(post.state, 'ERROR');
      assert.match(post.error!, /Telegram answered 400: Bad Request: need administrator rights in the channel chat/);
      assert.equal(fake.calls('POST /bot:token/sendMessage').length, calls + 1);
    });

    it('waits parameters.retry_after on 429 and publishes once', async () => {
      fake.failNext('POST /bot:token/sendMessage', fail(429, 'Too Many Requests: retry after 1', { retry_after: 1 }));
      const count = fake.messages.length;
      const post = await settled(account, await publishNow(account, channelId, ['after the flood wait']));
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      assert.deepEqual(
        post.thread[0].attempts.map((a) => a.outcome),
        ['retry', 'published'],
      );
      assert.match(post.thread[0].attempts[0].detail!, /Too Many Requests/);
      assert.equal(fake.messages.length, count + 1, 'published exactly once');
      const [limited, sent] = fake.calls('POST /bot:token/sendMessage').slice(-2);
      assert.ok(sent.at - limited.at >= 1000, 'the retry came after retry_after');
    });

    it('marks the channel for reconnection when the bot token is revoked', async () => {
      fake.revokeToken();
      const post = await settled(account, await publishNow(account, channelId, ['after revoke']));
      assert.equal(post.state, 'ERROR');
      assert.match(post.error!, /must be reconnected: Telegram answered 401: Unauthorized/);
      assert.equal((await channelView(account, channelId)).needsReconnect, true);
    });
  });
}
