import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startHerald, type TestAccount, type TestHerald, uploadUntyped } from '../helpers/herald.ts';
import { addWebhookChannel, createPosts, entry, postBody } from '../helpers/api-fixtures.ts';
import { testStores, storeSuite } from '../helpers/stores.ts';
import { plainImage, storedFiles } from './support.ts';

for (const store of await testStores()) {
  describe(`media library: GET /media and DELETE /media/{id} (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let alice: TestAccount;
    let bob: TestAccount;

    before(async () => {
      herald = await startHerald(store);
      alice = await herald.newAccount('Alice');
      bob = await herald.newAccount('Bob');
    });
    after(() => herald.close());

    const uploadAs = async (who: TestAccount, name: string) => {
      const answer = await uploadUntyped(who, herald.api, await plainImage(50, 40), name);
      assert.equal(answer.status, 201, JSON.stringify(answer.body));
      return answer.body;
    };

    it("lists the account's own media newest first, in pages", async () => {
      const uploaded = [];
      for (let i = 0; i < 5; i++) uploaded.push(await uploadAs(alice, `a${i}.png`));
      await uploadAs(bob, 'b.png');
      const first = await alice.callUntyped('GET', '/media?limit=2');
      assert.equal(first.status, 200, JSON.stringify(first.body));
      assert.deepEqual([first.body.total, first.body.page, first.body.limit, first.body.hasMore], [5, 0, 2, true]);
      const all = [];
      for (let page = 0; page < 3; page++) all.push(...(await alice.callUntyped('GET', `/media?limit=2&page=${page}`)).body.media);
      assert.deepEqual(
        all.map((m: any) => m.originalName),
        ['a4.png', 'a3.png', 'a2.png', 'a1.png', 'a0.png'],
      );
      assert.deepEqual(all[0], uploaded[4], 'the list shows the same media object the upload answered');
      assert.equal((await bob.callUntyped('GET', '/media')).body.media.length, 1);
      assert.equal((await alice.callUntyped('GET', '/media?page=-1')).status, 400);
      assert.equal((await alice.callUntyped('GET', '/media?limit=0')).body.errors[0].path, 'limit');
    });

    it('deletes the file and its thumbnail; the path stops working and can no longer be used in posts', async () => {
      const media = await uploadAs(alice, 'gone.png');
      const channel = await addWebhookChannel(alice);
      assert.equal((await fetch(media.thumbnail)).status, 200);
      const files = storedFiles(herald);
      const deleted = await alice.callUntyped('DELETE', `/media/${media.id}`);
      assert.deepEqual([deleted.status, deleted.body], [200, { id: media.id, deleted: true }]);
      assert.equal(storedFiles(herald).length, files.length - 2, 'file and thumbnail removed');
      assert.equal((await fetch(media.path)).status, 404);
      assert.equal((await fetch(media.thumbnail)).status, 404);
      assert.ok(
        !(await alice.callUntyped('GET', '/media?limit=200')).body.media.some((m: any) => m.id === media.id),
        "!(await alice.callUntyped('GET', '/media?limit=200')).body.media.some((m: any) => m.id === media.id)",
      );
      const reuse = await alice.callUntyped(
        'POST',
        '/posts',
        postBody('schedule', [entry(channel.id, [{ content: 'x', image: [{ id: media.id, path: media.path }] }])]),
      );
      assert.equal(reuse.status, 400);
      assert.equal(reuse.body.errors[0].path, 'posts.0.value.0.image.0.path');
      assert.equal((await alice.callUntyped('DELETE', `/media/${media.id}`)).status, 404, 'a second delete finds nothing');
    });

    it('refuses (409, naming the post) to delete media that a scheduled post uses; allowed once the post is gone', async () => {
      const media = await uploadAs(alice, 'busy.png');
      const channel = await addWebhookChannel(alice);
      const image = [{ id: media.id, path: media.path }];
      // Used by the second item of a thread: still in use.
      const [scheduled] = await createPosts(alice, postBody('schedule', [entry(channel.id, ['first', { content: 'reply', image }])]));
      const refused = await alice.callUntyped('DELETE', `/media/${media.id}`);
      assert.equal(refused.status, 409, JSON.stringify(refused.body));
      assert.equal(refused.body.code, 'media_in_use');
      assert.match(refused.body.message, new RegExp(scheduled.postId));
      assert.equal((await fetch(media.path)).status, 200, 'the file is still served');
      // A draft does not hold the file.
      const draftMedia = await uploadAs(alice, 'draft.png');
      await createPosts(alice, postBody('draft', [entry(channel.id, [{ content: 'draft', image: [{ id: draftMedia.id, path: draftMedia.path }] }])]));
      assert.equal((await alice.callUntyped('DELETE', `/media/${draftMedia.id}`)).status, 200);

      assert.equal((await alice.callUntyped('DELETE', `/posts/${scheduled.postId}`)).status, 200);
      const now = await alice.callUntyped('DELETE', `/media/${media.id}`);
      assert.equal(now.status, 200, JSON.stringify(now.body));
    });

    it('refuses (409, naming the series) to delete media that only a repeating post carries; allowed once the series is stopped or has ended', async () => {
      const channel = await addWebhookChannel(alice);
      const seriesBody = (name: string, media: { id: string; path: string }, count?: number) => ({
        name,
        repeat: { start: new Date(Date.now() + 7 * 86_400_000).toISOString(), unit: 'week', ...(count ? { count } : {}) },
        shortLink: false,
        tags: [],
        // On the second item of the thread: still the series' file.
        posts: [entry(channel.id, ['Weekly tip', { content: 'with the picture', image: [{ id: media.id, path: media.path }] }])],
      });
      const weekly = await uploadAs(alice, 'weekly.png');
      const series = await alice.callUntyped('POST', '/series', seriesBody('Weekly', weekly));
      assert.equal(series.status, 201, JSON.stringify(series.body));
      assert.deepEqual(
        await herald.services.media.usage(alice.id, weekly.id),
        [{ kind: 'series', id: series.body.id, name: 'Weekly', nextDate: series.body.upcoming[0] }],
        'where it is used: the series alone (no occurrence is a post yet)',
      );
      const refused = await alice.callUntyped('DELETE', `/media/${weekly.id}`);
      assert.equal(refused.status, 409, JSON.stringify(refused.body));
      assert.equal(refused.body.code, 'media_in_use');
      assert.match(refused.body.message, new RegExp(`1 repeating post \\(series ${series.body.id}\\)`));
      assert.deepEqual(refused.body.errors, [{ path: 'id', message: `is used by repeating posts (series): ${series.body.id}` }]);
      assert.equal((await fetch(weekly.path)).status, 200, 'the file is still served');
      assert.equal((await alice.callUntyped('DELETE', `/series/${series.body.id}`)).status, 200);
      assert.deepEqual(await herald.services.media.usage(alice.id, weekly.id), [], 'a stopped series uses nothing');
      assert.equal((await alice.callUntyped('DELETE', `/media/${weekly.id}`)).status, 200);

      const once = await uploadAs(alice, 'once.png');
      const single = await alice.callUntyped('POST', '/series', seriesBody('Once', once, 1));
      assert.equal(single.status, 201, JSON.stringify(single.body));
      assert.equal((await alice.callUntyped('DELETE', `/media/${once.id}`)).status, 409);
      // Its only occurrence passes (as if the clock had moved on): the series has ended and holds nothing.
      const db = herald.services.store.db;
      const row = await db.selectFrom('post_series').select('rule').where('id', '=', single.body.id).executeTakeFirstOrThrow();
      const rule = { ...JSON.parse(row.rule), start: Date.now() - 86_400_000 };
      await db
        .updateTable('post_series')
        .set({ rule: JSON.stringify(rule) })
        .where('id', '=', single.body.id)
        .execute();
      assert.equal((await alice.callUntyped('GET', `/series/${single.body.id}`)).body.state, 'ended');
      assert.equal((await alice.callUntyped('DELETE', `/media/${once.id}`)).status, 200);
    });

    it("one account cannot reference, list or delete another account's media", async () => {
      const mine = await uploadAs(alice, 'private.png');
      const bobChannel = await addWebhookChannel(bob);
      const stolen = await bob.callUntyped(
        'POST',
        '/posts',
        postBody('schedule', [entry(bobChannel.id, [{ content: 'mine now', image: [{ id: mine.id, path: mine.path }] }])]),
      );
      assert.equal(stolen.status, 400, JSON.stringify(stolen.body));
      assert.equal(stolen.body.errors[0].path, 'posts.0.value.0.image.0.path');
      const deleted = await bob.callUntyped('DELETE', `/media/${mine.id}`);
      assert.equal(deleted.status, 404);
      assert.ok(!JSON.stringify(deleted.body).includes('private.png'), "!JSON.stringify(deleted.body).includes('private.png')");
      assert.ok(
        !(await bob.callUntyped('GET', '/media?limit=200')).body.media.some((m: any) => m.id === mine.id),
        "!(await bob.callUntyped('GET', '/media?limit=200')).body.media.some((m: any) => m.id === mine.id)",
      );
      assert.equal((await fetch(mine.path)).status, 200, 'still there for its owner');
      assert.ok(
        (await alice.callUntyped('GET', '/media?limit=200')).body.media.some((m: any) => m.id === mine.id),
        "(await alice.callUntyped('GET', '/media?limit=200')).body.media.some((m: any) => m.id === mine.id)",
      );
    });
  });
}
