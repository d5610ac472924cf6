/**
 * The store's one claim (src/db/lease.ts), on both stores: workers racing for the
 * same due rows each get their own, a live lease keeps its row, a lease that ran
 * out lets another worker take the row over, and the worker that lost it can no
 * longer extend or end it. Feeds stand for every leased queue here.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import { sql } from 'kysely';
import { migrate, openStore, type Store } from '../../src/db/index.ts';
import { claimRows, extendLease, nextClaimable, releaseLease } from '../../src/db/lease.ts';
import type { FeedRow } from '../../src/db/schema.ts';
import { createTestDatabase, storeSuite, testStores } from '../helpers/stores.ts';

const LEASE_MS = 60_000;
const NOW = 1_000_000;
const ROWS = 40;

function feed(i: number): FeedRow {
  return {
    id: `feed-${String(i).padStart(2, '0')}`,
    account_id: 'acc',
    url: `https://example.com/${i}.xml`,
    name: null,
    title: null,
    channels: '[]',
    template: '{{title}}',
    mode: 'now',
    attach_image: 0,
    paused: 0,
    primed: 0,
    etag: null,
    last_modified: null,
    // Due one after another, all by NOW.
    next_fetch_at: NOW - ROWS + i,
    lease_owner: null,
    lease_until: null,
    last_fetched_at: null,
    last_success_at: null,
    last_error: null,
    failures: 0,
    author_id: null,
    created_at: 0,
    updated_at: 0,
    deleted_at: null,
  };
}

/** Takes up to `limit` due feeds for `worker` at `now`; the ids it got. */
async function take(store: Store, worker: string, limit: number, now = NOW): Promise<string[]> {
  const rows = await claimRows(store.db, store.dialect, {
    table: 'feeds',
    as: 'f',
    due: sql`f.deleted_at IS NULL AND f.next_fetch_at <= ${now}`,
    order: sql`f.next_fetch_at`,
    limit,
    now,
    hold: { owner: worker, ms: LEASE_MS },
  });
  for (const row of rows) assert.equal(row.lease_owner, worker, 'a claimed row comes back as it is after the claim');
  // The statement returns rows in no particular order.
  return rows.map((row) => row.id).sort();
}

for (const kind of await testStores()) {
  describe(`claiming due rows (${kind})`, storeSuite(kind), () => {
    let dir: string;
    let drop: () => Promise<void> = async () => {};
    /** Two connections to one store, as two worker processes have. */
    let first: Store;
    let second: Store;

    before(async () => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-claim-'));
      let databaseUrl: string | undefined;
      if (kind === 'postgres') ({ url: databaseUrl, drop } = await createTestDatabase());
      first = openStore({ databaseUrl, dataDir: dir });
      await migrate(first);
      second = openStore({ databaseUrl, dataDir: dir });
      await first.db.insertInto('accounts').values({ id: 'acc', name: 'Ann', created_at: 0 }).execute();
    });
    after(async () => {
      await second?.close();
      await first?.close();
      await drop();
      fs.rmSync(dir, { recursive: true, force: true });
    });
    beforeEach(async () => {
      await first.db.deleteFrom('feeds').execute();
      await first.db
        .insertInto('feeds')
        .values(Array.from({ length: ROWS }, (_, i) => feed(i)))
        .execute();
    });

    it('gives workers racing for the same rows disjoint sets that together hold every due row', async () => {
      const claims = await Promise.all(Array.from({ length: 12 }, (_, i) => take(i % 2 ? second : first, `worker-${i}`, 5)));
      const taken = claims.flat();
      assert.equal(new Set(taken).size, taken.length, 'no row was claimed twice');
      assert.equal(taken.length, ROWS, 'twelve claims of five take all forty rows');
      const owners = await first.db.selectFrom('feeds').select(['id', 'lease_owner', 'lease_until']).execute();
      const ownerOf = new Map(claims.flatMap((ids, i) => ids.map((id) => [id, `worker-${i}`])));
      for (const row of owners) {
        assert.equal(row.lease_owner, ownerOf.get(row.id), `${row.id} is held by the worker that got it`);
        assert.equal(Number(row.lease_until), NOW + LEASE_MS);
      }
    });

    it('takes the earliest due first, and nothing that is not due', async () => {
      assert.deepEqual(await take(first, 'a', 3), ['feed-00', 'feed-01', 'feed-02']);
      assert.deepEqual(await take(first, 'b', ROWS, NOW - ROWS + 5), ['feed-03', 'feed-04', 'feed-05']);
    });

    it('leaves a row under a live lease to its worker, and lets another take it over once the lease ran out', async () => {
      const held = await take(first, 'a', ROWS);
      assert.equal(held.length, ROWS);
      assert.deepEqual(await take(second, 'b', ROWS, NOW + LEASE_MS - 1), [], 'a live lease keeps every row');
      assert.deepEqual(await take(second, 'b', ROWS, NOW + LEASE_MS), [], 'a lease lasts until its end');
      const over = await take(second, 'b', 2, NOW + LEASE_MS + 1);
      assert.deepEqual(over, ['feed-00', 'feed-01'], 'rows whose lease ran out are taken over');

      // The worker that lost the row can neither keep nor end the new holder's lease.
      await extendLease(first.db, 'feeds', 'feed-00', 'a', NOW + 10 * LEASE_MS);
      await releaseLease(first.db, 'feeds', 'feed-01', 'a');
      const rows = await first.db.selectFrom('feeds').select(['id', 'lease_owner', 'lease_until']).where('id', 'in', over).orderBy('id').execute();
      assert.deepEqual(
        rows.map((r) => [r.id, r.lease_owner, Number(r.lease_until)]),
        [
          ['feed-00', 'b', NOW + 1 + 2 * LEASE_MS],
          ['feed-01', 'b', NOW + 1 + 2 * LEASE_MS],
        ],
      );
      // Its holder can.
      await releaseLease(first.db, 'feeds', 'feed-01', 'b');
      assert.deepEqual(await take(first, 'c', 1, NOW + LEASE_MS + 2), ['feed-01']);
    });

    it('tells when the next row becomes claimable: its due time, or its lease’s end when that is later', async () => {
      const where = sql`deleted_at IS NULL`;
      assert.equal(await nextClaimable(first.db, 'feeds', 'next_fetch_at', where), NOW - ROWS);
      await take(first, 'a', ROWS);
      assert.equal(await nextClaimable(first.db, 'feeds', 'next_fetch_at', where), NOW + LEASE_MS);
      await first.db.deleteFrom('feeds').execute();
      assert.equal(await nextClaimable(first.db, 'feeds', 'next_fetch_at', where), undefined);
    });
  });
}
