/**
 * Waiting for a network to finish processing uploaded media before the post that
 * uses it is created. Nothing is published yet while we wait, so running out of
 * time is a retryable failure, never an unknown one.
 */
import { PublishError } from '../errors.ts';

export type ProcessingState = { done: true } | { done: false; failed?: string; checkAfterMs?: number };

export interface ProcessingWaitOptions {
  network: string;
  /** What is being processed, for messages ("the video"). */
  what: string;
  signal: AbortSignal;
  /** Wait between checks when the network gives no hint. */
  intervalMs?: number;
  /** Longest single wait, whatever the network suggests. */
  maxIntervalMs?: number;
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** Calls `check` until it says done; a failed state is refused with the network's reason. */
export async function waitForProcessing(check: () => Promise<ProcessingState>, options: ProcessingWaitOptions): Promise<void> {
  const interval = options.intervalMs ?? 2_000;
  const longest = options.maxIntervalMs ?? 15_000;
  for (;;) {
    const state = await check();
    if (state.done) return;
    if (state.failed !== undefined) throw new PublishError('refused', `${options.network} could not process ${options.what}: ${state.failed}`);
    try {
      await pause(Math.min(longest, Math.max(0, state.checkAfterMs ?? interval)), options.signal);
    } catch {
      throw new PublishError('retryable', `${options.network} was still processing ${options.what}; the post was not created and will be tried again`);
    }
  }
}
