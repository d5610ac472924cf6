import assert from 'node:assert/strict';
import { afterEach, describe, it, mock } from 'node:test';
import { Periodic } from '../../src/scheduler/periodic.ts';

/** Lets a promise chain (a run's end, the timer it arms) run out. */
async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await Promise.resolve();
}

describe('Periodic', () => {
  afterEach(() => mock.timers.reset());

  it('runs no more once stopped, also when stopped while a run was going', async () => {
    mock.timers.enable({ apis: ['setTimeout'] });
    let runs = 0;
    let release!: () => void;
    const task = new Periodic('test', 10, async () => {
      runs += 1;
      await new Promise<void>((resolve) => (release = resolve));
      return 1;
    });
    task.start();
    mock.timers.tick(10);
    assert.equal(runs, 1, 'the first run comes one interval after start');
    const stopping = task.stop();
    release();
    await stopping;
    await settle();
    // A hundred intervals on, the run that was going when it was stopped armed no timer for another.
    mock.timers.tick(1_000);
    await settle();
    assert.equal(runs, 1, 'no run after stop()');
  });
});
