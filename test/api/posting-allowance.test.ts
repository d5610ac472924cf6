/**
 * The account's hourly posting allowance (HERALD_POSTS_PER_HOUR), which POST
 * /posts, a CSV import, a new series and the MCP tools all take: the README
 * promises a sliding hour, so a post counts for an hour after it was made, not
 * until the clock hour ends. Time is the allowance's `now`, so the tests cross
 * clock hours without waiting for one.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ApiError } from '../../src/domain/errors.ts';
import { takePostingAllowance } from '../../src/domain/posts/posting-allowance.ts';
import { startHerald, type TestHerald } from '../helpers/herald.ts';
import { testStores, storeSuite } from '../helpers/stores.ts';

const MINUTE = 60_000;
const POSTS_PER_HOUR = 2;

for (const store of await testStores()) {
  describe(`the hourly posting allowance is a sliding hour (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    before(async () => {
      herald = await startHerald(store, { env: { HERALD_POSTS_PER_HOUR: String(POSTS_PER_HOUR) } });
    });
    after(() => herald.close());

    /** Takes the account's allowance at `at`: 'taken', or 'refused' (429 rate_limited). */
    const take = (accountId: string, at: number) =>
      takePostingAllowance(herald.services, accountId, at).then(
        () => 'taken',
        (err: ApiError) => {
          assert.equal(err.statusCode, 429, String(err));
          assert.equal(err.code, 'rate_limited', String(err));
          return 'refused';
        },
      );

    it('posts at t and t+59 min both count, across a clock hour; from t+61 min the first no longer does', async () => {
      // Half past ten: a clock-hour window would forget this post at eleven.
      const t = Date.parse('2031-05-04T10:30:00Z');
      assert.equal(await take('sliding-a', t), 'taken');
      assert.equal(await take('sliding-a', t + 59 * MINUTE), 'taken');
      assert.equal(await take('sliding-a', t + 59 * MINUTE), 'refused', 'the posts at t and t+59 min both count, though the clock hour changed between them');
      // The window counts in steps of a minute: a post leaves it an hour after the end of its minute.
      assert.equal(await take('sliding-a', t + 61 * MINUTE), 'taken', 'an hour after its minute, the post at t no longer counts');
      assert.equal(await take('sliding-a', t + 61 * MINUTE), 'refused', 'the posts at t+59 and t+61 min still do');
    });

    it('a full allowance at the end of one clock hour is not renewed at the start of the next', async () => {
      const eleven = Date.parse('2031-05-04T11:00:00Z');
      for (let i = 0; i < POSTS_PER_HOUR; i++) assert.equal(await take('sliding-b', eleven - MINUTE), 'taken', `post ${i + 1} of the allowance`);
      assert.equal(await take('sliding-b', eleven + MINUTE), 'refused', 'two minutes later, in the next clock hour, nothing more');
      assert.equal(await take('sliding-b', eleven + 60 * MINUTE), 'taken', 'an hour after the end of their minute, the burst no longer counts');
    });

    it('each account has its own allowance', async () => {
      const t = Date.parse('2031-05-05T10:30:00Z');
      for (let i = 0; i < POSTS_PER_HOUR; i++) assert.equal(await take('sliding-c', t), 'taken');
      assert.equal(await take('sliding-c', t), 'refused');
      assert.equal(await take('sliding-d', t), 'taken', "another account's posts do not use this one's allowance");
    });
  });
}
