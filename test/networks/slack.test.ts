import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { eventually, startHerald, type TestAccount, type TestHerald } from '../helpers/herald.ts';
import { testStores, storeSuite } from '../helpers/stores.ts';
import { connectOAuth } from '../helpers/connect.ts';
import { startSlackFake, type SlackFake } from '../fakes/slack.ts';
import { channelView, publishNow, settled, uploadPng } from './publish.ts';
import { serverErrorAfterCreate } from './create-5xx.ts';
import { teardown } from '../helpers/teardown.ts';

const GENERAL = 'C0GENERAL1';

for (const store of await testStores()) {
  describe(`slack (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let fake: SlackFake;
    let account: TestAccount;
    let channelId: string;
    const inGeneral = { __type: 'slack', channel: GENERAL };

    before(async () => {
      fake = await startSlackFake();
      fake.channels.push(
        { id: GENERAL, name: 'general', is_private: false, is_archived: false, is_member: true },
        { id: 'C0RANDOM01', name: 'random', is_private: false, is_archived: false, is_member: false },
        { id: 'C0OLDSTUFF', name: 'old-stuff', is_private: false, is_archived: true, is_member: false },
        { id: 'G0SECRET01', name: 'secret', is_private: true, is_archived: false, is_member: true },
        { id: 'G0HIDDEN01', name: 'hidden', is_private: true, is_archived: false, is_member: false },
      );
      herald = await startHerald(store, {
        engine: { pollMs: 50, followUpEveryMs: 200 },
        env: {
          HERALD_SLACK_CLIENT_ID: fake.app.clientId,
          HERALD_SLACK_CLIENT_SECRET: fake.app.clientSecret,
          HERALD_SLACK_API_URL: `${fake.url}/api`,
          HERALD_SLACK_AUTHORIZE_URL: `${fake.url}/oauth/v2/authorize`,
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

    it('connects through OAuth v2 (oauth.v2.access, then auth.test with the bot token)', async () => {
      const connected = await connectOAuth(herald, account, 'slack');
      channelId = connected.id;
      assert.equal(connected.name, 'Herald Team');
      const consent = fake.state.authorize;
      assert.equal(consent.client_id, fake.app.clientId);
      assert.deepEqual(consent.scope.split(',').sort(), [
        'channels:join',
        'channels:read',
        'chat:write',
        'chat:write.public',
        'files:read',
        'files:write',
        'groups:read',
      ]);
      assert.equal(consent.redirect_uri, `${herald.url}/connect/slack/callback`);
      const [exchange] = fake.calls('POST /api/oauth.v2.access');
      assert.equal(exchange.headers.authorization, `Basic ${Buffer.from(`${fake.app.clientId}:${fake.app.clientSecret}`).toString('base64')}`);
      assert.deepEqual(exchange.form, { grant_type: 'authorization_code', code: 'slack-code-1', redirect_uri: `${herald.url}/connect/slack/callback` });
      const [check] = fake.calls('POST /api/auth.test');
      assert.equal(check.headers.authorization, `Bearer ${fake.accessToken()}`);
      assert.equal((await channelView(account, channelId)).identifier, 'slack');
    });

    it('lists the channels the app can post to with the channels tool, across pages', async () => {
      const listed = await account.callUntyped('POST', `/integration-trigger/${channelId}`, { methodName: 'channels' });
      assert.equal(listed.status, 200, JSON.stringify(listed.body));
      assert.deepEqual(listed.body.output, [
        { id: GENERAL, name: 'general' },
        { id: 'C0RANDOM01', name: 'random' },
        { id: 'G0SECRET01', name: 'secret' },
      ]);
      const [first] = fake.calls('GET /api/conversations.list');
      assert.equal(first.query.types, 'public_channel,private_channel');
      assert.equal(first.query.exclude_archived, 'true');
    });

    it('posts text with chat.postMessage, escaped for mrkdwn, with a permalink', async () => {
      const post = await settled(account, await publishNow(account, channelId, ['Ship it <now> & later'], inGeneral));
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      const [sent] = fake.calls('POST /api/chat.postMessage');
      assert.equal(sent.headers.authorization, `Bearer ${fake.accessToken()}`);
      assert.match(sent.headers['content-type'] ?? '', /^application\/json; charset=utf-8/);
      assert.deepEqual(sent.json, { channel: GENERAL, text: 'Ship it &lt;now&gt; &amp; later' });
      const message = fake.messages.at(-1)!;
      assert.equal(post.releaseId, message.ts);
      assert.equal(post.releaseURL, `https://herald-team.slack.com/archives/${GENERAL}/p${message.ts.replace('.', '')}`);
    });

    it('uploads media with getUploadURLExternal, the bytes, and completeUploadExternal', async () => {
      const a = await uploadPng(account, herald.api, 'a.png');
      const post = await settled(
        account,
        await publishNow(account, channelId, [{ content: 'With a picture', image: [{ id: a.id, path: a.path }] }], inGeneral),
      );
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      const [ask] = fake.calls('POST /api/files.getUploadURLExternal');
      assert.match(ask.headers['content-type'] ?? '', /application\/x-www-form-urlencoded/);
      assert.equal(ask.form?.length, String(a.bytes.length));
      assert.match(ask.form?.filename ?? '', /\.png$/);
      const [bytes] = fake.calls('POST /upload/v1/:id');
      assert.deepEqual(bytes.raw, a.bytes);
      const [complete] = fake.calls('POST /api/files.completeUploadExternal');
      const fileId = bytes.params.id;
      assert.deepEqual(complete.json, { files: [{ id: fileId }], channel_id: GENERAL, initial_comment: 'With a picture' });
      const message = fake.messages.at(-1)!;
      assert.deepEqual(message.files, [fileId]);
      assert.equal(post.releaseId, message.ts, 'the shared message is found through files.info');
      assert.ok(fake.calls('GET /api/files.info').length >= 1, "fake.calls('GET /api/files.info').length >= 1");
    });

    it("takes the message's timestamp from files.info later when Slack shows the share late, and a reply waits for it", async () => {
      const a = await uploadPng(account, herald.api, 'late.png');
      // Longer than the lookups made while publishing (about 8 s).
      fake.shareDelayMs = 10_000;
      const postId = await publishNow(
        account,
        channelId,
        [
          { content: 'Shared late', image: [{ id: a.id, path: a.path }] },
          { content: 'A reply', delay: 0 },
        ],
        inGeneral,
      );
      const post = await eventually(
        async () => {
          const r = await account.callUntyped('GET', `/posts/${postId}`);
          return r.body.thread.every((t: { state: string; releaseId?: string }) => t.state === 'PUBLISHED' && !String(t.releaseId).startsWith('file:'))
            ? r.body
            : undefined;
        },
        40_000,
        'the timestamp of the late share',
      );
      fake.shareDelayMs = 0;
      const shared = fake.messages.find((m) => m.text === 'Shared late')!;
      assert.equal(post.thread[0].releaseId, shared.ts);
      assert.match(post.thread[0].releaseURL, new RegExp(`/archives/${GENERAL}/p${shared.ts.replace('.', '')}$`));
      const reply = fake.messages.find((m) => m.text === 'A reply')!;
      assert.equal(reply.thread_ts, shared.ts, 'the reply is in the thread of the shared message');
      assert.equal(fake.messages.filter((m) => m.text === 'Shared late').length, 1, 'the message was sent once');
    });

    it('joins a public channel it was never in before sharing a picture there; a private one it is not in fails with the reason', async () => {
      const a = await uploadPng(account, herald.api, 'b.png');
      const post = await settled(
        account,
        await publishNow(account, channelId, [{ content: 'To random', image: [{ id: a.id, path: a.path }] }], { __type: 'slack', channel: 'C0RANDOM01' }),
      );
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      assert.equal(fake.calls('POST /api/conversations.join').at(-1)!.json.channel, 'C0RANDOM01');
      assert.equal(fake.messages.at(-1)!.channel, 'C0RANDOM01');
      const hidden = await settled(
        account,
        await publishNow(account, channelId, [{ content: 'To hidden', image: [{ id: a.id, path: a.path }] }], { __type: 'slack', channel: 'G0HIDDEN01' }),
      );
      assert.equal(hidden.state, 'ERROR');
      assert.match(hidden.error!, /files\.completeUploadExternal failed: not_in_channel/);
    });

    it('still shares files where the bot is a member when the install predates channels:join', async () => {
      const granted = fake.state.authorize.scope;
      fake.state.authorize.scope = 'chat:write,chat:write.public,files:write,files:read,channels:read,groups:read';
      try {
        const a = await uploadPng(account, herald.api, 'c.png');
        const post = await settled(account, await publishNow(account, channelId, [{ content: 'Old install', image: [{ id: a.id, path: a.path }] }], inGeneral));
        assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      } finally {
        fake.state.authorize.scope = granted;
      }
    });

    it('publishes a thread with thread_ts of the first message for every reply', async () => {
      const post = await settled(
        account,
        await publishNow(account, channelId, ['root', { content: 'reply one', delay: 0 }, { content: 'reply two', delay: 0 }], inGeneral),
      );
      assert.deepEqual(
        post.thread.map((t) => t.state),
        ['PUBLISHED', 'PUBLISHED', 'PUBLISHED'],
      );
      const [root, one, two] = fake.calls('POST /api/chat.postMessage').slice(-3);
      const rootTs = post.thread[0].releaseId!;
      assert.equal(root.json.thread_ts, undefined);
      assert.equal(one.json.thread_ts, rootTs);
      assert.equal(two.json.thread_ts, rootTs, 'a reply to a reply goes to the parent thread');
      assert.equal(post.thread[2].releaseId, `${rootTs}/${fake.messages.at(-1)!.ts}`);
      assert.match(post.thread[2].releaseURL!, new RegExp(`\\?thread_ts=${rootTs.replace('.', '\\.')}&cid=${GENERAL}$`));
    });

    it("fails a refused post with Slack's error code", async () => {
      const post = await settled(account, await publishNow(account, channelId, ['to nowhere'], { __type: 'slack', channel: 'C0MISSING1' }));
      assert.equal(post.state, 'ERROR');
      assert.match(post.error!, /Slack: chat\.postMessage failed: channel_not_found/);
      assert.equal(post.thread[0].attempts.length, 1);
    });

    it('waits Retry-After on ratelimited and posts once', async () => {
      fake.failNext('POST /api/chat.postMessage', { status: 429, headers: { 'retry-after': '1' }, body: { ok: false, error: 'ratelimited' } });
      const count = fake.messages.length;
      const post = await settled(account, await publishNow(account, channelId, ['after the limit'], inGeneral));
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      assert.deepEqual(
        post.thread[0].attempts.map((a) => a.outcome),
        ['retry', 'published'],
      );
      assert.equal(fake.messages.length, count + 1);
    });

    serverErrorAfterCreate(() => ({
      fake,
      account,
      publish: (text) => publishNow(account, channelId, [text], inGeneral),
      held: (text) => fake.messages.filter((m) => m.text === text).length,
    }));

    it('service_unavailable in an HTTP 200 answer after Slack posted the message is an unknown outcome, never a second message', async () => {
      fake.failNext('POST /api/chat.postMessage', { handleFirst: true, body: { ok: false, error: 'service_unavailable' } });
      const post = await settled(account, await publishNow(account, channelId, ['posted, then unavailable'], inGeneral));
      assert.equal(post.state, 'ERROR');
      assert.match(post.error ?? '', /Slack: chat\.postMessage failed: service_unavailable.*may have been published/);
      assert.deepEqual(
        post.thread[0].attempts.map((a) => a.outcome),
        ['unknown'],
      );
      assert.equal(fake.messages.filter((m) => m.text === 'posted, then unavailable').length, 1);
    });

    it('refreshes an expired rotating token and publishes with the new one', async () => {
      const old = fake.accessToken();
      fake.expireAccessToken();
      const post = await settled(account, await publishNow(account, channelId, ['fresh token'], inGeneral));
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      const refresh = fake.calls('POST /api/oauth.v2.access').at(-1)!;
      assert.equal(refresh.form?.grant_type, 'refresh_token');
      assert.equal(refresh.form?.refresh_token, 'xoxe-1-refresh-gen2');
      const [failed, sent] = fake.calls('POST /api/chat.postMessage').slice(-2);
      assert.equal(failed.headers.authorization, `Bearer ${old}`);
      assert.equal(sent.headers.authorization, `Bearer ${fake.accessToken()}`);
      assert.notEqual(fake.accessToken(), old);
    });

    it('marks the channel for reconnection when the app was uninstalled (token_revoked)', async () => {
      fake.revokeAll();
      const post = await settled(account, await publishNow(account, channelId, ['revoked'], inGeneral));
      assert.equal(post.state, 'ERROR');
      assert.match(post.error!, /must be reconnected/);
      assert.match(post.error!, /invalid_refresh_token/);
      assert.equal((await channelView(account, channelId)).needsReconnect, true);
    });
  });
}
