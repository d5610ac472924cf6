/**
 * A background task every engine runs now and then (renewing tokens, following
 * posts a network finishes later): on a timer that does not hold the process
 * open, never two runs at once, and on demand at a time the caller gives, so
 * tests move the clock instead of waiting.
 */
import { errorFields, log } from '../lib/log.ts';
import { timerDelay } from '../lib/timers.ts';

export class Periodic {
  private timer?: NodeJS.Timeout;
  private running?: Promise<number>;
  private stopped = false;

  constructor(
    /** For log lines. */
    private readonly name: string,
    private readonly everyMs: number,
    /** Does what is due at `now`; resolves to how much it did. */
    private readonly task: (now: number) => Promise<number>,
  ) {}

  start(): void {
    this.stopped = false;
    const next = () => {
      // Stopped while a run was going: that run ends, and no timer comes after it.
      if (this.stopped) return;
      // A setting past a timer's reach (about 24.8 days) runs that often instead of at once, again and again.
      this.timer = setTimeout(() => void this.run().finally(next), timerDelay(this.everyMs));
      this.timer.unref();
    };
    next();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }

  /** Runs the task for `now` (joining a run already going); a failure is logged and counts as nothing done. */
  run(now = Date.now()): Promise<number> {
    this.running ??= this.task(now)
      .catch((err) => {
        log.error({ task: this.name, ...errorFields(err) }, 'background task failed');
        return 0;
      })
      .finally(() => (this.running = undefined));
    return this.running;
  }
}
