/**
 * A signal that aborts after `ms` (or with `parent`), and a way to drop its timer
 * once the work is done. Used instead of AbortSignal.any(…, AbortSignal.timeout()):
 * on Node 20 the composite holds its sources weakly, so a timeout signal that was
 * garbage-collected never fires; and this is cheaper, as it runs for every post.
 */
import { timerDelay } from './timers.ts';

export interface Deadline {
  signal: AbortSignal;
  /** The work is over: the timer goes and the parent is no longer watched. */
  clear(): void;
}

export function deadline(ms: number, parent?: AbortSignal): Deadline {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new DOMException('The operation timed out.', 'TimeoutError')), timerDelay(ms));
  timer.unref?.();
  const onParentAbort = () => controller.abort(parent!.reason);
  if (parent?.aborted) controller.abort(parent.reason);
  else parent?.addEventListener('abort', onParentAbort, { once: true });
  return {
    signal: controller.signal,
    clear() {
      clearTimeout(timer);
      parent?.removeEventListener('abort', onParentAbort);
    },
  };
}
