import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ApiError } from '../../src/domain/errors.ts';
import { RateLimiter } from '../../src/domain/rate-limit.ts';
import { startHerald, type TestHerald } from '../helpers/herald.ts';
import { testStores, storeSuite } from '../helpers/stores.ts';

const MINUTE = 60_000;

for (const store of await testStores()) {
  describe(`batched per-key limit shared through the database (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    before(async () => {
      herald = await startHerald(store);
    });
    after(() => herald.close());

    it('one process sees what another counted once that one has synced', async () => {
      // Two limiters on one database stand for two server processes.
      const first = new RateLimiter(herald.services.store.db);
      const second = new RateLimiter(herald.services.store.db);
      const now = Date.now();
      for (let i = 0; i < 3; i++) await first.consumeBatched('key:shared', 5, MINUTE, 'This API key', now);
      await first.sync();

      await second.consumeBatched('key:shared', 5, MINUTE, 'This API key', now);
      const last = await second.consumeBatched('key:shared', 5, MINUTE, 'This API key', now);
      assert.equal(last.remaining, 0);
      await assert.rejects(second.consumeBatched('key:shared', 5, MINUTE, 'This API key', now), (err: ApiError) => {
        assert.equal(err.statusCode, 429);
        assert.equal(err.headers['RateLimit-Remaining'], '0');
        return true;
      });
      await second.close();
      const row = await herald.services.store.db.selectFrom('rate_counters').select('count').where('bucket', '=', 'key:shared').executeTakeFirstOrThrow();
      assert.equal(row.count, 5, 'both processes wrote their counts, refused requests not included');
    });

    it('a new window starts from zero', async () => {
      const limiter = new RateLimiter(herald.services.store.db);
      const now = Date.now();
      for (let i = 0; i < 2; i++) await limiter.consumeBatched('key:windows', 2, MINUTE, 'This API key', now);
      await assert.rejects(limiter.consumeBatched('key:windows', 2, MINUTE, 'This API key', now));
      const next = await limiter.consumeBatched('key:windows', 2, MINUTE, 'This API key', now + MINUTE);
      assert.equal(next.remaining, 1);
      await limiter.close();
    });
  });
}
