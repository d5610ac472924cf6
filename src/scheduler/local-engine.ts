/**
 * The publishing engine of this process, as the rest of the process reaches it:
 * new due work wakes it, and /api/ready asks when it last looked at its queue.
 * A process that runs no engine (an API server beside separate workers) keeps
 * one with nothing attached: waking it does nothing and it has never looked.
 */

/** When the engine last looked at its queue (epoch ms), and how often it looks. */
export interface QueueLook {
  at: number;
  everyMs: number;
}

/** What a running engine lends the rest of the process. */
export interface AttachedEngine {
  wake(at: number): void;
  looked(): QueueLook;
  /** Publishes this process has claimed and not finished. */
  inHand(): number;
}

export class LocalEngine {
  private engine?: AttachedEngine;

  /** The engine starting in this process; later wakes reach it. */
  attach(engine: AttachedEngine): void {
    this.engine = engine;
  }

  /** The engine stopped: wakes do nothing until one starts again. */
  detach(): void {
    this.engine = undefined;
  }

  /** Work is due at `at`: the engine here (if any) looks then rather than at its next poll. */
  wake(at: number): void {
    this.engine?.wake(at);
  }

  /** Undefined when no engine runs in this process. */
  looked(): QueueLook | undefined {
    return this.engine?.looked();
  }

  /** Publishes in hand here (0 without an engine). */
  inHand(): number {
    return this.engine?.inHand() ?? 0;
  }
}
