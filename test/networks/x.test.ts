import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { hmacSha1Signature, oauthParameters, parseAuthorizationHeader, signatureBaseString } from '../../src/providers/adapter-kit/oauth1.ts';
import { xWeightedLength } from '../../src/providers/networks/x/text-length.ts';
import { connectOAuth } from '../helpers/connect.ts';
import { startHerald, type TestAccount, type TestHerald } from '../helpers/herald.ts';
import { testStores, storeSuite } from '../helpers/stores.ts';
import { startXFake, X_CONSUMER, X_USER, type XFake } from '../fakes/x.ts';
import { listedChannel, publishNow, settled, uploadMp4, uploadPng, saveDraft } from './support.ts';
import { serverErrorAfterCreate } from './create-5xx.ts';
import { teardown } from '../helpers/teardown.ts';

describe('OAuth 1.0a signing (RFC 5849)', () => {
  it('builds the signature base string of RFC 5849 section 3.4.1.1', () => {
    const base = signatureBaseString('POST', 'http://example.com/request?b5=%3D%253D&a3=a&c%40=&a2=r%20b', [
      ['oauth_consumer_key', '9djdj82h48djs9d2'],
      ['oauth_token', 'kkk9d7dh3k39sjv7'],
      ['oauth_signature_method', 'HMAC-SHA1'],
      ['oauth_timestamp', '137131201'],
      ['oauth_nonce', '7d8f3e4a'],
      ['c2', ''],
      ['a3', '2 q'],
    ]);
    assert.equal(
      base,
      'POST&http%3A%2F%2Fexample.com%2Frequest&a2%3Dr%2520b%26a3%3D2%2520q%26a3%3Da%26b5%3D%253D%25253D%26c%2540%3D%26c2%3D' +
        '%26oauth_consumer_key%3D9djdj82h48djs9d2%26oauth_nonce%3D7d8f3e4a%26oauth_signature_method%3DHMAC-SHA1' +
        '%26oauth_timestamp%3D137131201%26oauth_token%3Dkkk9d7dh3k39sjv7',
    );
  });

  it('signs the photos request of RFC 5849 section 1.2 as published', () => {
    const params = oauthParameters({
      method: 'GET',
      url: 'http://photos.example.net/photos?file=vacation.jpg&size=original',
      keys: { consumerKey: 'dpf43f3p2l4k3l03', consumerSecret: 'kd94hf93k423kf44', token: 'nnch734d00sl2jdk', tokenSecret: 'pfkkdhi9sl3r4s00' },
      nonce: 'chapoH',
      timestamp: '137131202',
      withVersion: false,
    });
    assert.equal(params.oauth_signature, 'MdpQcU8iPSUjWoN/UDMsK2sui9I=');
  });

  it('signs the example of X\'s "Creating a signature" guide as published', () => {
    const params = oauthParameters({
      method: 'POST',
      url: 'https://api.twitter.com/1.1/statuses/update.json?include_entities=true',
      form: { status: 'Hello Ladies + Gentlemen, a signed OAuth request!' },
      keys: {
        consumerKey: 'xvz1evFS4wEEPTGEFPHBog',
        consumerSecret: 'kAcSOqF21Fu85e7zjz7ZN2U4ZRhfV3WpwPAoE3Z7kBw',
        token: '370773112-GmHxMAgYyLbNEtIKZeRNFsMKPR9EyMZeS9weJAEb',
        tokenSecret: 'LswwdoUaIvS8ltyTt5jkRh4J50vUPVVHtR2YPi5kE',
      },
      nonce: 'kYjzVBB8Y0ZFabxSWbWovY3uYSQ2pTgmZeNu2VS4cg',
      timestamp: '1318622958',
    });
    assert.equal(params.oauth_signature, 'hCtSmYh+iHYCEqBWrE7C7hYmtUk=');
    // A changed secret changes the signature: the check above is not vacuous.
    assert.notEqual(hmacSha1Signature('x', 'a', 'b'), hmacSha1Signature('x', 'a', 'c'));
  });
});

describe('X weighted length', () => {
  it('counts URLs as 23, CJK and emoji as 2, Latin as 1', () => {
    assert.equal(xWeightedLength('hello'), 5);
    assert.equal(xWeightedLength('read https://example.com/a/very/long/path/that/is/long?x=1'), 5 + 23);
    assert.equal(xWeightedLength('see example.com.'), 4 + 23 + 1);
    assert.equal(xWeightedLength('你好世界'), 8);
    assert.equal(xWeightedLength('👍🏽👨‍👩‍👧'), 4);
    assert.equal(xWeightedLength('e\u0301'), 1, 'NFC: e + combining accent is one character');
  });
});

for (const store of await testStores()) {
  describe(`x network (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let fake: XFake;
    let account: TestAccount;
    let channelId: string;
    const settings = { __type: 'x', who_can_reply_post: 'everyone' };

    before(async () => {
      fake = await startXFake();
      herald = await startHerald(store, {
        engine: { pollMs: 50 },
        env: { HERALD_X_API_KEY: X_CONSUMER.key, HERALD_X_API_SECRET: X_CONSUMER.secret, HERALD_X_API_URL: fake.url, HERALD_POSTS_PER_HOUR: '1000' },
      });
      account = await herald.newAccount();
    });
    after(() =>
      teardown(
        () => herald.close(),
        () => fake.close(),
      ),
    );

    it('connects through OAuth 1.0a: request token, authorize, access token, all signed', async () => {
      const connected = await connectOAuth(herald, account, 'x');
      channelId = connected.id;
      assert.equal(connected.name, X_USER.name);
      assert.equal(fake.lastSignatureProblem, undefined);

      const [requestToken] = fake.calls('POST /oauth/request_token');
      const callback = new URL(parseAuthorizationHeader(String(requestToken.headers.authorization)).oauth_callback);
      assert.equal(callback.origin + callback.pathname, `${herald.url}/connect/x/callback`);
      assert.ok(callback.searchParams.get('state'), 'the state rides in the callback URL');

      const [access] = fake.calls('POST /oauth/access_token');
      const accessParams = parseAuthorizationHeader(String(access.headers.authorization));
      assert.match(accessParams.oauth_token, /^req-/);
      assert.equal(accessParams.oauth_verifier, `verifier-for-${accessParams.oauth_token}`);
      assert.equal(accessParams.oauth_signature_method, 'HMAC-SHA1');

      const [me] = fake.calls('GET /2/users/me');
      assert.match(parseAuthorizationHeader(String(me.headers.authorization)).oauth_token, new RegExp(`^${X_USER.id}-access`));
      const listed = await listedChannel(account, channelId);
      assert.equal(listed.identifier, 'x');
      assert.equal(listed.profile, X_USER.username);
    });

    it('refuses a post over 280 weighted characters before it is queued', async () => {
      const created = await account.call('POST', '/posts', {
        type: 'now',
        date: new Date().toISOString(),
        shortLink: false,
        tags: [],
        posts: [{ integration: { id: channelId }, value: [{ content: '字'.repeat(141), image: [] }], settings }],
      });
      assert.equal(created.status, 400);
      assert.ok(
        created.body.errors.some((e: any) => e.path === 'posts.0.value.0.content' && /282/.test(e.message)),
        JSON.stringify(created.body),
      );
    });

    it('refuses a video beside an image when the post is sent, not when it is published', async () => {
      const png = await uploadPng(account, herald);
      const video = await uploadMp4(account, herald, 1024);
      const queuedBefore = fake.calls('POST /2/tweets').length;
      const mixed = await account.call('POST', '/posts', {
        type: 'now',
        date: new Date().toISOString(),
        shortLink: false,
        tags: [],
        posts: [
          {
            integration: { id: channelId },
            value: [
              {
                content: 'a mix',
                image: [
                  { id: video.id, path: video.path },
                  { id: png.id, path: png.path },
                ],
              },
            ],
            settings,
          },
        ],
      });
      assert.equal(mixed.status, 400, JSON.stringify(mixed.body));
      const problem = mixed.body.errors.find((e: any) => e.path === 'posts.0.value.0.image');
      assert.ok(problem, JSON.stringify(mixed.body));
      assert.match(problem.message, /one video per post; not a mix/);
      // The second item of a thread is held to it too, and one video alone is fine.
      const thread = await account.call('POST', '/posts', {
        type: 'now',
        date: new Date().toISOString(),
        shortLink: false,
        tags: [],
        posts: [
          {
            integration: { id: channelId },
            value: [
              { content: 'a video', image: [{ id: video.id, path: video.path }] },
              {
                content: 'then a mix',
                image: [
                  { id: png.id, path: png.path },
                  { id: video.id, path: video.path },
                ],
              },
            ],
            settings,
          },
        ],
      });
      assert.equal(thread.status, 400, JSON.stringify(thread.body));
      assert.deepEqual(
        thread.body.errors.map((e: any) => e.path),
        ['posts.0.value.1.image'],
      );
      assert.equal(fake.calls('POST /2/tweets').length, queuedBefore, 'nothing reached X');
    });

    it('publishes a post without reply settings as X does by default: everyone may reply', async () => {
      const before = fake.calls('POST /2/tweets').length;
      const created = await account.call('POST', '/posts', {
        type: 'now',
        date: new Date().toISOString(),
        shortLink: false,
        tags: [],
        posts: [{ integration: { id: channelId }, value: [{ content: 'no settings picked', image: [] }], settings: { __type: 'x' } }],
      });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const post = await settled(account, created.body[0].postId);
      assert.equal(post.state, 'PUBLISHED', post.error);
      const sent = fake.calls('POST /2/tweets').slice(before);
      assert.deepEqual(sent[0].json, { text: 'no settings picked' }, 'no reply_settings: X lets everyone reply');
    });

    it('publishes text with POST /2/tweets, signed, with reply settings', async () => {
      const before = fake.calls('POST /2/tweets').length;
      const postId = await publishNow(account, channelId, ['Hello from Herald'], {
        __type: 'x',
        who_can_reply_post: 'following',
        community: 'https://x.com/i/communities/1493446837214187523',
      });
      const post = await settled(account, postId);
      assert.equal(post.state, 'PUBLISHED', post.error);
      const sent = fake.calls('POST /2/tweets').slice(before);
      assert.equal(sent.length, 1);
      assert.deepEqual(sent[0].json, { text: 'Hello from Herald', reply_settings: 'following', community_id: '1493446837214187523' });
      assert.match(String(sent[0].headers['content-type']), /^application\/json/);
      assert.match(String(sent[0].headers.authorization), /^OAuth .*oauth_signature="/);
      const id = fake.state.tweets.at(-1).id;
      assert.equal(post.releaseId, id);
      assert.equal(post.releaseURL, `https://x.com/${X_USER.username}/status/${id}`);
    });

    it('uploads an image in one request (with its alt text) and a video in chunks, then attaches them', async () => {
      const png = await uploadPng(account, herald);
      await herald.services.media.describe(account.id, png.id, { alt: 'A white square' });
      const imagePost = await settled(account, await publishNow(account, channelId, [{ content: 'with a picture', media: [png] }], settings));
      assert.equal(imagePost.state, 'PUBLISHED', imagePost.error);
      const [oneShot] = fake.calls('POST /2/media/upload');
      assert.equal(oneShot.multipart?.fields.media_category, 'tweet_image');
      assert.equal(oneShot.multipart?.fields.media_type, 'image/png');
      assert.equal(oneShot.multipart?.files[0].name, 'media');
      const imageTweet = fake.state.tweets.find((t: any) => t.text === 'with a picture');
      assert.equal(imageTweet.body.media.media_ids.length, 1);
      assert.equal(fake.state.media.get(imageTweet.body.media.media_ids[0]).alt, 'A white square', 'the alt text was attached before the post');

      const video = await uploadMp4(account, herald, 5 * 1024 * 1024 + 100);
      const videoPost = await settled(account, await publishNow(account, channelId, [{ content: 'with a video', media: [video] }], settings));
      assert.equal(videoPost.state, 'PUBLISHED', videoPost.error);
      const [init] = fake.calls('POST /2/media/upload/initialize');
      assert.deepEqual(init.json, { media_type: 'video/mp4', total_bytes: video.bytes.length, media_category: 'tweet_video' });
      const appends = fake.calls('POST /2/media/upload/:id/append');
      assert.deepEqual(
        appends.map((a) => a.multipart?.fields.segment_index),
        ['0', '1'],
        'two segments of at most 4 MB',
      );
      assert.ok(Buffer.concat(appends.map((a) => a.multipart!.files[0].data)).equals(video.bytes), 'the segments are the file');
      assert.equal(fake.calls('POST /2/media/upload/:id/finalize').length, 1);
      const status = fake.calls('GET /2/media/upload');
      assert.ok(status.length >= 2 && status.every((s) => s.query.command === 'STATUS'), 'polled STATUS until succeeded');
      assert.equal(fake.calls('POST /2/media/metadata').length, 1, 'a video without alt text gets no metadata call');
      const videoTweet = fake.state.tweets.find((t: any) => t.text === 'with a video');
      assert.deepEqual(videoTweet.body.media.media_ids, [fake.calls('POST /2/media/upload/:id/finalize')[0].params.id]);
    });

    it('publishes a thread as replies to the previous post', async () => {
      const postId = await publishNow(account, channelId, ['thread one', 'thread two', 'thread three'], settings);
      const post = await settled(account, postId);
      assert.ok(
        post.thread.every((t: any) => t.state === 'PUBLISHED'),
        JSON.stringify(post.thread),
      );
      const [one, two, three] = ['thread one', 'thread two', 'thread three'].map((text) => fake.state.tweets.find((t: any) => t.text === text));
      assert.equal(one.body.reply, undefined);
      assert.deepEqual(two.body.reply, { in_reply_to_tweet_id: one.id });
      assert.deepEqual(three.body.reply, { in_reply_to_tweet_id: two.id });
      assert.equal(post.thread[1].releaseId, two.id);
    });

    it("ends in ERROR with X's message when it refuses duplicate content", async () => {
      const postId = await publishNow(account, channelId, ['Hello from Herald'], settings);
      const post = await settled(account, postId);
      assert.equal(post.state, 'ERROR');
      assert.match(post.error, /403/);
      assert.match(post.error, /duplicate content/);
    });

    it('tries a media upload again after a 500 (nothing was published), but stops after a 500 to the tweet itself', async () => {
      const png = await uploadPng(account, herald);
      fake.failNext('POST /2/media/upload', { status: 500, body: { title: 'Internal Server Error', detail: 'Something went wrong', status: 500 } });
      const uploaded = await settled(account, await publishNow(account, channelId, [{ content: 'after an upload hiccup', media: [png] }], settings));
      assert.equal(uploaded.state, 'PUBLISHED', uploaded.error);
      assert.deepEqual(
        uploaded.thread[0].attempts.map((a: any) => a.outcome),
        ['retry', 'published'],
      );

      // X took the tweet, then its gateway failed: sending it again would post twice (or fail as a false duplicate).
      // Herald finds it among the account's latest posts instead.
      fake.failNext('POST /2/tweets', {
        handleFirst: true,
        status: 500,
        body: { title: 'Internal Server Error', detail: 'Something went wrong', status: 500 },
      });
      const before = fake.calls('POST /2/tweets').length;
      const post = await settled(account, await publishNow(account, channelId, ['taken, then a 500'], settings));
      const taken = fake.state.tweets.filter((t: any) => t.text === 'taken, then a 500');
      assert.equal(taken.length, 1);
      assert.equal(post.state, 'PUBLISHED', post.error);
      assert.equal(post.releaseId, taken[0].id);
      assert.match(post.thread[0].attempts[0].detail, /X answered 500.*may have been published/);
      assert.equal(fake.calls('POST /2/tweets').length - before, 1, 'sent once');

      // A 500 to a tweet X did not take: not among the latest posts, so the post stops and says to check.
      fake.failNext('POST /2/tweets', { status: 500, body: { title: 'Internal Server Error', detail: 'Something went wrong', status: 500 } });
      const lost = await settled(account, await publishNow(account, channelId, ['never taken'], settings));
      assert.equal(lost.state, 'ERROR');
      assert.match(lost.error, /X answered 500.*may have been published.*does not show it yet/);
    });

    serverErrorAfterCreate(() => ({
      fake,
      account,
      publish: (text) => publishNow(account, channelId, [text], settings),
      held: (text) => fake.state.tweets.filter((t: { text: string }) => t.text === text).length,
    }));

    it('waits for the rate-limit reset on 429 and publishes once', async () => {
      const before = fake.calls('POST /2/tweets').length;
      fake.failNext('POST /2/tweets', {
        status: 429,
        headers: { 'x-rate-limit-limit': '100', 'x-rate-limit-remaining': '0', 'x-rate-limit-reset': String(Math.floor(Date.now() / 1000) + 1) },
        body: { title: 'Too Many Requests', detail: 'Too Many Requests', type: 'about:blank', status: 429 },
      });
      const post = await settled(account, await publishNow(account, channelId, ['after the limit'], settings));
      assert.equal(post.state, 'PUBLISHED', post.error);
      assert.equal(fake.calls('POST /2/tweets').length - before, 2);
      assert.equal(fake.state.tweets.filter((t: any) => t.text === 'after the limit').length, 1);
      assert.deepEqual(
        post.thread[0].attempts.map((a: any) => a.outcome),
        ['retry', 'published'],
      );
    });

    it("reports the account's and a post's public metrics, read with signed requests", async () => {
      Object.assign(fake.userMetrics, { followers_count: 1200, following_count: 80, listed_count: 3 });
      const today = new Date().toISOString().slice(0, 10);
      const channel = await account.call('GET', `/analytics/${channelId}?date=7`);
      assert.equal(channel.status, 200, JSON.stringify(channel.body));
      assert.deepEqual(channel.body, [
        { label: 'Followers', data: [{ total: 1200, date: today }], percentageChange: 0 },
        { label: 'Following', data: [{ total: 80, date: today }], percentageChange: 0 },
        { label: 'Posts', data: [{ total: fake.state.tweets.length, date: today }], percentageChange: 0 },
        { label: 'Listed', data: [{ total: 3, date: today }], percentageChange: 0 },
      ]);
      const me = fake.calls('GET /2/users/me').at(-1)!;
      assert.equal(me.query['user.fields'], 'public_metrics');
      assert.equal(fake.lastSignatureProblem, undefined, 'the query is part of the signature');

      const post = await settled(account, await publishNow(account, channelId, ['Counted on X', 'with a reply'], settings));
      assert.equal(post.state, 'PUBLISHED', post.error);
      fake.postMetrics.set(post.releaseId, { impression_count: 340, like_count: 12, retweet_count: 3, reply_count: 1, quote_count: 2, bookmark_count: 4 });
      const figures = await account.call('GET', `/analytics/post/${post.id}?date=7`);
      assert.equal(figures.status, 200, JSON.stringify(figures.body));
      assert.deepEqual(
        figures.body.map((s: any) => [s.label, s.data.map((d: any) => [d.total, d.date])]),
        [
          ['Impressions', [[340, today]]],
          ['Likes', [[12, today]]],
          ['Reposts', [[3, today]]],
          ['Replies', [[1, today]]],
          ['Quotes', [[2, today]]],
          ['Bookmarks', [[4, today]]],
        ],
      );
      const lookup = fake.calls('GET /2/tweets/:id').at(-1)!;
      assert.equal(lookup.params.id, post.releaseId, "the thread's first post");
      assert.equal(lookup.query['tweet.fields'], 'public_metrics');
      assert.equal(fake.lastSignatureProblem, undefined);
    });

    it("answers 400 with X's words for a post deleted on X (a 200 with errors and no data)", async () => {
      const post = await settled(account, await publishNow(account, channelId, ['Deleted later'], settings));
      assert.equal(post.state, 'PUBLISHED', post.error);
      fake.state.tweets = fake.state.tweets.filter((t: any) => t.id !== post.releaseId);
      const gone = await account.call('GET', `/analytics/post/${post.id}?date=7`);
      assert.equal(gone.status, 400, JSON.stringify(gone.body));
      assert.equal(gone.body.code, 'network_refused');
      assert.match(gone.body.message, new RegExp(`Could not find tweet with id: \\[${post.releaseId}\\]`));
    });

    it("lists the account's latest posts, newest first, for a post published by hand (GET /posts/{id}/missing)", async () => {
      const draft = await saveDraft(account, channelId, 'by hand', settings);
      const missing = await account.call('GET', `/posts/${draft}/missing`);
      assert.equal(missing.status, 200, JSON.stringify(missing.body));
      const newest = fake.state.tweets.at(-1);
      assert.deepEqual(missing.body[0], {
        id: newest.id,
        url: `https://x.com/${X_USER.username}/status/${newest.id}`,
        text: newest.text,
        at: newest.created_at,
      });
      assert.equal(missing.body.length, Math.min(fake.state.tweets.length, 20));
      const ids = missing.body.map((p: any) => BigInt(p.id));
      assert.ok(
        ids.every((id: bigint, i: number) => i === 0 || id < ids[i - 1]),
        'newest first',
      );
      const timeline = fake.calls('GET /2/users/:id/tweets').at(-1)!;
      assert.equal(timeline.params.id, X_USER.id);
      assert.deepEqual(
        { max: timeline.query.max_results, fields: timeline.query['tweet.fields'], exclude: timeline.query.exclude },
        { max: '20', fields: 'created_at', exclude: 'retweets' },
      );
      assert.equal(fake.lastSignatureProblem, undefined);
    });

    it('marks the channel for reconnection on 401: X user tokens do not expire, so access was revoked', async () => {
      for (const token of fake.secrets.keys()) fake.state.revoked.add(token);
      const post = await settled(account, await publishNow(account, channelId, ['after revocation'], settings));
      assert.equal(post.state, 'ERROR');
      assert.match(post.error, /must be reconnected/);
      assert.equal((await listedChannel(account, channelId)).needsReconnect, true);
      assert.equal(
        fake.state.tweets.some((t: any) => t.text === 'after revocation'),
        false,
      );

      // Connecting again brings the same channel back.
      const again = await connectOAuth(herald, account, 'x');
      assert.equal(again.id, channelId);
      assert.equal((await listedChannel(account, channelId)).needsReconnect, false);
    });
  });
}
