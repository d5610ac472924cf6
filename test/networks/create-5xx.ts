/**
 * The case every network suite shares (issues 28 and 31): a server error after
 * the network stored the post. The suite's fake stores the post and then
 * answers its own 5xx on the create call (`storeThenFail`), once plain and once
 * a 503 with Retry-After. Whatever the adapter does next (a look-up, a repeat the
 * network drops), the network must hold the post exactly once, and the post ends
 * PUBLISHED (found) or in ERROR saying the outcome is unknown: never a second
 * create, never a refusal of the repeat.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { it } from 'node:test';
import type { TestAccount } from '../helpers/herald.ts';
import type { NetworkFake } from '../fakes/network-fake.ts';
import { settled } from './support.ts';

export interface CreateCase {
  fake: NetworkFake;
  account: TestAccount;
  /** Publishes the network's simplest post carrying `text` (with the media or settings it needs); the post id. */
  publish(text: string): Promise<string>;
  /** How many posts carrying `text` the network holds. */
  held(text: string): number | Promise<number>;
  /** The create endpoint to fail, when not the fake's declared one. */
  route?: string;
}

/** What an unknown outcome says, from the common rules or the engine's look-up. */
const UNKNOWN = /may have been published/;

/** Registers the case; `setup` is read when it runs (after the suite's `before`). */
export function serverErrorAfterCreate(setup: () => CreateCase): void {
  for (const { status, retryAfterSeconds } of [{ status: 500 }, { status: 503, retryAfterSeconds: 1 }]) {
    const what = retryAfterSeconds === undefined ? `a ${status}` : `a ${status} with Retry-After`;
    it(`${what} after the network stored the post is an unknown outcome: held once, PUBLISHED when found, never created twice`, async (t) => {
      const c = setup();
      const text = `Stored, then ${status} ${crypto.randomBytes(4).toString('hex')}`;
      c.fake.storeThenFail(status, { retryAfterSeconds, route: c.route });
      const post = await settled(c.account, await c.publish(text), 60_000);
      const attempts = post.thread[0].attempts.map((a) => `${a.outcome}: ${a.detail ?? ''}`);
      t.diagnostic(`${post.state}; attempts: ${attempts.join(' | ')}`);
      assert.equal(await c.held(text), 1, `the network holds the post once (attempts: ${attempts.join(' | ')})`);
      if (post.state !== 'PUBLISHED') {
        assert.equal(post.state, 'ERROR');
        assert.match(post.error ?? '', UNKNOWN, `an unknown outcome, not a refused repeat (attempts: ${attempts.join(' | ')})`);
      }
      assert.ok(
        post.thread[0].attempts.some((a) => a.outcome === 'unknown' || a.outcome === 'published'),
        `the ${status} is an unknown outcome, not a failure to retry (attempts: ${attempts.join(' | ')})`,
      );
    });
  }
}
