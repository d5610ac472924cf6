/**
 * The limits every network puts on one item of a post (length as the network
 * counts it, an item with something in it, how many media and of which kind),
 * checked in one place. Pure and free of Node's APIs like text-counting.ts: the
 * server's validation (domain/posts.ts) and the web composer
 * (web/src/composer-rules.ts) both call it, each saying the problems in its own words.
 */
import { countText, type TextCounting } from './text-counting.ts';

/** What of a network's content rules (ContentRules in types.ts) the check reads. */
export interface ItemLimits {
  maxLength: number;
  counting?: TextCounting;
  maxMedia: number;
  minMedia?: number;
  mediaKinds: readonly string[];
}

/** One item of a thread as the rules see it. */
export interface CheckedItem {
  content: string;
  /** A media type the library does not know yet is an empty string: its kind is checked once it is known. */
  media: { mimeType: string }[];
}

/**
 * One broken rule. `field` is the item's field it is about, named as the API
 * names it; the numbers are the network's `limit` and the item's `actual`.
 */
export type ContentProblem =
  | { field: 'content'; rule: 'max_length'; limit: number; actual: number }
  | { field: 'content'; rule: 'empty' }
  | { field: 'image'; rule: 'max_media'; limit: number; actual: number }
  | { field: 'image'; rule: 'min_media'; limit: number; actual: number }
  /** The media at `index` is of a `kind` (the first part of its type) the network does not take. */
  | { field: 'image'; rule: 'media_kind'; index: number; mimeType: string; kind: string };

/** The rules `item` breaks on a network with `limits`, in a fixed order; none when it fits. */
export function contentProblems(limits: ItemLimits, item: CheckedItem): ContentProblem[] {
  const problems: ContentProblem[] = [];
  const length = countText(limits.counting, item.content);
  if (length > limits.maxLength) problems.push({ field: 'content', rule: 'max_length', limit: limits.maxLength, actual: length });
  if (item.content.trim() === '' && item.media.length === 0) problems.push({ field: 'content', rule: 'empty' });
  const count = item.media.length;
  if (count > limits.maxMedia) problems.push({ field: 'image', rule: 'max_media', limit: limits.maxMedia, actual: count });
  const minMedia = limits.minMedia ?? 0;
  if (count < minMedia) problems.push({ field: 'image', rule: 'min_media', limit: minMedia, actual: count });
  for (const [index, { mimeType }] of item.media.entries()) {
    const kind = mimeType.split('/')[0]!;
    if (mimeType && !limits.mediaKinds.includes(kind)) problems.push({ field: 'image', rule: 'media_kind', index, mimeType, kind });
  }
  return problems;
}
