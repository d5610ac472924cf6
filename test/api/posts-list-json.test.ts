/**
 * GET /posts has the database build the list's JSON (src/db/json-shape.ts), while
 * GET /posts/{id} maps the same post in JavaScript. Both must show a post the same
 * way, whatever its text, dates, settings, tags and state.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startHerald, type TestAccount, type TestHerald } from '../helpers/herald.ts';
import { testStores, storeSuite } from '../helpers/stores.ts';
import { addWebhookChannel, createPosts, entry, postBody } from '../helpers/api-fixtures.ts';

const AWKWARD_TEXTS = [
  'plain',
  'quotes " and \' and back\\slash',
  'new\nline\ttab\r\nand \u0001 \u001f controls',
  'emoji 🎉👩‍👩‍👧 and accents é ü ß and 日本語',
  '</script><script>alert(1)</script> & <b>',
  '\u2028 line and paragraph \u2029 separators',
];

for (const store of await testStores()) {
  describe(`GET /posts lists posts as GET /posts/{id} shows them (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let account: TestAccount;
    const range = { start: '2032-01-01T00:00:00.000Z', end: '2032-12-31T23:59:59.999Z' };

    before(async () => {
      herald = await startHerald(store);
      account = await herald.newAccount();
    });
    after(() => herald.close());

    it('every field matches for awkward texts, millisecond dates, tags, settings and every state', async () => {
      const channel = await addWebhookChannel(account, { name: 'Hook "one" ü' });
      const dates = [
        '2032-01-01T00:00:00.000Z',
        '2032-02-29T23:59:59.999Z',
        '2032-06-15T12:34:56.001Z',
        '2032-12-31T23:59:59.999Z',
        '2032-07-04T04:05:06.789Z',
        '2032-03-10T10:10:10.500Z',
      ];
      const ids: string[] = [];
      for (const [i, text] of AWKWARD_TEXTS.entries()) {
        const type = i % 2 === 0 ? 'schedule' : 'draft';
        const tags = i % 3 === 0 ? [] : ['launch', { value: 'q"3', label: 'Q3 ü' }];
        const [created] = await createPosts(
          account,
          postBody(type, [entry(channel.id, [text, `${text} (reply)`], { settings: { __type: 'webhook' } })], { date: dates[i], tags }),
        );
        ids.push(created.postId);
      }
      // States and fields the API cannot set: as the engine leaves them.
      const db = herald.services.store.db;
      await db
        .updateTable('posts')
        .set({ state: 'PUBLISHED', release_id: '12345', release_url: 'https://example.com/p/1?a=1&b="2"' })
        .where('id', '=', ids[0])
        .execute();
      await db
        .updateTable('posts')
        .set({ state: 'ERROR', error: 'The network said: "no" ✋', warning: 'only the first item\nwas published' })
        .where('id', '=', ids[2])
        .execute();
      await db
        .updateTable('posts')
        .set({ settings: JSON.stringify({ __type: 'webhook', nested: { list: [1, 2.5, null, true, 'x'], empty: {} } }) })
        .where('id', '=', ids[4])
        .execute();
      await db.updateTable('channels').set({ picture: 'https://example.com/pic.png' }).where('id', '=', channel.id).execute();

      const listed = await account.callUntyped('GET', `/posts?startDate=${range.start}&endDate=${range.end}`);
      assert.equal(listed.status, 200);
      assert.match(listed.headers.get('content-type') ?? '', /^application\/json/);
      const posts = listed.body.posts as Record<string, unknown>[];
      assert.deepEqual(posts.map((p) => p.id).sort(), [...ids].sort(), 'roots only, every one');
      assert.deepEqual(
        posts.map((p) => p.publishDate),
        [...dates].sort(),
        'in order of time, to the millisecond',
      );
      for (const post of posts) {
        const { thread: _thread, ...shown } = (await account.callUntyped('GET', `/posts/${post.id}`)).body;
        assert.deepEqual(post, shown);
      }
      const first = posts.find((p) => p.id === ids[0])!;
      assert.equal(first.content, AWKWARD_TEXTS[0]);
      assert.equal(first.releaseURL, 'https://example.com/p/1?a=1&b="2"');
      assert.deepEqual(first.integration, { id: channel.id, providerIdentifier: 'webhook', name: 'Hook "one" ü', picture: 'https://example.com/pic.png' });
      assert.deepEqual(posts.find((p) => p.id === ids[4])!.settings, { __type: 'webhook', nested: { list: [1, 2.5, null, true, 'x'], empty: {} } });
      assert.deepEqual(posts.find((p) => p.id === ids[1])!.tags, [
        { value: 'launch', label: 'launch' },
        { value: 'q"3', label: 'Q3 ü' },
      ]);
      for (const [i, text] of AWKWARD_TEXTS.entries()) assert.equal(posts.find((p) => p.id === ids[i])!.content, text);
    });

    it('an empty range lists nothing', async () => {
      const listed = await account.callUntyped('GET', '/posts?startDate=2040-01-01T00:00:00.000Z&endDate=2040-01-02T00:00:00.000Z');
      assert.equal(listed.status, 200);
      assert.deepEqual(listed.body, { posts: [] });
    });
  });
}
