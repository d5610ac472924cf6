import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Periodic } from '../../src/scheduler/periodic.ts';

describe('Periodic', () => {
  it('runs no more once stopped, also when stopped while a run was going', async () => {
    let runs = 0;
    let release!: () => void;
    const task = new Periodic('test', 10, async () => {
      runs += 1;
      await new Promise<void>((resolve) => (release = resolve));
      return 1;
    });
    task.start();
    while (runs === 0) await new Promise((r) => setTimeout(r, 5));
    const stopping = task.stop();
    release();
    await stopping;
    await new Promise((r) => setTimeout(r, 60));
    assert.equal(runs, 1, 'no run after stop()');
  });
});
