/**
 * Three `herald worker` processes on one PostgreSQL store create the occurrences
 * of repeating posts between them: each occurrence exactly once, whichever
 * worker takes its series, also while series are created and edited under them.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { eventually, startHerald, type TestAccount, type TestHerald } from '../helpers/herald.ts';
import { testStores, storeSuite } from '../helpers/stores.ts';
import { startHeraldProcess, type HeraldProcess } from '../helpers/herald-process.ts';
import { addWebhookChannel, entry } from '../helpers/api-fixtures.ts';
import { teardown } from '../helpers/teardown.ts';

const SERIES = 12;
const COUNT = 5;
const DAY = 86_400_000;

const stores = (await testStores()).filter((s) => s === 'postgres');
for (const store of stores) {
  describe(`repeating posts with three workers (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let account: TestAccount;
    let channel: string;
    const workers: HeraldProcess[] = [];

    before(async () => {
      // This process runs no engine: only the three workers create occurrences.
      herald = await startHerald(store, { env: { HERALD_REQUESTS_PER_MINUTE: '1000000' } });
      account = await herald.newAccount();
      channel = (await addWebhookChannel(account)).id;
    });
    after(() =>
      teardown(
        () => Promise.all(workers.map((w) => w.stop('SIGKILL'))),
        () => herald.close(),
      ),
    );

    /** Daily series, starting tomorrow, ten times each: every occurrence falls within the 14 days created ahead. */
    async function createSeries(label: string, n: number): Promise<string[]> {
      const base = Date.now() + DAY;
      return Promise.all(
        Array.from({ length: n }, async (_, i) => {
          const created = await account.callUntyped('POST', '/series', {
            repeat: { start: new Date(base + i * 60_000).toISOString(), unit: 'day', count: COUNT },
            posts: [entry(channel, [`${label} ${i}`])],
          });
          assert.equal(created.status, 201, JSON.stringify(created.body));
          return created.body.id as string;
        }),
      );
    }

    /** Root posts per (series, occurrence): every occurrence of `ids` that exists, with how many posts it has. */
    async function occurrencePosts(ids: string[]) {
      const { rows } = await sql<{ series_id: string; occurrence_at: number; n: number | string; contents: string }>`
        SELECT series_id, occurrence_at, COUNT(*) AS n, MIN(content) AS contents FROM posts
        WHERE series_id IN (${sql.join(ids)}) AND thread_index = 0 AND deleted_at IS NULL
        GROUP BY series_id, occurrence_at`.execute(herald.services.store.db);
      return rows;
    }

    async function settled(ids: string[], expected: number) {
      return eventually(
        async () => {
          const rows = await occurrencePosts(ids);
          const open = await herald.services.store.db
            .selectFrom('post_series')
            .select('id')
            .where('id', 'in', ids)
            .where((eb) => eb.or([eb('next_check_at', 'is not', null), eb('lease_owner', 'is not', null)]))
            .execute();
          return rows.length >= expected && open.length === 0 ? rows : undefined;
        },
        60_000,
        `${expected} occurrences`,
      );
    }

    it('each occurrence is created exactly once, while series are created and edited under the workers', async () => {
      const first = await createSeries('Early', SERIES);
      // Started together, so all three look at the same due series at once.
      workers.push(
        ...(await Promise.all(Array.from({ length: 3 }, () => startHeraldProcess(herald.services.config, 'worker', { HERALD_SERIES_INTERVAL_SECONDS: '1' })))),
      );
      await Promise.all(workers.map((w) => w.running));
      // More while they run: the change wakes every worker through PostgreSQL at the same moment.
      const second = await createSeries('Late', SERIES);
      const all = [...first, ...second];
      const rows = await settled(all, all.length * COUNT);
      assert.equal(rows.length, all.length * COUNT);
      assert.deepEqual(
        rows.filter((r) => Number(r.n) !== 1),
        [],
        'one post per occurrence',
      );

      // Edited under the workers: each edited series' future occurrences are made again, once.
      const edited = second.slice(0, 10);
      await Promise.all(
        edited.map(async (id, i) => {
          const shown = (await account.callUntyped('GET', `/series/${id}`)).body;
          const put = await account.callUntyped('PUT', `/series/${id}`, { repeat: shown.repeat, posts: [entry(channel, [`Edited ${i}`])] });
          assert.equal(put.status, 200, JSON.stringify(put.body));
        }),
      );
      const again = await settled(edited, edited.length * COUNT);
      assert.equal(again.length, edited.length * COUNT);
      assert.deepEqual(
        again.filter((r) => Number(r.n) !== 1 || !r.contents.startsWith('Edited')),
        [],
        'one post per occurrence, from the edited post',
      );

      const creators = await herald.services.store.db
        .selectFrom('post_series_occurrences')
        .select('created_by')
        .distinct()
        .where('series_id', 'in', all)
        .execute();
      const pids = new Set(workers.map((w) => String(w.child.pid)));
      for (const { created_by } of creators) assert.ok(pids.has(created_by.split(':')[1]), `${created_by} is one of the three workers`);
      for (const w of workers) assert.ok(w.alive(), 'every worker is still running');
    });
  });
}
