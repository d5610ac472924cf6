/**
 * The per-key request limit (consumeBatched): a sliding minute, counted in memory
 * and shared through the database. Time is the limiter's `now`, so the tests
 * cross clock minutes without waiting for one.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ApiError } from '../../src/domain/errors.ts';
import { RateLimiter } from '../../src/domain/rate-limit.ts';
import { startHerald, type TestHerald } from '../helpers/herald.ts';
import { testStores, storeSuite } from '../helpers/stores.ts';

const MINUTE = 60_000;
/** The per-minute window counts in steps of a second (sliding-window.ts). */
const STEP = 1_000;

/** The most of `times` that fall within any `spanMs` (a span that starts at any instant). */
function mostWithinAnySpan(times: number[], spanMs: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let most = 0;
  for (let first = 0, last = 0; last < sorted.length; last++) {
    while (sorted[last] - sorted[first] >= spanMs) first++;
    most = Math.max(most, last - first + 1);
  }
  return most;
}

for (const store of await testStores()) {
  describe(`per-key limit: a sliding minute shared through the database (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    before(async () => {
      herald = await startHerald(store);
    });
    after(() => herald.close());

    /** Asks `limiter` at `at`: true when accepted, false when refused with 429. */
    const ask = (limiter: RateLimiter, bucket: string, limit: number, at: number) =>
      limiter.consumeBatched(bucket, limit, MINUTE, 'This API key', at).then(
        () => true,
        (err: ApiError) => {
          assert.equal(err.statusCode, 429, String(err));
          return false;
        },
      );

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
      await first.close();
      const row = await herald.services.store.db.selectFrom('rate_counters').select('count').where('bucket', '=', 'key:shared').executeTakeFirstOrThrow();
      assert.equal(row.count, 5, 'both processes wrote their counts, refused requests not included');
    });

    it('across the end of a clock minute, no 60 seconds accept more than the limit (issue 27: 1,180 in 18 s at 600 a minute)', async () => {
      const limiter = new RateLimiter(herald.services.store.db);
      const limit = 20;
      const boundary = Date.parse('2031-06-01T09:01:00Z');
      // A client retrying every 100 ms from 9 s before the minute's end to 3 minutes after it.
      const accepted: number[] = [];
      for (let at = boundary - 9_000; at < boundary + 3 * MINUTE; at += 100) if (await ask(limiter, 'key:boundary', limit, at)) accepted.push(at);
      assert.equal(mostWithinAnySpan(accepted, MINUTE), limit, 'the limit, and never more, within any 60 seconds');
      assert.ok(accepted.length >= 3 * limit, `the allowance comes back as requests leave the window (${accepted.length} accepted)`);
      await limiter.close();
    });

    it('across the end of a clock minute, a second process counts what the first accepted before it', async () => {
      const [first, second] = [new RateLimiter(herald.services.store.db), new RateLimiter(herald.services.store.db)];
      const boundary = Date.parse('2031-06-02T09:01:00Z');
      for (let i = 0; i < 10; i++) assert.equal(await ask(first, 'key:two-processes', 10, boundary - 5_000), true);
      await first.close();
      assert.equal(await ask(second, 'key:two-processes', 10, boundary + 5_000), false, 'a new clock minute, but the same sliding one');
      assert.equal(await ask(second, 'key:two-processes', 10, boundary - 5_000 + MINUTE + STEP), true, 'once they left it');
      await second.close();
    });

    it('a request counts for one minute (and up to a second), then leaves the window', async () => {
      const limiter = new RateLimiter(herald.services.store.db);
      const t = Date.parse('2031-06-03T10:20:00.500Z');
      for (let i = 0; i < 2; i++) assert.equal(await ask(limiter, 'key:leaves', 2, t), true);
      assert.equal(await ask(limiter, 'key:leaves', 2, t), false);
      assert.equal(await ask(limiter, 'key:leaves', 2, t + MINUTE), false, 'still within the minute its second began');
      const next = await limiter.consumeBatched('key:leaves', 2, MINUTE, 'This API key', t - 500 + MINUTE + STEP);
      assert.equal(next.remaining, 1, 'both have left: one used, by this request');
      await limiter.close();
    });

    it('Retry-After is when the oldest counted request leaves the window, and then one more fits', async () => {
      const limiter = new RateLimiter(herald.services.store.db);
      const t = Date.parse('2031-06-04T10:20:30Z');
      assert.equal(await ask(limiter, 'key:retry', 3, t), true, 'the oldest');
      assert.equal(await ask(limiter, 'key:retry', 3, t + 20_000), true);
      assert.equal(await ask(limiter, 'key:retry', 3, t + 40_000), true);
      const at = t + 45_000;
      const refused = await limiter.consumeBatched('key:retry', 3, MINUTE, 'This API key', at).then(
        () => assert.fail('the fourth within the minute is refused'),
        (err: ApiError) => err,
      );
      const retryAfter = Number(refused.headers['Retry-After']);
      assert.equal(retryAfter, 16, 'the oldest leaves a minute after its second ended: 60 + 1 - 45');
      assert.equal(refused.headers['RateLimit-Reset'], String(retryAfter));
      assert.equal(refused.headers['RateLimit-Remaining'], '0');
      assert.match(refused.message, /^This API key: at most 3 requests per 1 minute\(s\); try again in 16 s$/);
      assert.equal(await ask(limiter, 'key:retry', 3, at + retryAfter * 1000 - STEP), false, 'not a second earlier');
      assert.equal(await ask(limiter, 'key:retry', 3, at + retryAfter * 1000), true, 'then one more fits');
      await limiter.close();
    });
  });
}
