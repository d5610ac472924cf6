import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startHerald, type TestAccount, type TestHerald } from '../helpers/herald.ts';
import { testStores, storeSuite } from '../helpers/stores.ts';
import { connectOAuth, followToCallback, startConnect } from '../helpers/connect.ts';
import { textBlocks } from '../../src/providers/networks/tumblr.ts';
import { startTumblrFake, tumblrError, TUMBLR_APP, type TumblrFake } from '../fakes/tumblr.ts';
import { channelView, publishNow, settled, uploadPng } from './publish.ts';
import { saveDraft, uploadMp4 } from './support.ts';
import { serverErrorAfterCreate } from './create-5xx.ts';
import { teardown } from '../helpers/teardown.ts';

describe('tumblr text blocks', () => {
  it('makes one block per paragraph and cuts a paragraph over 4,096 code points', () => {
    assert.deepEqual(textBlocks('one\n\ntwo\n  \nthree'), ['one', 'two', 'three']);
    const long = textBlocks('🙂'.repeat(4100));
    assert.deepEqual(
      long.map((b) => [...b].length),
      [4096, 4],
    );
  });
});

for (const store of await testStores()) {
  describe(`tumblr (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let fake: TumblrFake;
    let account: TestAccount;
    let channelId: string;

    before(async () => {
      fake = await startTumblrFake();
      herald = await startHerald(store, {
        engine: { pollMs: 50, publishTimeoutMs: 1_000 },
        env: {
          HERALD_TUMBLR_CLIENT_ID: TUMBLR_APP.clientId,
          HERALD_TUMBLR_CLIENT_SECRET: TUMBLR_APP.clientSecret,
          HERALD_TUMBLR_AUTH_URL: fake.url,
          HERALD_TUMBLR_API_URL: fake.url,
          HERALD_POSTS_PER_HOUR: '1000',
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

    it('refuses to connect without the write permission', async () => {
      fake.grantedScopes = ['offline_access'];
      try {
        const finished = await followToCallback(herald, await startConnect(account, 'tumblr'));
        assert.equal(finished.status, 400, JSON.stringify(finished.body));
        assert.match(finished.body.message, /permission to post \(write\) was not granted/);
      } finally {
        fake.grantedScopes = undefined;
      }
    });

    it('connects with OAuth 2 (client secret), then the user picks one of their blogs', async () => {
      let offered: string[] = [];
      const connected = await connectOAuth(herald, account, 'tumblr', {
        pick: (choices) => {
          offered = choices.map((c) => c.name);
          return 0;
        },
      });
      channelId = connected.id;
      assert.deepEqual(offered, ['Herald Notes', 'Side Blog']);
      assert.equal(connected.name, 'Herald Notes');
      const consent = fake.state.authorize;
      assert.equal(consent.client_id, TUMBLR_APP.clientId);
      assert.equal(consent.response_type, 'code');
      assert.equal(consent.scope, 'basic write offline_access');
      assert.equal(consent.redirect_uri, `${herald.url}/connect/tumblr/callback`);
      const exchange = fake.calls('POST /v2/oauth2/token').at(-1)!;
      assert.deepEqual(exchange.form, {
        grant_type: 'authorization_code',
        code: 'tumblr-code',
        client_id: TUMBLR_APP.clientId,
        client_secret: TUMBLR_APP.clientSecret,
        redirect_uri: consent.redirect_uri,
      });
      const info = fake.calls('GET /v2/user/info').at(-1)!;
      assert.equal(info.headers.authorization, 'Bearer tumblr-access-2');
      assert.match(String(info.headers['user-agent']), /^Herald\//);
      const listed = await channelView(account, channelId);
      assert.equal(listed.profile, 'https://heraldnotes.tumblr.com/');
    });

    it('posts NPF blocks as JSON: heading, a block per paragraph, link; tags as a string; the 64-bit id kept whole', async () => {
      const settings = {
        __type: 'tumblr',
        title: 'Release notes',
        link: 'https://example.com/notes',
        sourceUrl: 'https://example.com/src',
        tags: 'herald,release',
      };
      const post = await settled(account, await publishNow(account, channelId, ['First paragraph.\n\nSecond one.'], settings));
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      const sent = fake.calls('POST /v2/blog/:blog/posts').at(-1)!;
      assert.equal(sent.params.blog, 't:hErAlDnOtEs1', 'the blog by its uuid');
      assert.match(String(sent.headers['user-agent']), /^Herald\//);
      assert.deepEqual(sent.json, {
        content: [
          { type: 'text', subtype: 'heading1', text: 'Release notes' },
          { type: 'text', text: 'First paragraph.' },
          { type: 'text', text: 'Second one.' },
          { type: 'link', url: 'https://example.com/notes' },
        ],
        layout: [],
        state: 'published',
        tags: 'herald,release',
        source_url: 'https://example.com/src',
      });
      const made = fake.posts.at(-1)!;
      assert.equal(post.releaseId, made.id);
      assert.equal(post.releaseURL, `https://www.tumblr.com/heraldnotes/${made.id}`);
    });

    it('sends an image and a video as multipart parts named by their blocks, with sizes and alt text; a second item is left out', async () => {
      const png = await uploadPng(account, herald.api);
      await herald.services.media.describe(account.id, png.id, { alt: 'A red rectangle' });
      const video = await uploadMp4(account, herald, 3000);
      const post = await settled(account, await publishNow(account, channelId, [{ content: 'Look', media: [png, video] }, 'no replies on Tumblr']));
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      assert.equal(post.thread.length, 1);
      assert.match(post.warning, /no threads/);
      const made = fake.posts.at(-1)!;
      assert.deepEqual(made.body.content, [
        { type: 'text', text: 'Look' },
        { type: 'image', media: [{ type: 'image/png', identifier: 'media-0', width: 4, height: 3 }], alt_text: 'A red rectangle' },
        { type: 'video', provider: 'tumblr', media: { type: 'video/mp4', identifier: 'media-1', width: 540, height: 405 } },
      ]);
      assert.deepEqual(
        made.files.map((f) => [f.name, f.type]),
        [
          ['media-0', 'image/png'],
          ['media-1', 'video/mp4'],
        ],
      );
      assert.deepEqual(made.files[0].data, png.bytes);
      assert.deepEqual(made.files[1].data, video.bytes);
    });

    it('refuses two videos and text over 4,096 characters before accepting the post', async () => {
      const a = await uploadMp4(account, herald, 2000);
      const b = await uploadMp4(account, herald, 2100);
      const before = fake.calls('POST /v2/blog/:blog/posts').length;
      const body = (value: unknown[]) => ({
        type: 'now',
        date: new Date().toISOString(),
        shortLink: false,
        tags: [],
        posts: [{ integration: { id: channelId }, value, settings: { __type: 'tumblr' } }],
      });
      const two = await account.callUntyped(
        'POST',
        '/posts',
        body([
          {
            content: 'two clips',
            image: [
              { id: a.id, path: a.path },
              { id: b.id, path: b.path },
            ],
          },
        ]),
      );
      assert.equal(two.status, 400, JSON.stringify(two.body));
      assert.equal(two.body.errors[0].path, 'posts.0.value.0.image');
      assert.match(two.body.errors[0].message, /at most 1 uploaded video/);
      const long = await account.callUntyped('POST', '/posts', body([{ content: 'x'.repeat(4097), image: [] }]));
      assert.equal(long.status, 400);
      assert.equal(long.body.errors[0].path, 'posts.0.value.0.content');
      assert.equal(fake.calls('POST /v2/blog/:blog/posts').length, before);
    });

    it("ends in ERROR with Tumblr's words at the daily post limit (403, 8023), sent once", async () => {
      fake.failNext('POST /v2/blog/:blog/posts', tumblrError(403, 'Forbidden', 'You have reached your daily post limit', 8023));
      const post = await settled(account, await publishNow(account, channelId, ['too many today']));
      assert.equal(post.state, 'ERROR');
      assert.match(post.error, /Tumblr answered 403: You have reached your daily post limit \(8023\): the blog reached the daily limit of 250 posts/);
      assert.equal(post.thread[0].attempts.length, 1);
    });

    it('retries after 429 (waiting the hour window the headers name), posting once; a 503 is looked up, never sent again', async () => {
      const before = fake.posts.length;
      fake.failNext(
        'POST /v2/blog/:blog/posts',
        tumblrError(429, 'Limit Exceeded', undefined, undefined, { 'x-ratelimit-perhour-remaining': '0', 'x-ratelimit-perhour-reset': '1' }),
      );
      const limited = await settled(account, await publishNow(account, channelId, ['patient']));
      assert.equal(limited.state, 'PUBLISHED', limited.error ?? '');
      assert.deepEqual(
        limited.thread[0].attempts.map((a: any) => a.outcome),
        ['retry', 'published'],
      );
      const [first, second] = fake.calls('POST /v2/blog/:blog/posts').slice(-2);
      assert.ok(second.at - first.at >= 950, `waited ${second.at - first.at} ms`);
      // Tumblr may have stored a post it answers 503 for: not on the blog, so the user is told to check.
      fake.failNext('POST /v2/blog/:blog/posts', tumblrError(503, 'Service Unavailable'));
      const down = await settled(account, await publishNow(account, channelId, ['posting paused']));
      assert.equal(down.state, 'ERROR');
      assert.match(down.error ?? '', /Tumblr answered 503.*may have been published.*does not show it yet/);
      assert.deepEqual(
        down.thread[0].attempts.map((a: any) => a.outcome),
        ['unknown'],
      );
      assert.equal(fake.calls('POST /v2/blog/:blog/posts').filter((r) => JSON.stringify(r.json ?? '').includes('posting paused')).length, 1, 'sent once');
      assert.equal(fake.posts.length, before + 1);
    });

    it('after a 502 once Tumblr had the post, finds it among the newest posts instead of posting again', async () => {
      const before = fake.posts.length;
      fake.failNext('POST /v2/blog/:blog/posts', { ...tumblrError(502, 'Bad Gateway'), handleFirst: true });
      const post = await settled(account, await publishNow(account, channelId, ['did it go out?\n\nit did']));
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      assert.equal(fake.posts.length, before + 1, 'one post');
      assert.equal(post.releaseId, fake.posts.at(-1)!.id);
      assert.equal(post.releaseURL, `https://heraldnotes.tumblr.com/post/${fake.posts.at(-1)!.id}`);
      const looked = fake.calls('GET /v2/blog/:blog/posts').at(-1)!;
      assert.equal(looked.query.npf, 'true');
      assert.deepEqual(
        post.thread[0].attempts.map((a: any) => a.outcome),
        ['unknown'],
      );
    });

    it('a post lost on the way and not on the blog is not sent again: the user is told to check', async () => {
      const before = fake.posts.length;
      fake.failNext('POST /v2/blog/:blog/posts', { hang: true });
      const post = await settled(account, await publishNow(account, channelId, ['lost on the way']));
      assert.equal(post.state, 'ERROR');
      assert.match(post.error, /may have been published/);
      assert.match(post.error, /Tumblr does not show it yet/);
      assert.equal(fake.posts.length, before);
      assert.equal(fake.calls('POST /v2/blog/:blog/posts').filter((r) => r.json?.content?.[0]?.text === 'lost on the way').length, 1);
    });

    serverErrorAfterCreate(() => ({
      fake,
      account,
      publish: (text) => publishNow(account, channelId, [text]),
      held: (text) => fake.posts.filter((p) => JSON.stringify(p.body).includes(text)).length,
    }));

    it('refreshes the 42-minute token (rotating the refresh token), then posts', async () => {
      fake.expireTokens();
      const post = await settled(account, await publishNow(account, channelId, ['fresh token']));
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      const refreshes = fake.calls('POST /v2/oauth2/token').filter((r) => r.form?.grant_type === 'refresh_token');
      assert.deepEqual(refreshes.at(-1)!.form, {
        grant_type: 'refresh_token',
        refresh_token: 'tumblr-refresh-2',
        client_id: TUMBLR_APP.clientId,
        client_secret: TUMBLR_APP.clientSecret,
      });
      fake.expireTokens();
      const again = await settled(account, await publishNow(account, channelId, ['fresh again']));
      assert.equal(again.state, 'PUBLISHED', again.error ?? '');
      assert.equal(fake.calls('POST /v2/oauth2/token').at(-1)!.form?.refresh_token, 'tumblr-refresh-3');
    });

    it("reports the blog's followers and posts, a post's notes, and lists the newest posts", async () => {
      const post = await settled(account, await publishNow(account, channelId, ['noted']));
      const made = fake.posts.at(-1)!;
      made.notes = { total_notes: 9, total_likes: 6, total_reblogs: 3 };
      fake.blogs[0].followers = 88;
      const figures = await account.callUntyped('GET', `/analytics/post/${post.id}?date=7`);
      assert.equal(figures.status, 200, JSON.stringify(figures.body));
      assert.deepEqual(
        figures.body.map((s: any) => [s.label, s.data[0].total]),
        [
          ['Notes', 9],
          ['Likes', 6],
          ['Reblogs', 3],
        ],
      );
      assert.equal(fake.calls('GET /v2/blog/:blog/notes').at(-1)!.query.id, made.id);
      const channel = await account.callUntyped('GET', `/analytics/${channelId}?date=7`);
      assert.deepEqual(
        channel.body.map((s: any) => [s.label, s.data[0].total]),
        [
          ['Followers', 88],
          ['Posts', fake.blogs[0].posts],
        ],
      );
      const draft = await saveDraft(account, channelId, 'by hand', { __type: 'tumblr' });
      const missing = await account.callUntyped('GET', `/posts/${draft}/missing`);
      assert.equal(missing.status, 200, JSON.stringify(missing.body));
      assert.deepEqual(missing.body[0], {
        id: made.id,
        url: `https://heraldnotes.tumblr.com/post/${made.id}`,
        text: 'noted',
        at: new Date(made.timestamp * 1000).toISOString(),
      });
    });

    it('marks the channel for reconnection when the refresh token is refused (401)', async () => {
      fake.expireTokens();
      fake.refreshTokens.clear();
      const post = await settled(account, await publishNow(account, channelId, ['nobody home']));
      assert.equal(post.state, 'ERROR');
      assert.match(post.error, /must be reconnected/);
      assert.equal((await channelView(account, channelId)).needsReconnect, true);
    });
  });
}
