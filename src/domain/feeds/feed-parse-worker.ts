/**
 * The feed worker: reads one feed document (feed-document.ts) off the main
 * thread and answers its items, or why it could not. feed-source.ts starts one
 * per document and ends it when it takes too long.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { FeedDocumentError, readFeedDocument } from './feed-document.ts';

try {
  parentPort?.postMessage({ ok: true, document: readFeedDocument(workerData as string) });
} catch (err) {
  const message = err instanceof FeedDocumentError ? err.message : `The feed could not be read (${(err as Error).message}).`;
  parentPort?.postMessage({ ok: false, message });
}
