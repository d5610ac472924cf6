/**
 * WordPress against a fake site, for what a real one cannot be made to do on
 * demand: failures after the post was created, rate limits, firewall pages and
 * a password revoked mid-way. The real site is in wordpress-real.test.ts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startHerald, type TestAccount, type TestHerald } from '../helpers/herald.ts';
import { storeSuite, testStores } from '../helpers/stores.ts';
import { slugOf } from '../../src/providers/networks/wordpress.ts';
import { AUTHOR, CATEGORY_ID, startWordPressFake, type WordPressFake } from '../fakes/wordpress.ts';
import { channelView, publishNow, settled, uploadPng } from './publish.ts';
import { serverErrorAfterCreate } from './create-5xx.ts';
import { teardown } from '../helpers/teardown.ts';

describe('wordpress slugs', () => {
  it('makes a lower-case ASCII slug from the title, empty without Latin letters or digits', () => {
    assert.equal(slugOf('Ça marche: Herald & WordPress 2!'), 'ca-marche-herald-wordpress-2');
    assert.equal(slugOf('日本語'), '');
  });
});

for (const store of await testStores()) {
  describe(`wordpress (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let fake: WordPressFake;
    let account: TestAccount;
    let channelId: string;
    const created = (title: string) => fake.calls('POST /wp-json/wp/v2/:type').filter((c) => c.json?.title === title);

    before(async () => {
      fake = await startWordPressFake();
      herald = await startHerald(store, { engine: { pollMs: 50, publishTimeoutMs: 3_000 } });
      account = await herald.newAccount();
    });
    after(() =>
      teardown(
        () => herald?.close(),
        () => fake?.close(),
      ),
    );

    it('connects with Basic auth on users/me, refusing a wrong password and an unknown user by field', async () => {
      const wrong = await account.call('POST', '/integrations', {
        identifier: 'wordpress',
        credentials: { url: fake.url, username: AUTHOR.login, password: 'nope nope nope nope nope nope' },
      });
      assert.equal(wrong.status, 400, JSON.stringify(wrong.body));
      assert.equal(wrong.body.errors[0].path, 'credentials.password');
      assert.match(wrong.body.message, /401: The provided password is an invalid application password/);
      const nobody = await account.call('POST', '/integrations', {
        identifier: 'wordpress',
        credentials: { url: fake.url, username: 'nobody', password: AUTHOR.password },
      });
      assert.equal(nobody.status, 400);
      assert.equal(nobody.body.errors[0].path, 'credentials.username');
      assert.match(nobody.body.message, /Unknown username/);

      const added = await account.call('POST', '/integrations', {
        identifier: 'wordpress',
        credentials: { url: `${fake.url}/`, username: AUTHOR.login, password: AUTHOR.password.replace(/(.{4})/g, '$1 ').trim() },
      });
      assert.equal(added.status, 201, JSON.stringify(added.body));
      channelId = added.body.id;
      assert.equal(added.body.name, 'Fake Press');
      assert.equal(added.body.picture, 'https://gravatar.test/96');
      const me = fake.calls('GET /wp-json/wp/v2/users/me').at(-1)!;
      assert.equal(me.query.context, 'edit');
      assert.equal(me.headers.authorization, `Basic ${Buffer.from(`${AUTHOR.login}:${AUTHOR.password}`).toString('base64')}`);
    });

    it('refuses an address that is not a WordPress site, naming the url', async () => {
      const notWp = await account.call('POST', '/integrations', {
        identifier: 'wordpress',
        credentials: { url: `${fake.url}/not-a-site`, username: AUTHOR.login, password: AUTHOR.password },
      });
      assert.equal(notWp.status, 400, JSON.stringify(notWp.body));
      assert.equal(notWp.body.errors[0].path, 'credentials.url');
    });

    it('refuses a post without title or type, with two images, before accepting it', async () => {
      const png = await uploadPng(account, herald.api);
      const noTitle = await account.call('POST', '/posts', {
        type: 'now',
        date: new Date().toISOString(),
        shortLink: false,
        tags: [],
        posts: [{ integration: { id: channelId }, value: [{ content: 'x', image: [] }], settings: { __type: 'wordpress', type: 'posts' } }],
      });
      assert.equal(noTitle.status, 400);
      assert.match(JSON.stringify(noTitle.body.errors), /settings\.title/);
      const twoImages = await account.call('POST', '/posts', {
        type: 'now',
        date: new Date().toISOString(),
        shortLink: false,
        tags: [],
        posts: [
          {
            integration: { id: channelId },
            value: [{ content: 'x', image: [png, png].map(({ id, path }) => ({ id, path })) }],
            settings: { __type: 'wordpress', type: 'posts', title: 'Two images' },
          },
        ],
      });
      assert.equal(twoImages.status, 400);
      assert.match(twoImages.body.message, /image/);
    });

    it('publishes the post with the featured image, slug, categories and tags it was given', async () => {
      const png = await uploadPng(account, herald.api, 'cover.png');
      const post = await settled(
        account,
        await publishNow(account, channelId, [{ content: '<p>Body</p>', image: [{ id: png.id, path: png.path }] }], {
          title: 'Hello & welcome',
          type: 'posts',
          categories: [CATEGORY_ID],
        }),
      );
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      const [upload] = fake.calls('POST /wp-json/wp/v2/media');
      assert.equal(upload.headers['content-type'], 'image/png');
      assert.match(upload.headers['content-disposition'] ?? '', /^attachment; filename=".+\.png"$/);
      assert.deepEqual(upload.raw, png.bytes);
      const [sent] = created('Hello & welcome');
      assert.deepEqual(sent.json, {
        title: 'Hello & welcome',
        content: '<p>Body</p>',
        status: 'publish',
        slug: 'hello-welcome',
        categories: [CATEGORY_ID],
        featured_media: fake.media[0].id,
      });
      assert.equal(post.releaseId, String(fake.posts.at(-1)!.id));
      assert.equal(post.releaseURL, `${fake.url}/hello-welcome/`);
    });

    it("fails on an unknown term id with WordPress's message naming the field, once", async () => {
      const post = await settled(account, await publishNow(account, channelId, ['x'], { title: 'Bad term', type: 'posts', tags: [999] }));
      assert.equal(post.state, 'ERROR');
      assert.match(post.error ?? '', /WordPress answered 400: Invalid parameter\(s\): tags \(tags\[0\] is not a valid term id\.\) \[rest_invalid_param\]/);
      assert.equal(created('Bad term').length, 1);
    });

    it('a 502 after WordPress created the post: found by its slug (the -2 WordPress gave it), never sent twice', async () => {
      // An older post of the same title takes the plain slug, so this one becomes -2.
      const first = await settled(account, await publishNow(account, channelId, ['first'], { title: 'Twice told', type: 'posts' }));
      assert.equal(first.state, 'PUBLISHED', first.error ?? '');
      fake.failNext('POST /wp-json/wp/v2/:type', {
        handleFirst: true,
        status: 502,
        body: '<html><body>502 Bad Gateway</body></html>',
        headers: { 'content-type': 'text/html' },
      });
      const post = await settled(account, await publishNow(account, channelId, ['second'], { title: 'Twice told', type: 'posts' }), 20_000);
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      const stored = fake.posts.find((p) => p.slug === 'twice-told-2')!;
      assert.equal(post.releaseId, String(stored.id), 'the post the failed request made, not the older one');
      assert.equal(created('Twice told').length, 2, 'one request per post');
      const lookup = fake.calls('GET /wp-json/wp/v2/:type').at(-1)!;
      assert.match(lookup.query.slug, /^twice-told,twice-told-2,twice-told-3/);
      assert.equal(lookup.query.author, String(AUTHOR.id));
      assert.equal(lookup.query.context, 'edit');
      assert.deepEqual(
        post.thread[0].attempts.map((a) => a.outcome),
        ['unknown'],
      );
    });

    it('a timeout where WordPress created nothing: ERROR saying it is not there, not sent again', async () => {
      fake.failNext('POST /wp-json/wp/v2/:type', { hang: true });
      const post = await settled(account, await publishNow(account, channelId, ['lost'], { title: 'Never arrived', type: 'posts' }), 20_000);
      assert.equal(post.state, 'ERROR');
      assert.match(post.error ?? '', /may have been published.*WordPress does not show it yet/s);
      assert.equal(created('Never arrived').length, 1);
      assert.equal(fake.posts.filter((p) => p.title === 'Never arrived').length, 0);
    });

    it('waits the Retry-After of a 429 and publishes once', async () => {
      const title = 'After a 429';
      fake.failNext('POST /wp-json/wp/v2/:type', { status: 429, headers: { 'retry-after': '1', 'content-type': 'text/html' }, body: '<h1>Slow down</h1>' });
      const post = await settled(account, await publishNow(account, channelId, ['x'], { title, type: 'posts' }));
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      assert.deepEqual(
        post.thread[0].attempts.map((a) => a.outcome),
        ['retry', 'published'],
      );
      const [limited, sent] = created(title);
      assert.ok(sent.at - limited.at >= 1000, 'the retry came after Retry-After');
      assert.equal(fake.posts.filter((p) => p.title === title).length, 1);
    });

    it('a 503 with Retry-After on the create is looked up by its slug, not sent again: not there, ERROR saying so', async () => {
      const title = 'After a 503';
      fake.failNext('POST /wp-json/wp/v2/:type', { status: 503, headers: { 'retry-after': '1', 'content-type': 'text/html' }, body: '<h1>Slow down</h1>' });
      const post = await settled(account, await publishNow(account, channelId, ['x'], { title, type: 'posts' }), 20_000);
      assert.equal(post.state, 'ERROR');
      assert.match(post.error ?? '', /WordPress answered 503.*may have been published.*does not show it yet/);
      assert.deepEqual(
        post.thread[0].attempts.map((a) => a.outcome),
        ['unknown'],
      );
      assert.equal(created(title).length, 1, 'sent once');
    });

    serverErrorAfterCreate(() => ({
      fake,
      account,
      publish: (text) => publishNow(account, channelId, ['x'], { title: text, type: 'posts' }),
      held: (text) => fake.posts.filter((p) => p.title === text).length,
    }));

    it("a firewall's HTML 403 fails the post with the status and what the page says", async () => {
      fake.failNext('POST /wp-json/wp/v2/:type', {
        status: 403,
        headers: { 'content-type': 'text/html' },
        body: '<html><h1>Access denied by the firewall</h1></html>',
      });
      const post = await settled(account, await publishNow(account, channelId, ['x'], { title: 'Blocked', type: 'posts' }));
      assert.equal(post.state, 'ERROR');
      assert.match(post.error ?? '', /WordPress answered 403: not WordPress's own answer .*: Access denied by the firewall/);
    });

    it('marks the channel for reconnection when the application password is revoked', async () => {
      fake.revoke(AUTHOR.login);
      const post = await settled(account, await publishNow(account, channelId, ['x'], { title: 'After revoke', type: 'posts' }));
      assert.equal(post.state, 'ERROR');
      assert.match(post.error ?? '', /must be reconnected: WordPress answered 401: The provided password is an invalid application password/);
      assert.equal((await channelView(account, channelId)).needsReconnect, true);
    });
  });
}
