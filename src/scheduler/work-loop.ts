/**
 * The loop behind every queue kept in the database (posts, webhook deliveries):
 * sleep until the next item is due (or the next poll), claim as many items as
 * there are free slots, handle each, and claim again once half the slots are free
 * (one claim for many items rather than one each). `stop` waits for the items in
 * hand.
 */
import { errorFields, log } from '../lib/log.ts';
import { MAX_TIMER_MS, timerDelay } from '../lib/timers.ts';
/** How often a loop looks at its queue when nothing wakes it sooner (other processes may add work). */
export const QUEUE_POLL_MS = 5_000;

export interface WorkLoopOptions<T> {
  /** For log lines. */
  name: string;
  concurrency: number;
  /** Longest sleep between looks at the queue (other processes may add work). */
  pollMs: number;
  /** Marks up to `limit` due items as this process's and returns them. */
  claim(limit: number): Promise<T[]>;
  handle(item: T): Promise<void>;
  /** When the next item becomes due, if any. */
  nextDue(): Promise<number | undefined>;
}

export class WorkLoop<T> {
  private timer?: NodeJS.Timeout;
  private timerAt = Infinity;
  private running = 0;
  private ticking = false;
  private again = false;
  private stopped = true;
  private readonly idle = new Set<() => void>();
  /** When the loop last looked at its queue (epoch ms): it looks at least every `pollMs` while it runs. */
  lastLookAt = 0;

  constructor(private readonly options: WorkLoopOptions<T>) {}

  start(): void {
    this.stopped = false;
    this.wake(Date.now());
  }

  /**
   * Stops claiming; resolves when the items in hand are finished, or after `graceMs`
   * with false and the items still running left to their leases.
   */
  async stop(graceMs = Infinity): Promise<boolean> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timerAt = Infinity;
    if (this.running === 0 && !this.ticking) return true;
    const finished = new Promise<boolean>((resolve) => this.idle.add(() => resolve(true)));
    if (graceMs === Infinity) return finished;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), graceMs).unref()));
    return Promise.race([finished, late]).finally(() => clearTimeout(timer));
  }

  /** Items being handled right now. */
  get inHand(): number {
    return this.running;
  }

  /** Something is due at `at`: look then (or now) rather than at the next poll. */
  wake(at: number): void {
    if (this.stopped || at >= this.timerAt) return;
    clearTimeout(this.timer);
    this.timerAt = at;
    this.arm(at);
  }

  /** A timer waits about 24.8 days at most: one for a later `at` arms the next when it fires, without a look. */
  private arm(at: number): void {
    const delay = at - Date.now();
    this.timer = setTimeout(() => {
      if (delay > MAX_TIMER_MS) return this.arm(at);
      this.timerAt = Infinity;
      void this.tick();
    }, timerDelay(delay));
    this.timer.unref?.();
  }

  private async tick(): Promise<void> {
    if (this.ticking) {
      this.again = true;
      return;
    }
    this.ticking = true;
    this.lastLookAt = Date.now();
    let drained = false;
    const { concurrency, pollMs } = this.options;
    try {
      do {
        this.again = false;
        const free = concurrency - this.running;
        if (free <= 0 || this.stopped) break;
        const claimed = await this.options.claim(free);
        for (const item of claimed) {
          this.running++;
          void this.options
            .handle(item)
            .catch((err) => log.error({ loop: this.options.name, ...errorFields(err) }, 'an item failed unexpectedly'))
            .finally(() => {
              this.running--;
              // A finished item may also make the next one due (the next reply of a thread).
              if (this.running <= concurrency / 2) this.wake(Date.now());
              this.settle();
            });
        }
        if (claimed.length === free) this.again = true;
        else drained = true;
      } while (this.again && !this.stopped);
      if (!this.stopped) {
        // Nothing else is due now: sleep until the next item is (or the next poll).
        const next = drained ? await this.options.nextDue() : undefined;
        this.wake(Math.min(next ?? Infinity, Date.now() + pollMs));
      }
    } catch (err) {
      log.error({ loop: this.options.name, ...errorFields(err) }, 'could not claim work');
      if (!this.stopped) this.wake(Date.now() + pollMs);
    } finally {
      this.ticking = false;
      this.settle();
    }
  }

  private settle(): void {
    if (this.running === 0 && !this.ticking) {
      for (const resolve of this.idle) resolve();
      this.idle.clear();
    }
  }
}
