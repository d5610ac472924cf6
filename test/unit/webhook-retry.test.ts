import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_RETRY_DELAYS_MS, retryDelayMs } from '../../src/scheduler/webhook-dispatcher.ts';

/** Time from the first attempt to the last one, with every wait drawn by `random`. */
function span(random: () => number): { ms: number; attempts: number } {
  let ms = 0;
  let failed = 1;
  for (;;) {
    const wait = retryDelayMs(failed, DEFAULT_RETRY_DELAYS_MS, random);
    if (wait === undefined) return { ms, attempts: failed };
    ms += wait;
    failed++;
  }
}

describe('account webhook retry schedule', () => {
  it('keeps trying for more than 24 hours even when the jitter shortens every wait', () => {
    const shortest = span(() => 0);
    assert.ok(shortest.ms >= 24 * 3_600_000, `last attempt ${(shortest.ms / 3_600_000).toFixed(1)} h after the first`);
    assert.equal(shortest.attempts, DEFAULT_RETRY_DELAYS_MS.length + 1);
  });

  it('backs off: each wait is longer than the one before, from seconds up to hours', () => {
    const waits = DEFAULT_RETRY_DELAYS_MS.map((_, i) => retryDelayMs(i + 1, DEFAULT_RETRY_DELAYS_MS, () => 0.5)!);
    for (let i = 1; i < waits.length; i++) assert.ok(waits[i] > waits[i - 1], `wait ${i + 1} grows`);
    assert.ok(waits[0] <= 10_000 && waits.at(-1)! >= 6 * 3_600_000, 'waits[0] <= 10_000 && waits.at(-1)! >= 6 * 3_600_000');
  });

  it('spreads retries of many deliveries (jitter) and stops when the schedule runs out', () => {
    assert.notEqual(
      retryDelayMs(3, DEFAULT_RETRY_DELAYS_MS, () => 0),
      retryDelayMs(3, DEFAULT_RETRY_DELAYS_MS, () => 0.99),
    );
    assert.equal(retryDelayMs(DEFAULT_RETRY_DELAYS_MS.length + 1, DEFAULT_RETRY_DELAYS_MS), undefined);
  });
});
