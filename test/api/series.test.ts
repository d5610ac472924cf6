/**
 * Repeating posts through the public API, on each store: the rule's occurrences
 * become posts of their own (in GET /posts, with seriesId) when the engine's
 * task runs, ahead of time and once; editing the series makes its future
 * occurrences again, except one edited on its own; deleting it keeps what was
 * published. The task is run with a `now` argument instead of waiting.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { untypedCaller, eventually, startHerald, type TestAccount, type TestHerald } from '../helpers/herald.ts';
import { addWebhookChannel, assertError, entry, listPosts } from '../helpers/api-fixtures.ts';
import { testStores, storeSuite } from '../helpers/stores.ts';
import { SeriesExtender } from '../../src/scheduler/series-extender.ts';
import { startWorkers } from '../../src/app.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../fakes/webhook-receiver.ts';
import { Herald, HeraldApiError } from '../../src/sdk/index.ts';
import { teardown } from '../helpers/teardown.ts';

const DAY = 86_400_000;
const at = (text: string) => Date.parse(text);

function body(channel: string, repeat: Record<string, unknown>, content = 'Weekly tip', more: Record<string, unknown> = {}) {
  return { repeat, shortLink: false, tags: [], posts: [entry(channel, [content])], ...more };
}

for (const store of await testStores()) {
  describe(`repeating posts (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let account: TestAccount;
    let channel: string;
    let receiver: WebhookReceiver;
    // Two engines' tasks, as two workers would run them (not started: the test moves their clock).
    let workerA: SeriesExtender;
    let workerB: SeriesExtender;

    before(async () => {
      receiver = await startWebhookReceiver();
      herald = await startHerald(store);
      account = await herald.newAccount();
      channel = (await addWebhookChannel(account, {}, `${receiver.url}?series`)).id;
      workerA = new SeriesExtender(herald.services, 'worker-a');
      workerB = new SeriesExtender(herald.services, 'worker-b');
    });
    after(() =>
      teardown(
        () => herald.close(),
        () => receiver.close(),
      ),
    );

    async function create(b: unknown) {
      const created = await account.callUntyped('POST', '/series', b);
      assert.equal(created.status, 201, JSON.stringify(created.body));
      return created.body;
    }

    /** The series' posts as GET /posts lists them, in time order. */
    async function postsOf(seriesId: string) {
      return (await listPosts(account)).filter((p) => p.seriesId === seriesId);
    }

    it('POST /series answers the rule as stored and its next occurrences, weekly on Monday and Thursday across the change to summer time', async () => {
      const series = await create(
        body(channel, { start: '2031-03-24T09:00:00+01:00', unit: 'week', weekdays: ['thu', 'mon'], timezone: 'Europe/Berlin', count: 10 }, 'Mon and Thu', {
          name: 'Tips',
        }),
      );
      assert.deepEqual(series.repeat, {
        start: '2031-03-24T08:00:00.000Z',
        unit: 'week',
        every: 1,
        weekdays: ['mon', 'thu'],
        timezone: 'Europe/Berlin',
        until: null,
        count: 10,
      });
      assert.equal(series.name, 'Tips');
      assert.equal(series.state, 'active');
      // Clocks go forward in Berlin on 2031-03-30: 09:00 is 08:00Z before and 07:00Z after.
      assert.deepEqual(series.upcoming, [
        '2031-03-24T08:00:00.000Z',
        '2031-03-27T08:00:00.000Z',
        '2031-03-31T07:00:00.000Z',
        '2031-04-03T07:00:00.000Z',
        '2031-04-07T07:00:00.000Z',
      ]);
      assert.deepEqual(await postsOf(series.id), [], 'nothing exists before the engine looks');

      // Its task, a day before the start: what falls within the next 14 days becomes posts.
      await workerA.run(at('2031-03-23T09:00:00Z'));
      const posts = await postsOf(series.id);
      assert.deepEqual(
        posts.map((p) => p.publishDate),
        ['2031-03-24T08:00:00.000Z', '2031-03-27T08:00:00.000Z', '2031-03-31T07:00:00.000Z', '2031-04-03T07:00:00.000Z'],
      );
      for (const p of posts) {
        assert.equal(p.state, 'QUEUE');
        assert.equal(p.content, 'Mon and Thu');
        assert.equal(p.integration.id, channel);
      }
      assert.equal(new Set(posts.map((p) => p.group)).size, 4, 'each occurrence is a group of its own');
      const detail = await account.callUntyped('GET', `/posts/${posts[2].id}`);
      assert.equal(detail.body.seriesId, series.id, 'a post says which series it belongs to');

      const shown = (await account.callUntyped('GET', `/series/${series.id}`)).body;
      assert.deepEqual(
        shown.occurrences.map((o: any) => [o.index, o.at, o.detached, o.posts.map((p: any) => p.id)]),
        posts.map((p, i) => [i, p.publishDate, false, [p.id]]),
      );
      // A week later the next ones come within the horizon; the count of 10 ends it.
      await workerA.run(at('2031-03-30T09:00:00Z'));
      assert.equal((await postsOf(series.id)).length, 6);
      await workerA.run(at('2031-04-12T00:00:00Z'));
      assert.equal((await postsOf(series.id)).length, 10);
      const ended = (await account.callUntyped('GET', `/series/${series.id}`)).body;
      assert.equal(ended.occurrences.length, 10);
      const row = await herald.services.store.db.selectFrom('post_series').selectAll().where('id', '=', series.id).executeTakeFirstOrThrow();
      assert.equal(row.next_check_at, null, 'a series with nothing left to create is not looked at again');
    });

    it('every 2 days until a date: the whole last day counts', async () => {
      const series = await create(body(channel, { start: '2031-06-01T18:00:00Z', unit: 'day', every: 2, until: '2031-06-07' }, 'Every other day'));
      assert.equal(series.repeat.until, '2031-06-07T23:59:59.999Z');
      assert.deepEqual(series.upcoming, ['2031-06-01T18:00:00.000Z', '2031-06-03T18:00:00.000Z', '2031-06-05T18:00:00.000Z', '2031-06-07T18:00:00.000Z']);
      await workerA.run(at('2031-05-31T00:00:00Z'));
      assert.deepEqual(
        (await postsOf(series.id)).map((p) => p.publishDate),
        series.upcoming,
      );
      const listed = (await account.callUntyped('GET', '/series')).body;
      assert.ok(
        listed.some((s: any) => s.id === series.id),
        'GET /series lists the series',
      );
    });

    it('each occurrence is created once: the task run twice, and two workers at the same moment', async () => {
      const series = await create(body(channel, { start: '2031-08-01T07:30:00Z', unit: 'day', count: 30 }, 'Daily'));
      const now = at('2031-07-31T08:00:00Z');
      await workerA.run(now);
      assert.equal((await postsOf(series.id)).length, 14);
      await workerA.run(now);
      assert.equal((await postsOf(series.id)).length, 14, 'nothing new on a second run');
      const later = now + 5 * DAY;
      await Promise.all([workerA.run(later), workerB.run(later)]);
      const made = await herald.services.store.db.selectFrom('post_series_occurrences').selectAll().where('series_id', '=', series.id).execute();
      assert.equal(made.length, 19, 'the two workers created the 5 new ones between them');
      const { rows } = await sql<{ occurrence_at: number; n: number | string }>`
        SELECT occurrence_at, COUNT(*) AS n FROM posts
        WHERE series_id = ${series.id} AND thread_index = 0 AND deleted_at IS NULL GROUP BY occurrence_at`.execute(herald.services.store.db);
      assert.equal(rows.length, 19);
      assert.deepEqual(
        rows.filter((r) => Number(r.n) !== 1),
        [],
        'one post per occurrence',
      );
    });

    it('editing one occurrence detaches it; editing the series makes the future ones again from the new rule and post', async () => {
      const start = Date.now() + 3_600_000;
      const series = await create(body(channel, { start: new Date(start).toISOString(), unit: 'day' }, 'Version one'));
      await workerA.run(Date.now());
      const before = await postsOf(series.id);
      assert.equal(before.length, 14);

      // One occurrence changed on its own, as any post is changed.
      const edited = before[2];
      const update = await account.callUntyped('POST', '/posts', {
        type: 'update',
        shortLink: false,
        tags: [],
        posts: [entry(channel, [{ content: 'Changed by hand', id: edited.id }])],
      });
      assert.equal(update.status, 201, JSON.stringify(update.body));

      // Every 2 days from now on, with a new text.
      const put = await account.callUntyped(
        'PUT',
        `/series/${series.id}`,
        body(channel, { start: new Date(start).toISOString(), unit: 'day', every: 2 }, 'Version two'),
      );
      assert.equal(put.status, 200, JSON.stringify(put.body));
      assert.equal(put.body.repeat.every, 2);
      assert.deepEqual(
        put.body.occurrences.map((o: any) => [o.at, o.detached]),
        [[edited.publishDate, true]],
        'only the detached occurrence is left until the engine looks',
      );
      await workerA.run(Date.now());
      const after = await postsOf(series.id);
      assert.deepEqual(
        after.map((p) => p.publishDate),
        Array.from({ length: 7 }, (_, i) => new Date(start + i * 2 * DAY).toISOString()),
      );
      assert.deepEqual(
        after.map((p) => p.content),
        ['Version two', 'Changed by hand', 'Version two', 'Version two', 'Version two', 'Version two', 'Version two'],
      );
      assert.equal(after[1].id, edited.id, 'the detached occurrence is the same post');
      const removed = before.filter((p) => p.id !== edited.id);
      for (const p of removed.slice(0, 3)) assertError(await account.callUntyped('GET', `/posts/${p.id}`), 404, { code: 'not_found' });

      // Edited again: the occurrences the first edit made are made again too; the detached one still stays.
      const again = await account.callUntyped(
        'PUT',
        `/series/${series.id}`,
        body(channel, { start: new Date(start).toISOString(), unit: 'day', every: 2 }, 'Version three'),
      );
      assert.equal(again.status, 200, JSON.stringify(again.body));
      await workerA.run(Date.now());
      const third = (await account.callUntyped('GET', `/series/${series.id}`)).body;
      assert.deepEqual(
        third.occurrences.map((o: any) => o.detached),
        [false, true, false, false, false, false, false],
      );
      assert.deepEqual(
        (await postsOf(series.id)).map((p) => p.content),
        ['Version three', 'Changed by hand', 'Version three', 'Version three', 'Version three', 'Version three', 'Version three'],
      );
    });

    it('an occurrence that cannot be created is reported on the series and in the notifications; it is tried again later', async () => {
      const own = (await addWebhookChannel(account)).id;
      const series = await create(body(own, { start: '2031-09-01T10:00:00Z', unit: 'week' }, 'Weekly'));
      assert.equal((await account.callUntyped('PATCH', `/integrations/${own}`, { disabled: true })).status, 200);
      const now = at('2031-08-30T10:00:00Z');
      await workerA.run(now);
      assert.deepEqual(await postsOf(series.id), []);
      const failing = (await account.callUntyped('GET', `/series/${series.id}`)).body;
      assert.match(failing.lastError, /disabled/);
      const notes = (await account.callUntyped('GET', '/notifications')).body.notifications;
      assert.ok(
        notes.some((n: any) => n.link === `/api/public/v1/series/${series.id}` && /disabled/.test(n.content)),
        JSON.stringify(notes),
      );
      assert.equal((await account.callUntyped('PATCH', `/integrations/${own}`, { disabled: false })).status, 200);
      await workerA.run(now + 30 * 60_000);
      assert.deepEqual(await postsOf(series.id), [], 'not tried again before the hour is up');
      await workerA.run(now + 61 * 60_000);
      assert.deepEqual(
        (await postsOf(series.id)).map((p) => p.publishDate),
        ['2031-09-01T10:00:00.000Z', '2031-09-08T10:00:00.000Z'],
      );
      assert.equal((await account.callUntyped('GET', `/series/${series.id}`)).body.lastError, null);
    });

    it('bad rules and posts are answered 400 naming the field, and store nothing', async () => {
      const count = (await account.callUntyped('GET', '/series')).body.length;
      const start = '2031-01-05T09:00:00Z';
      const cases: [Record<string, unknown>, string][] = [
        [{ start, unit: 'day', timezone: 'Mars/Olympus' }, 'repeat.timezone'],
        [{ start, unit: 'day', weekdays: ['mon'] }, 'repeat.weekdays'],
        [{ start, unit: 'week', weekdays: ['someday'] }, 'repeat.weekdays.0'],
        [{ start, unit: 'day', until: '2031-02-01', count: 3 }, 'repeat.count'],
        [{ start, unit: 'day', until: '2030-12-31' }, 'repeat.until'],
        [{ start, unit: 'day', until: 'next week' }, 'repeat.until'],
        [{ start, unit: 'day', every: 0 }, 'repeat.every'],
        [{ start, unit: 'month' }, 'repeat.unit'],
        [{ start: 'tomorrow', unit: 'day' }, 'repeat.start'],
        [{ start: '2020-01-01T09:00:00Z', unit: 'day', count: 2 }, 'repeat'],
      ];
      for (const [repeat, path] of cases) {
        assertError(await account.callUntyped('POST', '/series', body(channel, repeat)), 400, { code: 'invalid_body', path });
      }
      assertError(await account.callUntyped('POST', '/series', { ...body(channel, { start, unit: 'day' }), repeat: undefined }), 400, { path: 'repeat' });
      assertError(await account.callUntyped('POST', '/series', body(channel, { start, unit: 'day' }, '')), 400, { path: 'posts.0.value.0.content' });
      assertError(await account.callUntyped('POST', '/series', body('no-such-channel', { start, unit: 'day' })), 404, { path: 'posts.0.integration.id' });
      const some = (await account.callUntyped('GET', '/series')).body[0].id;
      assertError(await account.callUntyped('PUT', `/series/${some}`, body(channel, { start, unit: 'day', every: 400 })), 400, { path: 'repeat.every' });
      assertError(await account.callUntyped('GET', '/series/no-such-series'), 404, { code: 'not_found' });
      assertError(await account.callUntyped('DELETE', '/series/no-such-series'), 404, { code: 'not_found' });
      assert.equal((await account.callUntyped('GET', '/series')).body.length, count, 'nothing was stored');
    });

    it('needs posts:write to change and posts:read to read; another account sees nothing; an Idempotency-Key repeat creates nothing', async () => {
      const { key } = await herald.services.accounts.createKey(account.id, 'reader', ['posts:read']);
      const reader = untypedCaller(herald.api, key);
      assert.equal((await reader('GET', '/series')).status, 200);
      assertError(await reader('POST', '/series', body(channel, { start: '2031-02-01T09:00:00Z', unit: 'day' })), 403, { code: 'insufficient_scope' });
      const some = (await account.callUntyped('GET', '/series')).body[0].id;
      const other = await herald.newAccount('Other');
      assertError(await other.callUntyped('GET', `/series/${some}`), 404, { code: 'not_found' });
      assert.deepEqual((await other.callUntyped('GET', '/series')).body, []);

      const b = body(channel, { start: '2031-02-01T09:00:00Z', unit: 'day', count: 2 }, 'Once only');
      const first = await account.callUntyped('POST', '/series', b, { 'idempotency-key': 'series-once' });
      const again = await account.callUntyped('POST', '/series', b, { 'idempotency-key': 'series-once' });
      assert.equal(again.status, 201);
      assert.equal(again.headers.get('idempotent-replayed'), 'true');
      assert.equal(again.body.id, first.body.id);
    });

    it('the SDK creates, reads, changes and stops a series, typed from the same schemas', async () => {
      const apiUrl: string = `${herald.url}/api`;
      const sdk = new Herald(account.key, apiUrl, { throwOnError: true });
      const made = await sdk.createSeries({ repeat: { start: '2031-10-06T08:00:00Z', unit: 'week', count: 2 }, posts: [entry(channel, ['From the SDK'])] });
      assert.deepEqual(made.upcoming, ['2031-10-06T08:00:00.000Z', '2031-10-13T08:00:00.000Z']);
      const changed = await sdk.updateSeries(made.id, { repeat: { ...made.repeat, every: 2 }, posts: made.posts });
      assert.equal(changed.repeat.every, 2);
      assert.equal((await sdk.getSeries(made.id)).posts[0].value[0].content, 'From the SDK');
      assert.ok(
        (await sdk.series()).some((x) => x.id === made.id),
        "the SDK's series() lists the series it made",
      );
      assert.equal((await sdk.deleteSeries(made.id)).deleted, true);
      await assert.rejects(sdk.getSeries(made.id), (err) => err instanceof HeraldApiError && err.status === 404);
    });

    it('deleting the series deletes its future occurrences and keeps the published one', async () => {
      const series = await create(body(channel, { start: new Date(Date.now() + 1_500).toISOString(), unit: 'day' }, 'Goes out'));
      await workerA.run(Date.now());
      const [first, ...rest] = await postsOf(series.id);
      assert.equal(rest.length, 13);
      // A real engine publishes the first occurrence to the webhook channel.
      const engine = startWorkers(herald.services, { engine: { pollMs: 100 }, webhooks: false });
      try {
        await eventually(
          async () => ((await account.callUntyped('GET', `/posts/${first.id}`)).body.state === 'PUBLISHED' ? true : undefined),
          10_000,
          'the first occurrence',
        );
      } finally {
        await engine.stop();
      }
      // One changed on its own (moved a day later) goes too: stopping the series leaves nothing of it to come.
      const moved = await account.callUntyped('POST', '/posts', {
        type: 'update',
        date: new Date(Date.parse(rest[0].publishDate) + DAY).toISOString(),
        shortLink: false,
        tags: [],
        posts: [entry(channel, [{ content: 'Moved', id: rest[0].id }])],
      });
      assert.equal(moved.status, 201, JSON.stringify(moved.body));
      const removed = await account.callUntyped('DELETE', `/series/${series.id}`);
      assert.equal(removed.status, 200, JSON.stringify(removed.body));
      assert.deepEqual(removed.body.removedPosts.sort(), rest.map((p) => p.id).sort());
      assert.deepEqual(
        (await postsOf(series.id)).map((p) => [p.id, p.state]),
        [[first.id, 'PUBLISHED']],
      );
      assert.equal(receiver.deliveries.filter((d) => d.json?.post?.content === 'Goes out').length, 1, 'it went out once');
      assertError(await account.callUntyped('GET', `/series/${series.id}`), 404, { code: 'not_found' });
      await workerA.run(Date.now() + 3 * DAY);
      assert.equal((await postsOf(series.id)).length, 1, 'a deleted series creates nothing more');
    });
  });
}
