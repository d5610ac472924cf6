/**
 * The items of an RSS or Atom document, as posts are made from them. This runs
 * inside the feed worker (feed-parse-worker.ts), never on the main thread: a
 * feed is untrusted input of up to 5 MB, and parsing it is work the event loop
 * must not wait for. Its cost is linear in the document: only the first
 * MOST_ITEMS_READ items are read, and the feed's own address (which the parser
 * looks up again for every item's link) is looked up once.
 */
import crypto from 'node:crypto';
import { parseFeed } from '@rowanmanning/feed-parser';
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

export interface FeedDocument {
  title: string | null;
  entries: FeedEntry[];
  /** How many items the document has; only the first MOST_ITEMS_READ are read. */
  itemCount: number;
}

/** Items read from one document; a feed lists its newest first, and no real feed needs more. */
export const MOST_ITEMS_READ = 1000;
/** Longer keys are stored as their hash, so the unique index stays small. */
const LONGEST_KEY = 500;

export class FeedDocumentError extends Error {}

export function readFeedDocument(text: string): FeedDocument {
  let parsed: ReturnType<typeof parseFeed>;
  try {
    parsed = parseFeed(text);
  } catch (err) {
    throw new FeedDocumentError(`The address did not answer with an RSS or Atom feed (${(err as Error).message}).`);
  }
  // Each item resolves its link against the feed's address, which the parser finds by
  // walking the whole document: kept here once, reading N items costs N, not N squared.
  Object.defineProperty(parsed, 'url', { value: parsed.url });
  const items = parsed.items;
  return {
    title: parsed.title ? plainText(parsed.title).slice(0, 300) : null,
    entries: entriesOf(items.slice(0, MOST_ITEMS_READ)),
    itemCount: items.length,
  };
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
