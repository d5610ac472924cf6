import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { findProvider } from '../../src/providers/index.ts';
import { startHerald, type TestAccount, type TestHerald } from '../helpers/herald.ts';
import { storeSuite, testStores } from '../helpers/stores.ts';
import { PRO_MESSAGE, startHashnodeFake, type HashnodeFake } from '../fakes/hashnode.ts';
import { channelView, publishNow, settled, uploadPng } from './publish.ts';
import { saveDraft } from './support.ts';
import { serverErrorAfterCreate } from './create-5xx.ts';
import { teardown } from '../helpers/teardown.ts';

const PRO = '65b1c0ffee0000000000bbbb';
const FREE = '65b1c0ffee0000000000cccc';
const settingsOf = (title: string, more: Record<string, unknown> = {}) => ({
  __type: 'hashnode',
  title,
  publication: PRO,
  tags: [{ value: 'graphql', label: 'GraphQL' }],
  ...more,
});

for (const store of await testStores()) {
  describe(`hashnode (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let fake: HashnodeFake;
    let account: TestAccount;
    let channelId: string;
    let firstPostId: string;

    before(async () => {
      fake = await startHashnodeFake();
      herald = await startHerald(store, { engine: { pollMs: 50, publishTimeoutMs: 3_000 }, env: { HERALD_HASHNODE_API_URL: fake.url } });
      account = await herald.newAccount();
    });
    after(() =>
      teardown(
        () => herald?.close(),
        () => fake?.close(),
      ),
    );

    it('says in the connect form that publishing needs the Pro plan', () => {
      assert.match(findProvider('hashnode')!.connectNote ?? '', /Pro plan/);
    });

    it('connects with a Personal Access Token, checked with the me query', async () => {
      const added = await account.callUntyped('POST', '/integrations', { identifier: 'hashnode', credentials: { apiKey: fake.user.token } });
      assert.equal(added.status, 201, JSON.stringify(added.body));
      channelId = added.body.id;
      assert.equal(added.body.name, 'Herald Writer');
      const [me] = fake.calls('POST /');
      assert.equal(me.headers.authorization, `Bearer ${fake.user.token}`);
      assert.match(me.json.query, /\bme\s*\{/);
      assert.doesNotMatch(JSON.stringify((await account.callUntyped('GET', '/integrations')).body), /hn-pat-/);
    });

    it('refuses a wrong token naming the field', async () => {
      const wrong = await account.callUntyped('POST', '/integrations', { identifier: 'hashnode', credentials: { apiKey: 'hn-pat-wrong-wrong' } });
      assert.equal(wrong.status, 400, JSON.stringify(wrong.body));
      assert.equal(wrong.body.errors[0].path, 'credentials.apiKey');
      assert.match(wrong.body.message, /UNAUTHENTICATED/);
    });

    it('lists publications through a tool', async () => {
      const listed = await account.callUntyped('POST', `/integration-trigger/${channelId}`, { methodName: 'publications', data: {} });
      assert.equal(listed.status, 200, JSON.stringify(listed.body));
      assert.deepEqual(
        listed.body.output.map((p: any) => p.id),
        [PRO, FREE],
      );
    });

    it('publishes with publishPost in the gql-beta shape: tags by slug, coverImage, originalArticleURL', async () => {
      const png = await uploadPng(account, herald.api);
      const postId = await publishNow(
        account,
        channelId,
        [{ content: '## Hello\n\nMarkdown body.', image: [{ id: png.id, path: png.path }] }],
        settingsOf('Hello Hashnode', {
          tags: [
            { value: 'graphql', label: 'GraphQL' },
            { value: '56744721958ef13879b94cad', label: 'Web Development' },
          ],
          subtitle: 'A subtitle',
          main_image: { id: 'c', path: 'https://cdn.example.com/cover.png' },
          canonical: 'https://blog.example.com/hello',
        }),
      );
      const post = await settled(account, postId);
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      firstPostId = postId;
      const sent = fake.calls('POST /').find((r) => /publishPost/.test(r.json.query))!;
      assert.equal(sent.headers.authorization, `Bearer ${fake.user.token}`);
      assert.deepEqual(sent.json.variables.input, {
        publicationId: PRO,
        title: 'Hello Hashnode',
        contentMarkdown: `## Hello\n\nMarkdown body.\n\n![](${png.path})`,
        tags: [
          { slug: 'graphql', name: 'GraphQL' },
          { slug: 'web-development', name: 'Web Development' },
        ],
        subtitle: 'A subtitle',
        coverImage: 'https://cdn.example.com/cover.png',
        originalArticleURL: 'https://blog.example.com/hello',
      });
      const stored = fake.posts.at(-1)!;
      assert.equal(post.releaseId, stored.id);
      assert.equal(post.releaseURL, 'https://herald.hashnode.dev/hello-hashnode');
    });

    it('has no threads: only the first item is published, with a warning', async () => {
      const created = await account.callUntyped('POST', '/posts', {
        type: 'now',
        date: new Date().toISOString(),
        shortLink: false,
        tags: [],
        posts: [
          {
            integration: { id: channelId },
            value: [
              { content: 'one', image: [] },
              { content: 'two', image: [] },
            ],
            settings: settingsOf('Only the first'),
          },
        ],
      });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const post = await settled(account, created.body[0].postId);
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      assert.equal(post.thread.length, 1);
      assert.match(post.warning, /no threads/);
      assert.equal(fake.posts.at(-1)!.contentMarkdown, 'one');
    });

    it('refuses before queueing: a title under 6 characters, no publication, no tag, 16 tags', async () => {
      const before = fake.posts.length;
      const body = (settings: Record<string, unknown>) => ({
        type: 'now',
        date: new Date().toISOString(),
        shortLink: false,
        tags: [],
        posts: [{ integration: { id: channelId }, value: [{ content: 'x', image: [] }], settings }],
      });
      const bad = await account.callUntyped('POST', '/posts', body({ __type: 'hashnode', title: 'Short', tags: [] }));
      assert.equal(bad.status, 400);
      const paths = bad.body.errors.map((e: any) => e.path).sort();
      assert.deepEqual(paths, ['posts.0.settings.publication', 'posts.0.settings.tags', 'posts.0.settings.title']);
      const many = await account.callUntyped(
        'POST',
        '/posts',
        body(settingsOf('Many tags', { tags: Array.from({ length: 16 }, (_, i) => ({ value: `t${i}`, label: `T${i}` })) })),
      );
      assert.equal(many.status, 400);
      assert.match(JSON.stringify(many.body.errors), /at most 15 tags/);
      assert.equal(fake.posts.length, before);
    });

    it('a publication without Pro fails with Hashnode’s own message, once', async () => {
      const before = fake.calls('POST /').length;
      const post = await settled(account, await publishNow(account, channelId, ['free'], settingsOf('Not on Pro', { publication: FREE })));
      assert.equal(post.state, 'ERROR');
      assert.equal(post.error, `Hashnode: FORBIDDEN: ${PRO_MESSAGE}`);
      assert.equal(fake.calls('POST /').length, before + 1, 'not retried');
    });

    it('an INTERNAL_SERVER_ERROR after the mutation is an unknown outcome: found in the publication, not posted again', async () => {
      const count = fake.posts.length;
      fake.failNext('POST /', {
        handleFirst: true,
        status: 200,
        body: { errors: [{ message: 'Internal server error', extensions: { code: 'INTERNAL_SERVER_ERROR' } }], data: null },
      });
      const post = await settled(account, await publishNow(account, channelId, ['maybe'], settingsOf('Maybe published')), 20_000);
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      assert.equal(fake.posts.length, count + 1, 'one post');
      assert.equal(post.releaseId, fake.posts.at(-1)!.id);
      assert.equal(post.thread[0].attempts[0].outcome, 'unknown');
      assert.match(post.thread[0].attempts[0].detail, /INTERNAL_SERVER_ERROR/);
    });

    it('a timeout before Hashnode made the post: not found, so not sent again, and the user is told to check', async () => {
      const count = fake.posts.length;
      fake.failNext('POST /', { hang: true });
      const post = await settled(account, await publishNow(account, channelId, ['never arrived'], settingsOf('Never arrived')), 20_000);
      assert.equal(post.state, 'ERROR');
      assert.match(post.error, /may have been published.*Hashnode does not show it yet/);
      assert.equal(fake.posts.length, count);
      assert.equal(fake.calls('POST /').filter((r) => r.json?.variables?.input?.title === 'Never arrived').length, 1);
    });

    serverErrorAfterCreate(() => ({
      fake,
      account,
      publish: (text) => publishNow(account, channelId, [text], settingsOf(text)),
      held: (text) => fake.posts.filter((p) => p.title === text).length,
    }));

    it('the retired endpoint (a 301) fails at once with a message naming the setting', async () => {
      fake.legacy = true;
      try {
        const post = await settled(account, await publishNow(account, channelId, ['moved'], settingsOf('Endpoint moved')));
        assert.equal(post.state, 'ERROR');
        assert.match(post.error, /redirected.*HERALD_HASHNODE_API_URL must be https:\/\/gql-beta\.hashnode\.com/);
      } finally {
        fake.legacy = false;
      }
    });

    it('lists recent posts of Pro publications and reports a post’s figures', async () => {
      const draft = await saveDraft(account, channelId, 'by hand', settingsOf('By hand post'));
      const missing = await account.callUntyped('GET', `/posts/${draft}/missing`);
      assert.equal(missing.status, 200, JSON.stringify(missing.body));
      const newest = fake.posts.at(-1)!;
      assert.deepEqual(missing.body[0], { id: newest.id, url: newest.url, text: newest.title, at: newest.publishedAt });
      const first = fake.posts[0];
      Object.assign(first, { views: 321, reactionCount: 12, responseCount: 4 });
      const figures = await account.callUntyped('GET', `/analytics/post/${firstPostId}?date=7`);
      assert.equal(figures.status, 200, JSON.stringify(figures.body));
      assert.deepEqual(
        figures.body.map((s: any) => [s.label, s.data[0].total]),
        [
          ['Views', 321],
          ['Reactions', 12],
          ['Responses', 4],
        ],
      );
    });

    it('a revoked token marks the channel for reconnection', async () => {
      fake.user.token = 'hn-pat-rotated-0000';
      const post = await settled(account, await publishNow(account, channelId, ['revoked'], settingsOf('After revoke')));
      assert.equal(post.state, 'ERROR');
      assert.match(post.error, /UNAUTHENTICATED/);
      assert.equal((await channelView(account, channelId)).needsReconnect, true);
    });
  });
}
