/**
 * Reading an RSS or Atom feed: one conditional GET through the outbound guard
 * (If-None-Match and If-Modified-Since from the last read), a size cap, and the
 * feed-parser library for the document. Every way it can fail becomes a
 * FeedReadError whose message the subscription shows.
 */
import crypto from 'node:crypto';
import type { parseFeed } from '@rowanmanning/feed-parser';
import { deadline } from '../lib/deadline.ts';
import { OutboundRefused, type OutboundGuard } from '../lib/outbound.ts';
import { plainText } from './feed-template.ts';

/** One item of a feed, as a post is made from it. */
export interface FeedEntry {
  /** The guid, or the link when there is none (hashed when very long). */
  key: string;
  title: string;
  link: string;
  summary: string;
  /** The item's image (enclosure, media:content or thumbnail), if it names one. */
  image: string | null;
  /** Published (or updated) time, when the feed says. */
  published: number | null;
}

export type FeedRead = { kind: 'unchanged' } | { kind: 'read'; title: string | null; entries: FeedEntry[]; etag: string | null; lastModified: string | null };

export class FeedReadError extends Error {}

type Fetched = Awaited<ReturnType<OutboundGuard['fetch']>>;

const READ_TIMEOUT_MS = 30_000;
/** Larger documents are refused: a feed that big is not a feed to post from. */
export const LARGEST_FEED_BYTES = 5 * 1024 * 1024;
/** Longer keys are stored as their hash, so the unique index stays small. */
const LONGEST_KEY = 500;

/** The feed parser, loaded with the first feed read: costly to load, and only accounts with feeds need it. */
const loadFeedParser = () => import('@rowanmanning/feed-parser');

export async function readFeed(outbound: OutboundGuard, url: string, validators: { etag: string | null; lastModified: string | null }): Promise<FeedRead> {
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
      text = decode(await readCapped(response), response.headers.get('content-type'));
    } catch (err) {
      if (err instanceof FeedReadError) throw err;
      throw new FeedReadError(unreachable(err, limit.signal));
    }
    const { parseFeed } = await loadFeedParser();
    let parsed: ReturnType<typeof parseFeed>;
    try {
      parsed = parseFeed(text);
    } catch (err) {
      throw new FeedReadError(`The address did not answer with an RSS or Atom feed (${(err as Error).message}).`);
    }
    return {
      kind: 'read',
      title: parsed.title ? plainText(parsed.title).slice(0, 300) : null,
      entries: entriesOf(parsed.items),
      etag: response.headers.get('etag'),
      lastModified: response.headers.get('last-modified'),
    };
  } finally {
    limit.clear();
  }
}

type ParsedItem = ReturnType<typeof parseFeed>['items'][number];

/** The items with a key each, the first of any repeated key kept. */
function entriesOf(items: ParsedItem[]): FeedEntry[] {
  const seen = new Set<string>();
  const entries: FeedEntry[] = [];
  for (const item of items) {
    const title = plainText(item.title ?? '');
    const summary = plainText(item.description ?? item.content ?? '');
    const link = item.url ?? '';
    const key = itemKey(item.id ?? (link || `text:${title}\n${summary}`));
    if (seen.has(key)) continue;
    seen.add(key);
    const image = item.image?.url ?? item.mediaImages[0]?.url ?? null;
    const published = (item.published ?? item.updated)?.getTime() ?? null;
    entries.push({ key, title, link, summary, image: image && /^https?:\/\//i.test(image) ? image : null, published });
  }
  return entries;
}

function itemKey(raw: string): string {
  return raw.length <= LONGEST_KEY ? raw : `sha256:${crypto.createHash('sha256').update(raw).digest('hex')}`;
}

async function readCapped(response: Fetched): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.length;
    if (size > LARGEST_FEED_BYTES) {
      await response.body?.cancel().catch(() => {});
      throw new FeedReadError(`The feed is larger than ${LARGEST_FEED_BYTES / 1024 / 1024} MB.`);
    }
    chunks.push(Buffer.from(chunk));
  }
  return Buffer.concat(chunks);
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
