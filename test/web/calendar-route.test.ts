/**
 * GET /api/app/calendar, what the calendar page reads: for each post of a range
 * only what its tile shows, and the posts being sent, in one answer. Measured
 * against the public list of the same 1,000 posts; held to its schema; a bad
 * range is a 400 naming the field; another account's posts never appear.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { WebClient } from '../accounts/web-client.ts';
import { appRoutes, calendarTile, TILE_TEXT_CHARS } from '../../src/contract/routes/app.ts';
import { startHerald, type TestHerald } from '../helpers/herald.ts';
import { storeSuite, testStores } from '../helpers/stores.ts';
import { teardown } from '../helpers/teardown.ts';

const START = '2030-01-01T00:00:00.000Z';
const END = '2030-01-31T23:59:59.999Z';
const range = `?startDate=${START}&endDate=${END}`;

for (const store of await testStores()) {
  describe(`the calendar's route (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let web: WebClient;
    let channel: string;
    /** A long post (a LinkedIn article's length) with settings and tags, as people schedule them. */
    const long = `Opening night 🎭 ${'Tickets, times and the cast list for the whole season. '.repeat(50)}`;

    before(async () => {
      herald = await startHerald(store, { env: { HERALD_POSTS_PER_HOUR: '1000' } });
      web = new WebClient(herald.url);
      await web.signUp('owner@example.com');
      const created = await web.app('POST', '/public/v1/integrations', {
        identifier: 'webhook',
        name: 'Box office',
        credentials: { url: 'http://127.0.0.1:9/hook' },
      });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      channel = created.body.id;
      for (let batch = 0; batch < 20; batch++) {
        const posts = Array.from({ length: 50 }, () => ({ integration: { id: channel }, value: [{ content: long }, { content: 'And a reply' }] }));
        const answer = await web.app('POST', '/public/v1/posts', {
          type: 'draft',
          date: `2030-01-${String(batch + 1).padStart(2, '0')}T09:00:00.000Z`,
          tags: [{ value: 'season', label: 'Season' }],
          posts,
        });
        assert.equal(answer.status, 201, JSON.stringify(answer.body));
      }
    });
    after(() => teardown(() => herald?.close()));

    it("answers a month of 1,000 posts with each tile's fields, in a fraction of the public list's bytes", async () => {
      const tiles = await web.route(appRoutes.routes.calendar, { query: { startDate: START, endDate: END } });
      assert.equal(tiles.status, 200, tiles.text);
      const listed = await web.app('GET', `/public/v1/posts${range}`);
      assert.equal(listed.status, 200);
      assert.equal(tiles.body.posts.length, 1000);
      assert.equal(listed.body.posts.length, 1000);
      assert.deepEqual(tiles.body.publishing, []);
      for (const tile of tiles.body.posts) calendarTile.parse(tile);
      const [tile] = tiles.body.posts;
      const [post] = listed.body.posts;
      assert.deepEqual(tile, {
        id: post.id,
        text: Array.from(long).slice(0, TILE_TEXT_CHARS).join(''),
        publishDate: post.publishDate,
        state: 'DRAFT',
        error: null,
        approval: null,
        seriesId: null,
        channel,
      });
      const [lean, full] = [Buffer.byteLength(tiles.text), Buffer.byteLength(listed.text)];
      const ratio = lean / full;
      console.log(`# ${store}: 1,000 posts, calendar ${lean} B, public list ${full} B (${(ratio * 100).toFixed(1)} %)`);
      assert.ok(ratio < 0.2, `the calendar's answer is ${(ratio * 100).toFixed(1)} % of the public list's`);
    });

    it('says which posts are being sent, in the same answer', async () => {
      const scheduled = await web.app('POST', '/public/v1/posts', {
        type: 'schedule',
        date: '2030-01-25T10:00:00.000Z',
        posts: [{ integration: { id: channel }, value: [{ content: 'Due later' }] }],
      });
      assert.equal(scheduled.status, 201, JSON.stringify(scheduled.body));
      const id = scheduled.body[0].postId;
      // A worker holding its lease: the post is being sent.
      await herald.services.store.db
        .updateTable('posts')
        .set({ lease_owner: 'worker-1', lease_until: Date.now() + 60_000 })
        .where('id', '=', id)
        .execute();
      const answer = await web.app('GET', `/calendar${range}`);
      assert.deepEqual(answer.body.publishing, [id]);
      assert.equal(answer.body.posts.find((p: { id: string }) => p.id === id)?.state, 'QUEUE');
      await web.app('DELETE', `/public/v1/posts/${scheduled.body[0].postId}`);
    });

    it('refuses a range that is not one, naming the field, and shows no other account its posts', async () => {
      const backwards = await web.app('GET', `/calendar?startDate=${END}&endDate=${START}`);
      assert.equal(backwards.status, 400, backwards.text);
      assert.match(backwards.text, /endDate/);
      const garbled = await web.app('GET', `/calendar?startDate=soon&endDate=${END}`);
      assert.equal(garbled.status, 400, garbled.text);
      assert.match(garbled.text, /startDate/);
      const missing = await web.app('GET', `/calendar?startDate=${START}`);
      assert.equal(missing.status, 400, missing.text);
      assert.match(missing.text, /endDate/);

      // Another account sees none of these posts; without a session there is nothing to see.
      const elsewhere = await herald.services.accounts.create('Elsewhere');
      assert.equal(await herald.services.posts.calendarJson(elsewhere, Date.parse(START), Date.parse(END)), '[]');
      assert.equal((await new WebClient(herald.url).app('GET', `/calendar${range}`)).status, 401);
    });
  });
}
