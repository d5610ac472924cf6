import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { findProvider } from '../../src/providers/index.ts';
import { startHerald, type TestAccount, type TestHerald } from '../helpers/herald.ts';
import { storeSuite, testStores } from '../helpers/stores.ts';
import { startMediumFake, type MediumFake } from '../fakes/medium.ts';
import { channelView, publishNow, settled, uploadPng } from './publish.ts';
import { saveDraft } from './support.ts';
import { serverErrorAfterCreate } from './create-5xx.ts';
import { teardown } from '../helpers/teardown.ts';

const settingsOf = (title: string, more: Record<string, unknown> = {}) => ({ __type: 'medium', title, subtitle: 'The subtitle', ...more });

for (const store of await testStores()) {
  describe(`medium (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let fake: MediumFake;
    let account: TestAccount;
    let channelId: string;

    before(async () => {
      fake = await startMediumFake();
      herald = await startHerald(store, {
        engine: { pollMs: 50, publishTimeoutMs: 3_000 },
        env: { HERALD_MEDIUM_API_URL: `${fake.url}/v1`, HERALD_MEDIUM_FEED_URL: fake.url },
      });
      account = await herald.newAccount();
    });
    after(() =>
      teardown(
        () => herald?.close(),
        () => fake?.close(),
      ),
    );

    it('says in the connect form that Medium takes no new tokens', () => {
      assert.match(findProvider('medium')!.connectNote ?? '', /no longer supports its API.*already have an integration token/);
    });

    it('connects with an integration token, checked with GET /v1/me', async () => {
      const added = await account.callUntyped('POST', '/integrations', { identifier: 'medium', credentials: { apiKey: fake.user.token } });
      assert.equal(added.status, 201, JSON.stringify(added.body));
      channelId = added.body.id;
      assert.equal(added.body.name, 'Herald Writer');
      const [me] = fake.calls('GET /v1/me');
      assert.equal(me.headers.authorization, `Bearer ${fake.user.token}`);
      assert.equal(me.headers.accept, 'application/json');
      assert.equal(me.headers['accept-charset'], 'utf-8');
      assert.doesNotMatch(JSON.stringify((await account.callUntyped('GET', '/integrations')).body), new RegExp(fake.user.token));
    });

    it('refuses a wrong token naming the field', async () => {
      const wrong = await account.callUntyped('POST', '/integrations', { identifier: 'medium', credentials: { apiKey: '0000000000000000000' } });
      assert.equal(wrong.status, 400, JSON.stringify(wrong.body));
      assert.equal(wrong.body.errors[0].path, 'credentials.apiKey');
      assert.match(wrong.body.message, /Token was invalid\. \(code 6003\)/);
    });

    it('publishes a Markdown article on the profile: title and subtitle on top, pictures by URL, first 3 tags, canonical URL', async () => {
      const png = await uploadPng(account, herald.api);
      const postId = await publishNow(
        account,
        channelId,
        [{ content: 'Body text.', image: [{ id: png.id, path: png.path }] }],
        settingsOf('Hello Medium', {
          canonical: 'https://blog.example.com/hello',
          tags: ['one', 'two', 'three', 'four'].map((t) => ({ value: t, label: t })),
        }),
      );
      const post = await settled(account, postId);
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      const [sent] = fake.calls('POST /v1/users/:authorId/posts');
      assert.equal(sent.params.authorId, fake.user.id);
      assert.deepEqual(sent.json, {
        title: 'Hello Medium',
        contentFormat: 'markdown',
        content: `# Hello Medium\n\n## The subtitle\n\nBody text.\n\n![](${png.path})`,
        tags: ['one', 'two', 'three'],
        canonicalUrl: 'https://blog.example.com/hello',
        publishStatus: 'public',
      });
      const stored = fake.posts.at(-1)!;
      assert.equal(post.releaseId, stored.id);
      assert.equal(post.releaseURL, stored.url);
    });

    it('in a publication: public as an editor, a draft as a writer', async () => {
      const asEditor = await settled(account, await publishNow(account, channelId, ['edited'], settingsOf('Editor post', { publication: 'b969ac62a46b' })));
      assert.equal(asEditor.state, 'PUBLISHED', asEditor.error ?? '');
      assert.equal(fake.posts.at(-1)!.publicationId, 'b969ac62a46b');
      assert.equal(fake.posts.at(-1)!.publishStatus, 'public');
      const asWriter = await settled(account, await publishNow(account, channelId, ['written'], settingsOf('Writer post', { publication: 'c0ffee62a46b' })));
      assert.equal(asWriter.state, 'PUBLISHED', asWriter.error ?? '');
      assert.equal(fake.posts.at(-1)!.publishStatus, 'draft');
      assert.deepEqual(
        fake.calls('GET /v1/publications/:id/contributors').map((r) => r.params.id),
        ['b969ac62a46b', 'c0ffee62a46b'],
      );
    });

    it('has no threads: only the first item is published, with a warning; settings are checked before queueing', async () => {
      const body = (values: unknown[], settings: Record<string, unknown>) => ({
        type: 'now',
        date: new Date().toISOString(),
        shortLink: false,
        tags: [],
        posts: [{ integration: { id: channelId }, value: values, settings }],
      });
      const created = await account.callUntyped(
        'POST',
        '/posts',
        body(
          [
            { content: 'one', image: [] },
            { content: 'two', image: [] },
          ],
          settingsOf('Only one'),
        ),
      );
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const post = await settled(account, created.body[0].postId);
      assert.equal(post.thread.length, 1);
      assert.match(post.warning, /no threads/);
      assert.match(fake.posts.at(-1)!.content, /\n\none$/);

      const before = fake.posts.length;
      const bad = await account.callUntyped(
        'POST',
        '/posts',
        body([{ content: 'x', image: [] }], { __type: 'medium', title: 'Only a title', tags: [{ value: 'x'.repeat(26) }] }),
      );
      assert.equal(bad.status, 400);
      const paths = bad.body.errors.map((e: any) => e.path).sort();
      assert.deepEqual(paths, ['posts.0.settings.subtitle', 'posts.0.settings.tags.0.value']);
      assert.equal(fake.posts.length, before);
    });

    it("fails with Medium's own message when it refuses (a 403), without retrying", async () => {
      fake.failNext('POST /v1/users/:authorId/posts', { status: 403, body: { errors: [{ message: 'Application not found.', code: 6005 }] } });
      const post = await settled(account, await publishNow(account, channelId, ['refused'], settingsOf('Refused')));
      assert.equal(post.state, 'ERROR');
      assert.match(post.error, /Medium answered 403: Application not found\. \(code 6005\)/);
      assert.equal(post.thread[0].attempts.length, 1);
    });

    it('a 429 is retried and published once', async () => {
      const count = fake.posts.length;
      fake.failNext('POST /v1/users/:authorId/posts', { status: 429, headers: { 'retry-after': '1' }, body: { errors: [{ message: 'Too many requests' }] } });
      const post = await settled(account, await publishNow(account, channelId, ['slow down'], settingsOf('Slowed')));
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      assert.deepEqual(
        post.thread[0].attempts.map((a) => a.outcome),
        ['retry', 'published'],
      );
      assert.equal(fake.posts.length, count + 1);
    });

    it('after a 502 once Medium took the post, finds it in the profile feed instead of posting again', async () => {
      const count = fake.posts.length;
      fake.failNext('POST /v1/users/:authorId/posts', { handleFirst: true, status: 502, body: 'Bad Gateway' });
      const post = await settled(account, await publishNow(account, channelId, ['taken'], settingsOf('Taken then 502')), 20_000);
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      assert.equal(fake.posts.length, count + 1, 'one post');
      const stored = fake.posts.at(-1)!;
      assert.equal(post.releaseId, stored.id);
      assert.equal(post.releaseURL, stored.url);
      assert.equal(post.thread[0].attempts[0].outcome, 'unknown');
      assert.equal(fake.calls('GET /feed/:who').at(-1)!.params.who, '@heraldwriter');
    });

    it('a timeout in a publication (not in any feed) is left for the user to check, never sent twice', async () => {
      fake.failNext('POST /v1/publications/:id/posts', { hang: true });
      const post = await settled(
        account,
        await publishNow(account, channelId, ['lost'], settingsOf('Lost in publication', { publication: 'b969ac62a46b' })),
        20_000,
      );
      assert.equal(post.state, 'ERROR');
      assert.match(post.error, /may have been published/);
      assert.equal(fake.calls('POST /v1/publications/:id/posts').filter((r) => r.json.title === 'Lost in publication').length, 1);
    });

    serverErrorAfterCreate(() => ({
      fake,
      account,
      publish: (text) => publishNow(account, channelId, [text], settingsOf(text)),
      held: (text) => fake.posts.filter((p) => p.title === text).length,
    }));

    it('lists recent public posts from the feed and offers publications', async () => {
      const draft = await saveDraft(account, channelId, 'by hand', settingsOf('By hand'));
      const missing = await account.callUntyped('GET', `/posts/${draft}/missing`);
      assert.equal(missing.status, 200, JSON.stringify(missing.body));
      const newest = fake.posts.filter((p) => p.publishStatus === 'public' && !p.publicationId).at(-1)!;
      assert.equal(missing.body[0].id, newest.id);
      assert.equal(missing.body[0].url, newest.url);
      assert.equal(missing.body[0].text, newest.title);
      const publications = await account.callUntyped('POST', `/integration-trigger/${channelId}`, { methodName: 'publications', data: {} });
      assert.equal(publications.status, 200, JSON.stringify(publications.body));
      assert.deepEqual(
        publications.body.output.map((p: any) => p.id),
        ['b969ac62a46b', 'c0ffee62a46b'],
      );
    });

    it('a revoked token marks the channel for reconnection', async () => {
      fake.user.token = 'revoked0000000000000';
      const post = await settled(account, await publishNow(account, channelId, ['revoked'], settingsOf('After revoke')));
      assert.equal(post.state, 'ERROR');
      assert.match(post.error, /Medium answered 401: Token was invalid/);
      assert.equal((await channelView(account, channelId)).needsReconnect, true);
    });
  });
}
