/**
 * Text length as X counts it (twitter-text configuration v3): the text is NFC
 * normalised; each URL counts 23; each emoji (with its modifiers and joiners)
 * counts 2; other code points count 1 in the Latin and general punctuation
 * ranges below and 2 elsewhere (CJK, most symbols).
 */

export const X_URL_LENGTH = 23;

/** Code point ranges weighted 1 (everything else weighs 2). */
const LIGHT_RANGES: [number, number][] = [
  [0x0000, 0x10ff],
  [0x2000, 0x200d],
  [0x2010, 0x201f],
  [0x2032, 0x2037],
];

/**
 * URLs X recognises: with a scheme, starting with www., or a bare domain with a
 * common top-level domain. twitter-text knows every TLD; this list covers the
 * ones seen in practice, so a rare bare domain may count as plain text.
 */
const URL_PATTERN =
  /(?:https?:\/\/[^\s<>"]+|\bwww\.[^\s<>"]+|\b(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+(?:com|org|net|io|co|dev|app|ai|me|info|biz|edu|gov|uk|de|fr|es|it|nl|eu|us|ca|au|jp|cn|in|br|ru|ly|gl|gg|tv|xyz|link|news|blog|site|online|tech|page|social)\b(?:\/[^\s<>"]*)?)/giu;

/** Trailing punctuation is not part of a URL ("see x.com/a." ends at the "a"). */
const TRAILING_PUNCTUATION = /[.,:;!?'")\]]+$/u;

// The v flag (emoji sequences as one property) is built as a string: TypeScript's target predates it.
// biome-ignore lint/complexity/useRegexLiterals: a literal with the v flag does not compile for TypeScript's target.
const EMOJI = new RegExp('^\\p{RGI_Emoji}$', 'v');

const graphemes = new Intl.Segmenter('en', { granularity: 'grapheme' });

function codePointWeight(cp: number): number {
  return LIGHT_RANGES.some(([lo, hi]) => cp >= lo && cp <= hi) ? 1 : 2;
}

function plainWeight(text: string): number {
  let total = 0;
  for (const { segment } of graphemes.segment(text)) {
    if (EMOJI.test(segment)) {
      total += 2;
      continue;
    }
    for (const ch of segment) total += codePointWeight(ch.codePointAt(0)!);
  }
  return total;
}

export function xWeightedLength(input: string): number {
  const text = input.normalize('NFC');
  let total = 0;
  let last = 0;
  for (const match of text.matchAll(URL_PATTERN)) {
    const url = match[0].replace(TRAILING_PUNCTUATION, '');
    // A domain glued to a preceding word character (e.g. an e-mail address) is not a link.
    if (match.index > 0 && /[\p{L}\p{N}@_]/u.test(text[match.index - 1])) continue;
    total += plainWeight(text.slice(last, match.index)) + X_URL_LENGTH;
    last = match.index + url.length;
  }
  return total + plainWeight(text.slice(last));
}
