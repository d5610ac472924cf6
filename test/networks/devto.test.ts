import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startHerald, type TestAccount, type TestHerald } from '../helpers/herald.ts';
import { storeSuite, testStores } from '../helpers/stores.ts';
import { ACCEPT_V1, startDevtoFake, type DevtoFake } from '../fakes/devto.ts';
import { channelView, publishNow, settled, uploadPng } from './publish.ts';
import { saveDraft } from './support.ts';
import { serverErrorAfterCreate } from './create-5xx.ts';
import { teardown } from '../helpers/teardown.ts';

const settingsOf = (title: string, more: Record<string, unknown> = {}) => ({ __type: 'devto', title, ...more });

for (const store of await testStores()) {
  describe(`devto (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let fake: DevtoFake;
    let account: TestAccount;
    let channelId: string;
    let firstPostId: string;

    before(async () => {
      fake = await startDevtoFake();
      herald = await startHerald(store, { engine: { pollMs: 50, publishTimeoutMs: 1_500 }, env: { HERALD_DEVTO_API_URL: `${fake.url}/api` } });
      account = await herald.newAccount();
    });
    after(() =>
      teardown(
        () => herald?.close(),
        () => fake?.close(),
      ),
    );

    it('connects with an API key, checked with GET /users/me in API v1', async () => {
      const added = await account.callUntyped('POST', '/integrations', { identifier: 'devto', credentials: { apiKey: fake.users[0].apiKey } });
      assert.equal(added.status, 201, JSON.stringify(added.body));
      channelId = added.body.id;
      assert.equal(added.body.name, 'Herald Writer');
      const [me] = fake.calls('GET /api/users/me');
      assert.equal(me.headers['api-key'], fake.users[0].apiKey);
      assert.equal(me.headers.accept, ACCEPT_V1);
      assert.equal(me.headers.authorization, undefined);
      assert.doesNotMatch(JSON.stringify((await account.callUntyped('GET', '/integrations')).body), /devkey-0123/);
    });

    it('refuses a wrong API key naming the field', async () => {
      const wrong = await account.callUntyped('POST', '/integrations', { identifier: 'devto', credentials: { apiKey: 'devkey-not-a-real-one' } });
      assert.equal(wrong.status, 400, JSON.stringify(wrong.body));
      assert.equal(wrong.body.errors[0].path, 'credentials.apiKey');
      assert.match(wrong.body.message, /401: unauthorized/);
      assert.doesNotMatch(wrong.body.message, /devkey-not-a-real-one/);
    });

    it('publishes an article (published, tags, cover, canonical, organization) and links it', async () => {
      const postId = await publishNow(
        account,
        channelId,
        ['# Hello DEV\n\nBody text.'],
        settingsOf('Hello DEV', {
          tags: [
            { value: 'javascript', label: 'javascript' },
            { value: 'webdev', label: 'webdev' },
          ],
          main_image: { id: 'x', path: 'https://cdn.example.com/cover.png' },
          canonical: 'https://blog.example.com/hello',
          organization: '77',
        }),
      );
      const post = await settled(account, postId);
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      firstPostId = postId;
      const [sent] = fake.calls('POST /api/articles');
      assert.equal(sent.headers.accept, ACCEPT_V1);
      assert.equal(sent.headers['api-key'], fake.users[0].apiKey);
      assert.deepEqual(sent.json, {
        article: {
          title: 'Hello DEV',
          body_markdown: '# Hello DEV\n\nBody text.',
          published: true,
          tags: ['javascript', 'webdev'],
          main_image: 'https://cdn.example.com/cover.png',
          canonical_url: 'https://blog.example.com/hello',
          organization_id: 77,
        },
      });
      const article = fake.articles.at(-1)!;
      assert.equal(article.published, true);
      assert.equal(post.releaseId, String(article.id));
      assert.equal(post.releaseURL, article.url);
    });

    it('puts pictures into the Markdown by their public URLs, and keeps a leading --- block from overriding the title', async () => {
      const png = await uploadPng(account, herald.api);
      const content = '---\ntitle: Hijacked\npublished: false\n---\nText after a rule';
      const post = await settled(
        account,
        await publishNow(account, channelId, [{ content, image: [{ id: png.id, path: png.path }] }], settingsOf('Own title')),
      );
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      const article = fake.articles.at(-1)!;
      assert.equal(article.title, 'Own title');
      assert.equal(article.published, true);
      assert.match(article.body_markdown, /^<!-- -->\n\n---\ntitle: Hijacked/);
      assert.ok(article.body_markdown.endsWith(`![](${png.path})`), article.body_markdown);
    });

    it('has no threads: only the first item becomes the article, with a warning', async () => {
      const created = await account.callUntyped('POST', '/posts', {
        type: 'now',
        date: new Date().toISOString(),
        shortLink: false,
        tags: [],
        posts: [
          {
            integration: { id: channelId },
            value: [
              { content: 'first', image: [] },
              { content: 'second', image: [] },
            ],
            settings: settingsOf('Only first'),
          },
        ],
      });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const post = await settled(account, created.body[0].postId);
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      assert.equal(post.thread.length, 1);
      assert.match(post.warning, /no threads/);
      assert.equal(fake.articles.at(-1)!.body_markdown, 'first');
    });

    it('refuses before queueing: no title, a title over 128, five tags, a tag with a hyphen', async () => {
      const before = fake.calls('POST /api/articles').length;
      const body = (settings: Record<string, unknown>) => ({
        type: 'now',
        date: new Date().toISOString(),
        shortLink: false,
        tags: [],
        posts: [{ integration: { id: channelId }, value: [{ content: 'x', image: [] }], settings }],
      });
      const noTitle = await account.callUntyped('POST', '/posts', body({ __type: 'devto' }));
      assert.equal(noTitle.status, 400);
      assert.ok(
        noTitle.body.errors.some((e: any) => e.path === 'posts.0.settings.title'),
        JSON.stringify(noTitle.body),
      );
      const long = await account.callUntyped('POST', '/posts', body(settingsOf('t'.repeat(129))));
      assert.equal(long.status, 400);
      assert.ok(
        long.body.errors.some((e: any) => e.path === 'posts.0.settings.title'),
        'a too-long title is refused at the title setting',
      );
      const five = await account.callUntyped(
        'POST',
        '/posts',
        body(settingsOf('Tags', { tags: ['a', 'b', 'c', 'd', 'e'].map((t) => ({ value: t, label: t })) })),
      );
      assert.equal(five.status, 400);
      assert.match(JSON.stringify(five.body.errors), /at most 4 tags/);
      const hyphen = await account.callUntyped('POST', '/posts', body(settingsOf('Tags', { tags: [{ value: 'web-dev', label: 'web-dev' }] })));
      assert.equal(hyphen.status, 400);
      assert.match(JSON.stringify(hyphen.body.errors), /letters and digits only/);
      assert.equal(fake.calls('POST /api/articles').length, before, 'nothing sent');
    });

    it("fails with DEV's own message when it refuses (canonical URL taken), without retrying", async () => {
      const before = fake.calls('POST /api/articles').length;
      const post = await settled(
        account,
        await publishNow(account, channelId, ['again'], settingsOf('Other', { canonical: 'https://blog.example.com/hello' })),
      );
      assert.equal(post.state, 'ERROR');
      assert.match(post.error, /DEV answered 422: Canonical url has already been taken/);
      assert.equal(fake.calls('POST /api/articles').length, before + 1);
    });

    it('a repeat of an article the user already has is refused as a duplicate', async () => {
      const post = await settled(account, await publishNow(account, channelId, ['first'], settingsOf('Only first')));
      assert.equal(post.state, 'ERROR');
      assert.match(post.error, /Body markdown has already been taken.*already have an article/);
    });

    it('waits for Retry-After on 429 (one write a second) and publishes once', async () => {
      fake.throttleWrites = true;
      try {
        // A write that just happened: the engine's first try falls within its second.
        fake.lastWrite.set(fake.users[0].apiKey, Date.now() + 300);
        const count = fake.articles.length;
        const post = await settled(account, await publishNow(account, channelId, ['throttled'], settingsOf('Throttled')));
        assert.equal(post.state, 'PUBLISHED', post.error ?? '');
        assert.deepEqual(
          post.thread[0].attempts.map((a) => a.outcome),
          ['retry', 'published'],
        );
        assert.equal(fake.articles.length, count + 1);
        const [limited, sent] = fake.calls('POST /api/articles').slice(-2);
        assert.ok(sent.at - limited.at >= 1000, 'after Retry-After');
      } finally {
        fake.throttleWrites = false;
      }
    });

    it('after a timeout once DEV took the article, finds it among the user’s articles instead of posting again', async () => {
      const count = fake.articles.length;
      fake.failNext('POST /api/articles', { handleThenHang: true });
      const post = await settled(account, await publishNow(account, channelId, ['lost answer'], settingsOf('Lost answer')), 20_000);
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      assert.equal(fake.articles.length, count + 1, 'one article');
      assert.equal(post.releaseId, String(fake.articles.at(-1)!.id));
      assert.equal(post.thread[0].attempts[0].outcome, 'unknown');
      assert.ok(fake.calls('GET /api/articles/me/all').length > 0, 'looked up');
    });

    it('after a 502 before DEV stored anything, sends again (a repeat would be refused as taken): one article', async () => {
      const count = fake.articles.length;
      fake.failNext('POST /api/articles', { status: 502, body: '<html>502 Bad Gateway</html>', headers: { 'content-type': 'text/html' } });
      const post = await settled(account, await publishNow(account, channelId, ['gateway'], settingsOf('Gateway')), 20_000);
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      assert.deepEqual(
        post.thread[0].attempts.map((a) => a.outcome),
        ['unknown', 'published'],
      );
      assert.equal(fake.articles.length, count + 1);
    });

    it('a 502 after DEV stored the article ends as that article: the repeat is refused as taken and the first linked', async () => {
      const count = fake.articles.length;
      // The lookup misses it (as a listing served from a cache would), so the repeat goes out.
      fake.failNext('GET /api/articles/me/all', { status: 200, body: [] });
      fake.failNext('POST /api/articles', { handleFirst: true, status: 502, body: 'Bad Gateway' });
      const post = await settled(account, await publishNow(account, channelId, ['stored then 502'], settingsOf('Stored then 502')), 20_000);
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      assert.equal(fake.articles.length, count + 1, 'one article');
      assert.equal(post.releaseId, String(fake.articles.at(-1)!.id));
      assert.equal(fake.calls('POST /api/articles').filter((r) => r.json.article.title === 'Stored then 502').length, 2);
    });

    serverErrorAfterCreate(() => ({
      fake,
      account,
      publish: (text) => publishNow(account, channelId, [text], settingsOf(text)),
      held: (text) => fake.articles.filter((a) => a.title === text).length,
    }));

    it('lists recent articles, reports figures, and offers organizations and tags', async () => {
      const draft = await saveDraft(account, channelId, 'by hand', settingsOf('By hand'));
      const missing = await account.callUntyped('GET', `/posts/${draft}/missing`);
      assert.equal(missing.status, 200, JSON.stringify(missing.body));
      const newest = fake.articles.at(-1)!;
      assert.equal(missing.body[0].id, String(newest.id));
      assert.equal(missing.body[0].url, newest.url);

      const first = fake.articles[0];
      first.page_views_count = 120;
      first.public_reactions_count = 9;
      first.comments_count = 2;
      const figures = await account.callUntyped('GET', `/analytics/post/${firstPostId}?date=7`);
      assert.equal(figures.status, 200, JSON.stringify(figures.body));
      assert.deepEqual(
        figures.body.map((s: any) => [s.label, s.data[0].total]),
        [
          ['Views', 120],
          ['Reactions', 9],
          ['Comments', 2],
        ],
      );
      const channel = await account.callUntyped('GET', `/analytics/${channelId}?date=7`);
      assert.equal(channel.status, 200, JSON.stringify(channel.body));
      assert.deepEqual(channel.body[0].label, 'Articles');
      assert.equal(channel.body[0].data[0].total, fake.articles.filter((a) => a.published).length);

      const orgs = await account.callUntyped('POST', `/integration-trigger/${channelId}`, { methodName: 'organizations', data: {} });
      assert.equal(orgs.status, 200, JSON.stringify(orgs.body));
      assert.deepEqual(orgs.body.output, [{ id: 77, name: 'Herald Org', username: 'heraldorg' }]);
      const tags = await account.callUntyped('POST', `/integration-trigger/${channelId}`, { methodName: 'tags', data: {} });
      assert.deepEqual(tags.body.output[0], { value: 'javascript', label: 'javascript' });
    });

    it('a revoked key marks the channel for reconnection', async () => {
      fake.users[0].apiKey = 'devkey-rotated-000000';
      const post = await settled(account, await publishNow(account, channelId, ['revoked'], settingsOf('Revoked')));
      assert.equal(post.state, 'ERROR');
      assert.match(post.error, /DEV answered 401: unauthorized/);
      assert.equal((await channelView(account, channelId)).needsReconnect, true);
    });
  });
}
