/**
 * How each network counts the length of a post's text. One module, free of
 * Node's APIs, so the server's checks and the web composer's live counters run
 * the very same functions (the web application imports this file).
 */
import { xWeightedLength } from './networks/x/text-length.ts';

const graphemeSegmenter = new Intl.Segmenter(undefined, { granularity: 'grapheme' });
const utf8 = new TextEncoder();

/** What a person sees as one character (Bluesky's count). */
export function graphemes(text: string): number {
  let n = 0;
  for (const _ of graphemeSegmenter.segment(text)) n++;
  return n;
}

/** Mastodon's count: every link is 23 characters, a mention counts only its local part. */
export function mastodonLength(text: string): number {
  const counted = text.replace(/https?:\/\/[^\s]+/g, 'x'.repeat(23)).replace(/(^|[^\w/])@(\w+)@[\w.-]+\w/g, '$1@$2');
  return [...counted].length;
}

const EMOJI_PART = /\p{Extended_Pictographic}|\p{Emoji_Modifier}|\p{Regional_Indicator}|\u200d|\ufe0f/u;

/** Threads counts characters, except that an emoji counts as many as its UTF-8 bytes. */
export function threadsLength(text: string): number {
  let length = 0;
  for (const char of text) length += EMOJI_PART.test(char) ? utf8.encode(char).length : 1;
  return length;
}

export const TEXT_COUNTINGS = {
  /** Unicode code points: the default. */
  codePoints: (text: string) => [...text].length,
  /** UTF-16 code units (JavaScript's `length`: Telegram, TikTok). */
  utf16: (text: string) => text.length,
  /** UTF-8 bytes (YouTube's descriptions). */
  utf8Bytes: (text: string) => utf8.encode(text).length,
  graphemes,
  x: xWeightedLength,
  mastodon: mastodonLength,
  threads: threadsLength,
} satisfies Record<string, (text: string) => number>;

export type TextCounting = keyof typeof TEXT_COUNTINGS;

/** The text's length as a network with `counting` counts it. */
export function countText(counting: TextCounting | undefined, text: string): number {
  return TEXT_COUNTINGS[counting ?? 'codePoints'](text);
}
