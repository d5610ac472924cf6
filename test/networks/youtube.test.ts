import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startHerald, type TestAccount, type TestHerald } from '../helpers/herald.ts';
import { testStores, storeSuite } from '../helpers/stores.ts';
import { connectOAuth } from '../helpers/connect.ts';
import { CLIENT_ID, CLIENT_SECRET, googleError, startYouTubeFake, type YouTubeFake } from '../fakes/youtube.ts';
import { listedChannel, publishNow, settled, uploadMp4, uploadPng } from './support.ts';
import { serverErrorAfterCreate } from './create-5xx.ts';
import { teardown } from '../helpers/teardown.ts';

const SETTINGS = {
  title: 'Launch day',
  type: 'unlisted',
  selfDeclaredMadeForKids: 'no',
  tags: [
    { value: 'herald', label: 'herald' },
    { value: 'open source', label: 'open source' },
  ],
};

for (const store of await testStores()) {
  describe(`youtube (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let fake: YouTubeFake;
    let account: TestAccount;
    let channelId: string;

    before(async () => {
      fake = await startYouTubeFake();
      fake.channels.push(
        { id: 'UC-main', snippet: { title: 'Main channel', customUrl: '@main', thumbnails: { default: { url: 'https://yt3.example/main.jpg' } } } },
        { id: 'UC-brand', snippet: { title: 'Brand channel', customUrl: '@brand', thumbnails: { default: { url: 'https://yt3.example/brand.jpg' } } } },
      );
      herald = await startHerald(store, {
        engine: { pollMs: 50 },
        env: {
          HERALD_YOUTUBE_CLIENT_ID: CLIENT_ID,
          HERALD_YOUTUBE_CLIENT_SECRET: CLIENT_SECRET,
          HERALD_YOUTUBE_AUTH_URL: fake.url,
          HERALD_YOUTUBE_TOKEN_URL: fake.url,
          HERALD_YOUTUBE_API_URL: fake.url,
          HERALD_YOUTUBE_ANALYTICS_URL: fake.url,
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

    it('connects through Google OAuth with PKCE and offline access, then the user picks a channel', async () => {
      const connected = await connectOAuth(herald, account, 'youtube', { pick: (choices) => choices.findIndex((c) => c.name === 'Brand channel') });
      channelId = connected.id;
      assert.equal(connected.identifier, 'youtube');
      assert.equal(connected.name, 'Brand channel');

      const consent = fake.state.authorize;
      assert.equal(consent.client_id, CLIENT_ID);
      assert.equal(consent.redirect_uri, `${herald.url}/connect/youtube/callback`);
      assert.equal(consent.response_type, 'code');
      assert.equal(consent.access_type, 'offline');
      assert.equal(consent.prompt, 'consent');
      assert.equal(consent.code_challenge_method, 'S256');
      assert.match(consent.scope, /auth\/youtube\.upload/);

      const [token] = fake.calls('POST /token');
      assert.equal(token.form?.grant_type, 'authorization_code');
      assert.equal(token.form?.code, 'google-code');
      assert.equal(token.form?.client_secret, CLIENT_SECRET);
      assert.ok(token.form?.code_verifier, 'the PKCE verifier is sent');
      const [channels] = fake.calls('GET /youtube/v3/channels');
      assert.deepEqual({ part: channels.query.part, mine: channels.query.mine }, { part: 'snippet', mine: 'true' });
      assert.equal(channels.headers.authorization, 'Bearer ya29.access-1');

      const listed = await listedChannel(account, channelId);
      assert.equal(listed.picture, 'https://yt3.example/brand.jpg');
      assert.equal(listed.profile, '@brand');

      // The helper tool lists the account's channels.
      const tool = await account.callUntyped('POST', `/integration-trigger/${channelId}`, { methodName: 'listChannels' });
      assert.equal(tool.status, 200, JSON.stringify(tool.body));
      assert.deepEqual(
        tool.body.output.map((c: { id: string }) => c.id),
        ['UC-main', 'UC-brand'],
      );
    });

    it('refuses a post without a video, or without title and privacy, naming the field', async () => {
      const text = await account.callUntyped('POST', '/posts', {
        type: 'now',
        date: new Date().toISOString(),
        shortLink: false,
        tags: [],
        posts: [{ integration: { id: channelId }, value: [{ content: 'Just words', image: [] }], settings: SETTINGS }],
      });
      assert.equal(text.status, 400, JSON.stringify(text.body));
      assert.ok(
        text.body.errors.some((e: any) => e.path === 'posts.0.value.0.image' && /at least 1/.test(e.message)),
        JSON.stringify(text.body.errors),
      );

      const png = await uploadPng(account, herald);
      const noTitle = await account.callUntyped('POST', '/posts', {
        type: 'now',
        date: new Date().toISOString(),
        shortLink: false,
        tags: [],
        posts: [{ integration: { id: channelId }, value: [{ content: 'x', image: [{ id: png.id, path: png.path }] }], settings: { type: 'loud' } }],
      });
      assert.equal(noTitle.status, 400);
      const paths = noTitle.body.errors.map((e: any) => e.path);
      assert.ok(paths.includes('posts.0.settings.title'), JSON.stringify(paths));
      assert.ok(paths.includes('posts.0.settings.type'), JSON.stringify(paths));
      assert.ok(paths.includes('posts.0.value.0.image.0'), 'a picture is not a video');
    });

    it('uploads the video with a resumable session: metadata first, then the bytes', async () => {
      const video = await uploadMp4(account, herald, 6000);
      const post = await settled(account, await publishNow(account, channelId, [{ content: 'The description', media: [video] }], SETTINGS));
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');

      const [open] = fake.calls('POST /upload/youtube/v3/videos');
      assert.equal(open.query.uploadType, 'resumable');
      assert.equal(open.query.part, 'snippet,status');
      assert.equal(open.headers.authorization, 'Bearer ya29.access-1');
      assert.equal(open.headers['x-upload-content-length'], '6000');
      assert.equal(open.headers['x-upload-content-type'], 'video/mp4');
      assert.match(String(open.headers['content-type']), /^application\/json/);
      assert.deepEqual(open.json, {
        snippet: { title: 'Launch day', description: 'The description', tags: ['herald', 'open source'], categoryId: '22' },
        status: { privacyStatus: 'unlisted', selfDeclaredMadeForKids: false },
      });
      const puts = fake.calls('PUT /upload/youtube/v3/videos');
      assert.equal(puts.length, 1);
      assert.equal(puts[0].headers['content-type'], 'video/mp4');
      assert.deepEqual(puts[0].raw, video.bytes);

      const stored = fake.videos.at(-1)!;
      assert.deepEqual(stored.bytes, video.bytes);
      assert.equal(post.releaseId, stored.id);
      assert.equal(post.releaseURL, `https://www.youtube.com/watch?v=${stored.id}`);
    });

    it('has no threads: only the first item becomes a video, with a warning', async () => {
      const before = fake.videos.length;
      const video = await uploadMp4(account, herald, 3000);
      const created = await account.callUntyped('POST', '/posts', {
        type: 'now',
        date: new Date().toISOString(),
        shortLink: false,
        tags: [],
        posts: [
          {
            integration: { id: channelId },
            value: [
              { content: 'one', image: [{ id: video.id, path: video.path }] },
              { content: 'two', image: [] },
            ],
            settings: SETTINGS,
          },
        ],
      });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const post = await settled(account, created.body[0].postId);
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      assert.equal(post.thread.length, 1);
      assert.match(post.warning, /no threads/);
      assert.equal(fake.videos.length, before + 1);
    });

    it('resumes an interrupted upload from the byte YouTube says it holds', async () => {
      const video = await uploadMp4(account, herald, 5000);
      const putsBefore = fake.calls('PUT /upload/youtube/v3/videos').length;
      fake.cutNextUploadAt = 2048;
      const post = await settled(account, await publishNow(account, channelId, [{ content: 'Resumed', media: [video] }], SETTINGS));
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      const puts = fake.calls('PUT /upload/youtube/v3/videos').slice(putsBefore);
      assert.deepEqual(
        puts.map((p) => p.headers['content-range'] ?? null),
        [null, 'bytes */5000', 'bytes 2048-4999/5000'],
      );
      assert.deepEqual(puts[2].raw, video.bytes.subarray(2048));
      assert.deepEqual(fake.videos.at(-1)!.bytes, video.bytes);
      assert.equal(post.releaseId, fake.videos.at(-1)!.id);
    });

    it('resumes after a 500 in the middle of the upload, as Google asks, instead of failing the post', async () => {
      const video = await uploadMp4(account, herald, 5000);
      const putsBefore = fake.calls('PUT /upload/youtube/v3/videos').length;
      fake.cutNextUploadAt = 1024;
      fake.cutNextUploadStatus = 500;
      const post = await settled(account, await publishNow(account, channelId, [{ content: 'Resumed after a 500', media: [video] }], SETTINGS));
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      const puts = fake.calls('PUT /upload/youtube/v3/videos').slice(putsBefore);
      assert.deepEqual(
        puts.map((p) => p.headers['content-range'] ?? null),
        [null, 'bytes */5000', 'bytes 1024-4999/5000'],
      );
      assert.deepEqual(fake.videos.at(-1)!.bytes, video.bytes);
    });

    it("ends in ERROR with YouTube's message when it refuses the upload", async () => {
      const video = await uploadMp4(account, herald, 2000);
      const before = fake.videos.length;
      fake.failNext('POST /upload/youtube/v3/videos', googleError(400, 'uploadLimitExceeded', 'The user has exceeded the number of videos they may upload.'));
      const post = await settled(account, await publishNow(account, channelId, [{ content: 'Too many', media: [video] }], SETTINGS));
      assert.equal(post.state, 'ERROR');
      assert.match(post.error, /uploadLimitExceeded/);
      assert.match(post.error, /exceeded the number of videos/);
      assert.equal(fake.videos.length, before);
    });

    it('refreshes an expired access token with the refresh token, then uploads', async () => {
      for (const token of fake.validTokens) fake.validTokens.delete(token);
      const refreshesBefore = fake.calls('POST /token').filter((r) => r.form?.grant_type === 'refresh_token').length;
      const video = await uploadMp4(account, herald, 2500);
      const post = await settled(account, await publishNow(account, channelId, [{ content: 'After refresh', media: [video] }], SETTINGS));
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      const refreshes = fake
        .calls('POST /token')
        .filter((r) => r.form?.grant_type === 'refresh_token')
        .slice(refreshesBefore);
      assert.equal(refreshes.length, 1);
      assert.equal(refreshes[0].form?.refresh_token, '1//refresh-1');
      assert.equal(refreshes[0].form?.client_id, CLIENT_ID);
      const opens = fake.calls('POST /upload/youtube/v3/videos');
      assert.equal(opens.at(-2)!.headers.authorization, 'Bearer ya29.access-1', 'first try with the old token');
      assert.equal(opens.at(-1)!.headers.authorization, 'Bearer ya29.access-2', 'then with the refreshed one');
      assert.equal((await listedChannel(account, channelId)).needsReconnect, false);
    });

    it('waits out a rate limit (Retry-After) and uploads once', async () => {
      const video = await uploadMp4(account, herald, 2200);
      const before = fake.videos.length;
      fake.failNext('POST /upload/youtube/v3/videos', { ...googleError(429, 'rateLimitExceeded', 'Too many requests'), headers: { 'retry-after': '1' } });
      const post = await settled(account, await publishNow(account, channelId, [{ content: 'Patient', media: [video] }], SETTINGS));
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      assert.equal(fake.videos.length, before + 1);
      assert.deepEqual(
        post.thread[0].attempts.map((a: any) => a.outcome),
        ['retry', 'published'],
      );
    });

    serverErrorAfterCreate(() => ({
      fake,
      account,
      publish: async (text) => publishNow(account, channelId, [{ content: text, media: [await uploadMp4(account, herald, 2300)] }], SETTINGS),
      held: (text) => fake.videos.filter((v) => v.metadata.snippet.description === text).length,
    }));

    it('a 500 after YouTube made the video, and another when asked about the session: an unknown outcome, never a second upload', async () => {
      const video = await uploadMp4(account, herald, 2400);
      const before = fake.videos.length;
      fake.failNext('PUT /upload/youtube/v3/videos', { ...googleError(500, 'backendError', 'Backend Error'), handleFirst: true }, 2);
      const post = await settled(account, await publishNow(account, channelId, [{ content: 'Made, then unanswered', media: [video] }], SETTINGS));
      assert.equal(post.state, 'ERROR');
      assert.match(post.error ?? '', /YouTube answered 500.*may have been published/);
      assert.deepEqual(
        post.thread[0].attempts.map((a: any) => a.outcome),
        ['unknown'],
      );
      assert.equal(fake.videos.length, before + 1, 'uploaded once');
      assert.equal(fake.calls('POST /upload/youtube/v3/videos').filter((r) => r.json?.snippet?.description === 'Made, then unanswered').length, 1);
    });

    it("reports the channel's and a video's figures day by day from YouTube Analytics", async () => {
      const video = await uploadMp4(account, herald, 2600);
      const post = await settled(account, await publishNow(account, channelId, [{ content: 'Watched', media: [video] }], SETTINGS));
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      const daysAgo = (n: number) => new Date(Date.now() - n * 86_400_000).toISOString().slice(0, 10);
      fake.activity = [
        { day: daysAgo(1), videoId: 'older-video', metrics: { views: 5, estimatedMinutesWatched: 6 } },
        { day: daysAgo(3), videoId: 'older-video', metrics: { views: 10, estimatedMinutesWatched: 20, likes: 1, subscribersGained: 1 } },
        {
          day: daysAgo(2),
          videoId: post.releaseId,
          metrics: { views: 40, estimatedMinutesWatched: 55, likes: 4, comments: 2, shares: 1, subscribersGained: 2 },
        },
        {
          day: daysAgo(1),
          videoId: post.releaseId,
          metrics: { views: 60, estimatedMinutesWatched: 70, likes: 6, comments: 3, shares: 0, subscribersGained: 1 },
        },
        // Outside the 7 days asked for.
        { day: daysAgo(20), videoId: post.releaseId, metrics: { views: 999 } },
      ];

      const channel = await account.callUntyped('GET', `/analytics/${channelId}?date=7`);
      assert.equal(channel.status, 200, JSON.stringify(channel.body));
      const points = (series: any) => series.data.map((d: any) => [d.date, d.total]);
      assert.deepEqual(
        channel.body.map((s: any) => s.label),
        ['Views', 'Minutes watched', 'Likes', 'Subscribers gained'],
      );
      assert.deepEqual(points(channel.body[0]), [
        [daysAgo(3), 10],
        [daysAgo(2), 40],
        [daysAgo(1), 65],
      ]);
      assert.deepEqual(points(channel.body[1]), [
        [daysAgo(3), 20],
        [daysAgo(2), 55],
        [daysAgo(1), 76],
      ]);
      assert.deepEqual(points(channel.body[3]), [
        [daysAgo(3), 1],
        [daysAgo(2), 2],
        [daysAgo(1), 1],
      ]);
      assert.equal(channel.body[0].percentageChange, 550, 'the last day against the first');
      const report = fake.calls('GET /v2/reports').at(-1)!;
      assert.deepEqual(
        {
          ids: report.query.ids,
          startDate: report.query.startDate,
          endDate: report.query.endDate,
          metrics: report.query.metrics,
          dimensions: report.query.dimensions,
          filters: report.query.filters,
        },
        {
          ids: 'channel==UC-brand',
          startDate: daysAgo(6),
          endDate: daysAgo(0),
          metrics: 'views,estimatedMinutesWatched,likes,subscribersGained',
          dimensions: 'day',
          filters: undefined,
        },
      );
      assert.match(String(report.headers.authorization), /^Bearer ya29\./);

      const figures = await account.callUntyped('GET', `/analytics/post/${post.id}?date=7`);
      assert.equal(figures.status, 200, JSON.stringify(figures.body));
      assert.deepEqual(
        figures.body.map((s: any) => [s.label, points(s)]),
        [
          [
            'Views',
            [
              [daysAgo(2), 40],
              [daysAgo(1), 60],
            ],
          ],
          [
            'Minutes watched',
            [
              [daysAgo(2), 55],
              [daysAgo(1), 70],
            ],
          ],
          [
            'Likes',
            [
              [daysAgo(2), 4],
              [daysAgo(1), 6],
            ],
          ],
          [
            'Comments',
            [
              [daysAgo(2), 2],
              [daysAgo(1), 3],
            ],
          ],
          [
            'Shares',
            [
              [daysAgo(2), 1],
              [daysAgo(1), 0],
            ],
          ],
        ],
      );
      const videoReport = fake.calls('GET /v2/reports').at(-1)!;
      assert.equal(videoReport.query.filters, `video==${post.releaseId}`);
      assert.equal(videoReport.query.metrics, 'views,estimatedMinutesWatched,likes,comments,shares');

      // A period without data: YouTube leaves the rows out, each series is empty.
      fake.activity = [];
      const quiet = await account.callUntyped('GET', `/analytics/${channelId}?date=1`);
      assert.equal(quiet.status, 200, JSON.stringify(quiet.body));
      assert.deepEqual(
        quiet.body.map((s: any) => [s.label, s.data]),
        [
          ['Views', []],
          ['Minutes watched', []],
          ['Likes', []],
          ['Subscribers gained', []],
        ],
      );
    });

    it("answers 400 with Google's words when the user unticked YouTube Analytics; connecting again with it restores the figures", async () => {
      const analyticsScope = 'https://www.googleapis.com/auth/yt-analytics.readonly';
      assert.ok(fake.state.authorize.scope.split(' ').includes(analyticsScope), 'Herald asks for it');
      fake.untickedScopes = new Set([analyticsScope]);
      const brand = { pick: (choices: { name: string }[]) => choices.findIndex((c) => c.name === 'Brand channel') };
      assert.equal((await connectOAuth(herald, account, 'youtube', brand)).id, channelId);
      fake.untickedScopes.clear();

      const refused = await account.callUntyped('GET', `/analytics/${channelId}?date=14`);
      assert.equal(refused.status, 400, JSON.stringify(refused.body));
      assert.equal(refused.body.code, 'network_refused');
      assert.match(refused.body.message, /YouTube answered 403: \(insufficientPermissions\) Request had insufficient authentication scopes/);
      assert.match(refused.body.message, /Connect the channel again/);

      await connectOAuth(herald, account, 'youtube', brand);
      const restored = await account.callUntyped('GET', `/analytics/${channelId}?date=14`);
      assert.equal(restored.status, 200, JSON.stringify(restored.body));
    });
  });
}
