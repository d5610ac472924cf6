import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { connectOAuth } from '../helpers/connect.ts';
import { eventually, startHerald, type TestAccount, type TestHerald } from '../helpers/herald.ts';
import { testStores, storeSuite } from '../helpers/stores.ts';
import { REDDIT_APP, REDDIT_USER, REDDIT_USER_AGENT, startRedditFake, type RedditFake } from '../fakes/reddit.ts';
import { listedChannel, publishNow, settled, uploadPng } from './support.ts';
import { serverErrorAfterCreate } from './create-5xx.ts';
import { teardown } from '../helpers/teardown.ts';

const to = (subreddit: string, title: string, more: Record<string, unknown> = {}) => ({ value: { subreddit, title, type: 'self', ...more } });

for (const store of await testStores()) {
  describe(`reddit network (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let fake: RedditFake;
    let account: TestAccount;
    let channelId: string;

    before(async () => {
      fake = await startRedditFake();
      herald = await startHerald(store, {
        // A publish may take 4 s here, so a media post that never shows up ends within the test.
        engine: { pollMs: 50, publishTimeoutMs: 4000 },
        env: {
          HERALD_REDDIT_CLIENT_ID: REDDIT_APP.id,
          HERALD_REDDIT_CLIENT_SECRET: REDDIT_APP.secret,
          HERALD_REDDIT_AUTH_URL: fake.url,
          HERALD_REDDIT_API_URL: fake.url,
          HERALD_POSTS_PER_HOUR: '1000',
        },
      });
      account = await herald.newAccount();
    });
    after(() =>
      teardown(
        () => herald.close(),
        () => fake.close(),
      ),
    );

    it('connects through OAuth 2: permanent duration, Basic client auth, a descriptive User-Agent', async () => {
      const connected = await connectOAuth(herald, account, 'reddit');
      channelId = connected.id;
      assert.equal(connected.name, REDDIT_USER.name);
      assert.equal(fake.state.authorize.duration, 'permanent');
      assert.equal(fake.state.authorize.scope, 'identity submit read flair history');
      const [token] = fake.calls('POST /api/v1/access_token');
      assert.equal(token.headers.authorization, `Basic ${Buffer.from(`${REDDIT_APP.id}:${REDDIT_APP.secret}`).toString('base64')}`);
      assert.deepEqual(token.form, { grant_type: 'authorization_code', code: 'rd-code-1', redirect_uri: `${herald.url}/connect/reddit/callback` });
      const listed = await listedChannel(account, channelId);
      assert.equal(listed.picture, 'https://styles.redditmedia.com/a.png?width=256&s=abc', 'the HTML-escaped icon URL is unescaped');
    });

    it("searches subreddits and reads a subreddit's rules through helper tools", async () => {
      const search = await account.callUntyped('POST', `/integration-trigger/${channelId}`, { methodName: 'subreddits', data: { word: 'her' } });
      assert.equal(search.status, 200, JSON.stringify(search.body));
      assert.deepEqual(
        search.body.output.map((s: any) => s.name),
        ['herald'],
      );
      const rules = await account.callUntyped('POST', `/integration-trigger/${channelId}`, { methodName: 'restrictions', data: { subreddit: 'r/herald' } });
      assert.deepEqual(rules.body.output, {
        submissionType: 'any',
        allowImages: true,
        allowVideos: false,
        isFlairRequired: true,
        flairs: [{ id: 'f1a2', name: 'News' }],
      });
      const bad = await account.callUntyped('POST', `/integration-trigger/${channelId}`, { methodName: 'subreddits', data: {} });
      assert.equal(bad.status, 400);
      assert.match(bad.body.message, /data\.word/);
    });

    it('validates the subreddit settings before the post is queued', async () => {
      const created = await account.callUntyped('POST', '/posts', {
        type: 'now',
        date: new Date().toISOString(),
        shortLink: false,
        tags: [],
        posts: [
          {
            integration: { id: channelId },
            value: [{ content: 'x', image: [] }],
            settings: { __type: 'reddit', subreddit: [to('herald', 'T', { type: 'link', is_flair_required: true })] },
          },
        ],
      });
      assert.equal(created.status, 400);
      const paths = created.body.errors.map((e: any) => e.path);
      assert.ok(paths.includes('posts.0.settings.subreddit.0.value.url'), JSON.stringify(created.body.errors));
      assert.ok(paths.includes('posts.0.settings.subreddit.0.value.flair'), JSON.stringify(created.body.errors));
    });

    it('submits a text post to each subreddit with its title and flair', async () => {
      const post = await settled(
        account,
        await publishNow(account, channelId, ['Hello **Reddit**'], {
          __type: 'reddit',
          subreddit: [to('r/herald', 'First title', { flair: { id: 'f1a2', name: 'News' } }), to('test', 'Second title')],
        }),
      );
      assert.equal(post.state, 'PUBLISHED', post.error);
      const [a, b] = fake.calls('POST /api/submit');
      assert.match(String(a.headers['user-agent']), REDDIT_USER_AGENT, "Reddit's documented form");
      assert.ok(String(a.headers['user-agent']).endsWith(`(by /u/${REDDIT_USER.name})`), 'names the connected account as the contact');
      assert.match(String(a.headers.authorization), /^bearer rd-access-/);
      assert.deepEqual(a.form, {
        api_type: 'json',
        sr: 'herald',
        title: 'First title',
        flair_id: 'f1a2',
        flair_text: 'News',
        sendreplies: 'true',
        resubmit: 'true',
        kind: 'self',
        text: 'Hello **Reddit**',
      });
      assert.equal(b.form?.sr, 'test');
      const [s1, s2] = fake.submissions;
      assert.equal(post.releaseId, `t3_${s1.id},t3_${s2.id}`);
      assert.equal(post.releaseURL, `https://www.reddit.com/r/herald/comments/${s1.id}/slug/`);
    });

    it("uploads an image to Reddit's media store and finds the media post it creates", async () => {
      const png = await uploadPng(account, herald);
      const post = await settled(
        account,
        await publishNow(account, channelId, [{ content: '', media: [png] }], { __type: 'reddit', subreddit: [to('pics', 'A picture', { type: 'media' })] }),
      );
      assert.equal(post.state, 'PUBLISHED', post.error);
      const [lease] = fake.calls('POST /api/media/asset.json');
      assert.equal(lease.form?.mimetype, 'image/png');
      const [bucket] = fake.calls('POST /media-bucket');
      assert.deepEqual(Object.keys(bucket.multipart!.fields), ['acl', 'key', 'Content-Type']);
      assert.equal(bucket.headers.authorization, undefined, 'the storage upload carries no Reddit token');
      const submit = fake.calls('POST /api/submit').at(-1)!;
      assert.equal(submit.form?.kind, 'image');
      assert.equal(submit.form?.url, `${fake.url}/media-bucket/${bucket.multipart!.fields.key}`);
      const made = fake.submissions.at(-1)!;
      assert.equal(post.releaseId, `t3_${made.id}`, "found through the user's submitted listing");
      assert.ok(fake.calls('GET /user/:name/submitted').length >= 1, "fake.calls('GET /user/:name/submitted').length >= 1");
    });

    it('never submits a media post twice when Reddit accepted it but has not listed it yet: an unknown outcome', async () => {
      fake.listingDelayMs = 10 * 60_000;
      try {
        const png = await uploadPng(account, herald);
        const post = await settled(
          account,
          await publishNow(account, channelId, [{ content: '', media: [png] }], {
            __type: 'reddit',
            subreddit: [to('pics', 'Slow to appear', { type: 'media' })],
          }),
          20_000,
        );
        assert.equal(post.state, 'ERROR');
        assert.match(post.error!, /accepted the media post to r\/pics but it has not appeared .* check r\/pics before publishing it again/);
        assert.equal(fake.submissions.filter((s) => s.title === 'Slow to appear').length, 1, 'submitted once');
        assert.deepEqual(
          post.thread[0].attempts.map((a: any) => a.outcome),
          ['unknown'],
        );
      } finally {
        fake.listingDelayMs = 0;
      }
    });

    it('publishes thread items as comments, each under the previous one', async () => {
      const post = await settled(
        account,
        await publishNow(account, channelId, ['the post', 'a comment', 'a reply'], { __type: 'reddit', subreddit: [to('herald', 'Thread')] }),
      );
      assert.ok(
        post.thread.every((t: any) => t.state === 'PUBLISHED'),
        JSON.stringify(post.thread),
      );
      const [c1, c2] = fake.comments.slice(-2);
      assert.equal(c1.parent, post.releaseId);
      assert.equal(c1.text, 'a comment');
      assert.equal(c2.parent, `t1_${c1.id}`);
      assert.equal(post.thread[2].releaseId, `t1_${c2.id}`);
      const [comment] = fake.calls('POST /api/comment');
      assert.deepEqual(comment.form, { api_type: 'json', thing_id: post.releaseId, text: 'a comment' });
    });

    it("ends in ERROR with Reddit's own error when it refuses (200 with json.errors)", async () => {
      const post = await settled(account, await publishNow(account, channelId, ['nowhere'], { __type: 'reddit', subreddit: [to('nosuchsub', 'Title')] }));
      assert.equal(post.state, 'ERROR');
      assert.match(post.error, /SUBREDDIT_NOEXIST/);
      assert.match(post.error, /that subreddit doesn't exist/);
    });

    it('refreshes an expired token and publishes', async () => {
      fake.tokens.clear();
      const post = await settled(account, await publishNow(account, channelId, ['after expiry'], { __type: 'reddit', subreddit: [to('herald', 'Expiry')] }));
      assert.equal(post.state, 'PUBLISHED', post.error);
      const refresh = fake.calls('POST /api/v1/access_token').filter((r) => r.form?.grant_type === 'refresh_token');
      assert.equal(refresh.length, 1);
      assert.match(refresh[0].form?.refresh_token ?? '', /^rd-refresh-/);
      assert.deepEqual(
        post.thread[0].attempts.map((a: any) => a.outcome),
        ['failed', 'published'],
      );
    });

    it('a token that expires while an accepted media post is looked for is renewed, and the post is not submitted again', async () => {
      // Listed 1.5 s after it is made (the first look misses it); the token stops working once Reddit has accepted the submission.
      fake.listingDelayMs = 1_500;
      try {
        const png = await uploadPng(account, herald);
        const submits = fake.calls('POST /api/submit').length;
        const postId = await publishNow(account, channelId, [{ content: '', media: [png] }], {
          __type: 'reddit',
          subreddit: [to('pics', 'Token ran out', { type: 'media' })],
        });
        await eventually(async () => fake.calls('POST /api/submit').length > submits || undefined, 10_000, 'the submission');
        fake.tokens.clear();
        const post = await settled(account, postId, 20_000);
        assert.equal(post.state, 'PUBLISHED', post.error);
        const made = fake.submissions.filter((s) => s.title === 'Token ran out');
        assert.equal(made.length, 1, 'submitted once');
        assert.equal(post.releaseId, `t3_${made[0].id}`);
        assert.deepEqual(
          post.thread[0].attempts.map((a: any) => a.outcome),
          ['failed', 'published'],
        );
        const submittedAt = fake.calls('POST /api/submit').at(-1)!.at;
        assert.equal(fake.calls('POST /api/media/asset.json').filter((r) => r.at > submittedAt).length, 0, 'the image was not uploaded again');
      } finally {
        fake.listingDelayMs = 0;
      }
    });

    it('retries after a 429 and submits once', async () => {
      const before = fake.calls('POST /api/submit').length;
      fake.failNext('POST /api/submit', {
        status: 429,
        headers: { 'retry-after': '1', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '1' },
        body: { message: 'Too Many Requests', error: 429 },
      });
      const post = await settled(account, await publishNow(account, channelId, ['after the limit'], { __type: 'reddit', subreddit: [to('herald', 'Limit')] }));
      assert.equal(post.state, 'PUBLISHED', post.error);
      assert.equal(fake.calls('POST /api/submit').length - before, 2);
      assert.equal(fake.submissions.filter((s) => s.title === 'Limit').length, 1);
    });

    serverErrorAfterCreate(() => ({
      fake,
      account,
      publish: (text) => publishNow(account, channelId, ['body'], { __type: 'reddit', subreddit: [to('herald', text)] }),
      held: (text) => fake.submissions.filter((s) => s.title === text).length,
    }));

    it('has no analytics (Reddit gives ordinary apps none): a clear 400', async () => {
      const channel = await account.callUntyped('GET', `/analytics/${channelId}?date=7`);
      assert.equal(channel.status, 400, JSON.stringify(channel.body));
      assert.equal(channel.body.code, 'analytics_unavailable');
      const post = await settled(account, await publishNow(account, channelId, ['no figures'], { __type: 'reddit', subreddit: [to('herald', 'Figures')] }));
      assert.equal(post.state, 'PUBLISHED', post.error);
      const figures = await account.callUntyped('GET', `/analytics/post/${post.id}?date=7`);
      assert.equal(figures.status, 400, JSON.stringify(figures.body));
      assert.equal(figures.body.code, 'analytics_unavailable');
      assert.match(figures.body.message, /Reddit does not report analytics/);
    });

    describe('recent posts (GET /posts/{id}/missing)', () => {
      let draftId: string;
      before(async () => {
        const draft = await account.callUntyped('POST', '/posts', {
          type: 'draft',
          date: new Date().toISOString(),
          shortLink: false,
          tags: [],
          posts: [
            {
              integration: { id: channelId },
              value: [{ content: 'by hand', image: [] }],
              settings: { __type: 'reddit', subreddit: [to('herald', 'By hand')] },
            },
          ],
        });
        assert.equal(draft.status, 201, JSON.stringify(draft.body));
        draftId = draft.body[0].postId;
      });

      it('asks to connect again when the channel was connected without the history scope', async () => {
        const granted = new Map(fake.scopes);
        for (const [token, scopes] of fake.scopes)
          fake.scopes.set(
            token,
            scopes.filter((s) => s !== 'history'),
          );
        try {
          const missing = await account.callUntyped('GET', `/posts/${draftId}/missing`);
          assert.equal(missing.status, 400, JSON.stringify(missing.body));
          assert.equal(missing.body.code, 'network_refused');
          assert.match(missing.body.message, /Reddit answered 403: insufficient_scope: .*connect it again/);
        } finally {
          for (const [token, scopes] of granted) fake.scopes.set(token, scopes);
        }
      });

      it("lists the user's latest submissions, newest first, with permalinks and the ids publishing returns", async () => {
        const missing = await account.callUntyped('GET', `/posts/${draftId}/missing`);
        assert.equal(missing.status, 200, JSON.stringify(missing.body));
        const newest = [...fake.submissions].reverse().slice(0, 25);
        assert.deepEqual(
          missing.body,
          newest.map((s) => ({
            id: `t3_${s.id}`,
            url: `https://www.reddit.com/r/${s.sr}/comments/${s.id}/slug/`,
            text: s.title,
            at: new Date(s.created * 1000).toISOString(),
          })),
        );
        const sent = fake.calls('GET /user/:name/submitted').at(-1)!;
        assert.equal(sent.path, `/user/${REDDIT_USER.name}/submitted`);
        assert.deepEqual(sent.query, { sort: 'new', limit: '25', raw_json: '1' });
        // The id is what a published post keeps as its release id.
        const published = (await account.callUntyped('GET', '/posts?startDate=2000-01-01T00:00:00Z&endDate=2100-01-01T00:00:00Z')).body.posts.find(
          (p: any) => p.releaseId === missing.body[0].id,
        );
        assert.ok(published, 'the newest submission is a post Herald published');
      });
    });
  });
}
