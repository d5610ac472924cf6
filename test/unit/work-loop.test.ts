import assert from 'node:assert/strict';
import { afterEach, describe, it, mock } from 'node:test';
import { MAX_TIMER_MS, timerDelay } from '../../src/lib/timers.ts';
import { WorkLoop } from '../../src/scheduler/work-loop.ts';

const DAY_MS = 24 * 60 * 60_000;

/** A loop over an empty queue that polls rarely, so only `wake` decides when it looks; counts its looks. */
function quietLoop() {
  const looks = { count: 0 };
  const loop = new WorkLoop<never>({
    name: 'test',
    concurrency: 1,
    pollMs: 90 * DAY_MS,
    claim: async () => {
      looks.count++;
      return [];
    },
    handle: async () => {},
    nextDue: async () => undefined,
  });
  return { loop, looks };
}

/** Lets the promise chain of a look (claim, nextDue, wake) run out. */
async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await Promise.resolve();
}

describe('WorkLoop, woken far ahead', () => {
  afterEach(() => mock.timers.reset());

  it('looks when a wake 60 days ahead comes due, not before (beyond what one timer can wait)', async () => {
    mock.timers.enable({ apis: ['setTimeout', 'Date'], now: Date.UTC(2030, 0, 1) });
    const { loop, looks } = quietLoop();
    loop.start();
    mock.timers.tick(0);
    await settle();
    assert.equal(looks.count, 1, 'the first look, at start');

    loop.wake(Date.now() + 60 * DAY_MS);
    for (const day of [1, 25, 30, 50, 59]) {
      mock.timers.setTime(Date.UTC(2030, 0, 1) + day * DAY_MS);
      mock.timers.tick(0);
      await settle();
      assert.equal(looks.count, 1, `no look on day ${day}`);
    }
    mock.timers.tick(DAY_MS - 1);
    await settle();
    assert.equal(looks.count, 1, 'no look a millisecond early');
    mock.timers.tick(1);
    await settle();
    assert.equal(looks.count, 2, 'one look on day 60');
    await loop.stop();
  });

  it('arms no timer that Node would cut short (no TimeoutOverflowWarning)', async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error) => {
      if (warning.name === 'TimeoutOverflowWarning') warnings.push(warning.message);
    };
    process.on('warning', onWarning);
    try {
      const { loop, looks } = quietLoop();
      loop.start();
      while (looks.count === 0) await new Promise((resolve) => setImmediate(resolve));
      loop.wake(Date.now() + 60 * DAY_MS);
      // A warning is emitted on the next tick of the event loop.
      await new Promise((resolve) => setImmediate(resolve));
      await loop.stop();
    } finally {
      process.off('warning', onWarning);
    }
    assert.deepEqual(warnings, []);
  });
});

describe('timerDelay', () => {
  it('keeps a delay within what a timer can wait', () => {
    assert.equal(timerDelay(1_500), 1_500);
    assert.equal(timerDelay(60 * DAY_MS), MAX_TIMER_MS);
    assert.equal(timerDelay(Infinity), MAX_TIMER_MS);
    assert.equal(timerDelay(-5), 0);
    assert.equal(timerDelay(Number.NaN), 0);
  });
});
