/**
 * Reading an RSS or Atom feed: one conditional GET through the outbound guard
 * (If-None-Match and If-Modified-Since from the last read), a size cap, and the
 * document read in a worker thread with a time and memory limit (a feed is
 * untrusted input: however it is made, the event loop never waits for it).
 * Every way it can fail becomes a FeedReadError whose message the subscription shows.
 */
import { Worker } from 'node:worker_threads';
import { readAtMost } from '../../lib/bounded-body.ts';
import { deadline } from '../../lib/deadline.ts';
import { OutboundRefused, type OutboundGuard } from '../../lib/outbound.ts';
import type { FeedDocument, FeedEntry } from './feed-document.ts';

export type { FeedEntry } from './feed-document.ts';

export type FeedRead = { kind: 'unchanged' } | { kind: 'read'; title: string | null; entries: FeedEntry[]; etag: string | null; lastModified: string | null };

export class FeedReadError extends Error {}

type Fetched = Awaited<ReturnType<OutboundGuard['fetch']>>;

const READ_TIMEOUT_MS = 30_000;
/** Larger documents are refused: a feed that big is not a feed to post from. */
export const LARGEST_FEED_BYTES = 5 * 1024 * 1024;
/** The longest a document may take to read; a 5 MB feed of 60,000 items takes about a second here. */
export const PARSE_LIMIT_MS = 10_000;
/** The worker's heap: a 5 MB document's tree fits with room to spare. */
const PARSE_HEAP_MB = 512;

export async function readFeed(
  outbound: OutboundGuard,
  url: string,
  validators: { etag: string | null; lastModified: string | null },
  options: { parseLimitMs?: number } = {},
): Promise<FeedRead> {
  const limit = deadline(READ_TIMEOUT_MS);
  try {
    const headers: Record<string, string> = {
      accept: 'application/rss+xml, application/atom+xml, application/xml;q=0.9, text/xml;q=0.9, */*;q=0.5',
      'user-agent': 'Herald/1 (feed reader)',
    };
    if (validators.etag) headers['if-none-match'] = validators.etag;
    if (validators.lastModified) headers['if-modified-since'] = validators.lastModified;
    let response: Fetched;
    try {
      response = await outbound.fetch(url, { headers, signal: limit.signal });
    } catch (err) {
      throw new FeedReadError(unreachable(err, limit.signal));
    }
    if (response.status === 304) {
      await response.body?.cancel().catch(() => {});
      return { kind: 'unchanged' };
    }
    if (!response.ok) {
      await response.body?.cancel().catch(() => {});
      throw new FeedReadError(`The feed's server answered ${response.status}${response.statusText ? ` ${response.statusText}` : ''}.`);
    }
    let text: string;
    try {
      const read = await readAtMost(response.body as unknown as AsyncIterable<Uint8Array>, LARGEST_FEED_BYTES);
      if (!read.whole) throw new FeedReadError(`The feed is larger than ${LARGEST_FEED_BYTES / 1024 / 1024} MB.`);
      text = decode(read.bytes, response.headers.get('content-type'));
    } catch (err) {
      if (err instanceof FeedReadError) throw err;
      throw new FeedReadError(unreachable(err, limit.signal));
    }
    const document = await readDocumentOffThread(text, options.parseLimitMs ?? PARSE_LIMIT_MS);
    return {
      kind: 'read',
      title: document.title,
      entries: document.entries,
      etag: response.headers.get('etag'),
      lastModified: response.headers.get('last-modified'),
    };
  } finally {
    limit.clear();
  }
}

/**
 * The worker's module: the bundle's sibling when Herald runs from its bundle
 * (bin/herald.js builds both), the TypeScript source through tsx otherwise.
 */
function startWorker(text: string): Worker {
  const resourceLimits = { maxOldGenerationSizeMb: PARSE_HEAP_MB };
  if (!import.meta.url.endsWith('.ts')) return new Worker(new URL('./feed-parse-worker.mjs', import.meta.url), { workerData: text, resourceLimits });
  const source = new URL('./feed-parse-worker.ts', import.meta.url).href;
  const boot = `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then((tsx) => { tsx.register(); return import(${JSON.stringify(source)}); })`;
  return new Worker(boot, { eval: true, workerData: text, resourceLimits });
}

/** Reads the document in a worker of its own, ended after `limitMs` (or when it runs out of memory). */
export function readDocumentOffThread(text: string, limitMs: number): Promise<FeedDocument> {
  return new Promise((resolve, reject) => {
    const worker = startWorker(text);
    let settled = false;
    const settle = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      void worker.terminate();
      outcome();
    };
    const timer = setTimeout(
      () => settle(() => reject(new FeedReadError(`The feed took longer than ${limitMs / 1000} seconds to read; it is too large or too complex.`))),
      limitMs,
    );
    worker.on('message', (answer: { ok: true; document: FeedDocument } | { ok: false; message: string }) =>
      settle(() => (answer.ok ? resolve(answer.document) : reject(new FeedReadError(answer.message)))),
    );
    worker.on('error', (err: Error & { code?: string }) =>
      settle(() =>
        reject(
          new FeedReadError(
            err.code === 'ERR_WORKER_OUT_OF_MEMORY' ? 'The feed needs too much memory to read.' : `The feed could not be read (${err.message}).`,
          ),
        ),
      ),
    );
    worker.on('exit', () => settle(() => reject(new FeedReadError('The feed could not be read (its reader stopped).'))));
  });
}

/** The document's text in the charset its Content-Type names (UTF-8 otherwise). */
function decode(bytes: Buffer, contentType: string | null): string {
  const charset = /charset="?([\w-]+)/i.exec(contentType ?? '')?.[1] ?? 'utf-8';
  try {
    return new TextDecoder(charset).decode(bytes);
  } catch {
    return new TextDecoder('utf-8').decode(bytes);
  }
}

function unreachable(err: unknown, signal: AbortSignal): string {
  const cause = (err as { cause?: unknown }).cause;
  const refused = err instanceof OutboundRefused ? err : cause instanceof OutboundRefused ? cause : undefined;
  if (refused) return `The feed's address is refused: ${refused.reason}.`;
  if (signal.aborted) return `The feed's server did not answer within ${READ_TIMEOUT_MS / 1000} seconds.`;
  const code = (cause as { code?: string } | undefined)?.code;
  return `The feed's server could not be reached${code ? ` (${code})` : ''}.`;
}
