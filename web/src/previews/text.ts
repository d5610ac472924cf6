/**
 * What of a text a network shows: the part above its "see more" fold, the part
 * behind it, and what goes past its limit (refused or cut when publishing).
 * Pure, for the previews and the composer's fixes alike.
 */
import { countText, type TextCounting } from '../../../src/providers/text-counting.ts';

export interface TextParts {
  /** Shown at once in the feed. */
  shown: string;
  /** Behind the network's "see more" (still published). */
  folded: string;
  /** Past the network's limit: not published as written. */
  cut: string;
}

/** Where a network folds a long text in its feed: after this many characters or lines, whichever comes first. */
export interface Fold {
  chars: number;
  lines: number;
}

interface Limits {
  counting: TextCounting;
  maxLength: number;
}

/** The longest start of `text` that the network counts within `max`, cut at a word when one is near. */
export function cutTo(network: { rules: Pick<Limits, 'counting'> }, text: string, max: number): string {
  const chars = [...text];
  let low = 0;
  let high = chars.length;
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (countText(network.rules.counting, chars.slice(0, mid).join('')) <= max) low = mid;
    else high = mid - 1;
  }
  const cut = chars.slice(0, low).join('');
  const space = cut.lastIndexOf(' ');
  return low < chars.length && space > cut.length * 0.6 ? cut.slice(0, space) : cut;
}

/** The start of `text` a fold leaves visible (at a word when one is near), or all of it when it fits. */
export function foldAt(text: string, fold: Fold): string {
  const lines = text.split('\n');
  let head = lines.length > fold.lines ? lines.slice(0, fold.lines).join('\n') : text;
  const chars = [...head];
  if (chars.length > fold.chars) {
    head = chars.slice(0, fold.chars).join('');
    const space = head.lastIndexOf(' ');
    if (space > head.length * 0.6) head = head.slice(0, space);
  }
  return head.length < text.length ? head.trimEnd() : text;
}

export function textParts(rules: Limits, text: string, fold?: Fold): TextParts {
  const fits = countText(rules.counting, text) > rules.maxLength ? cutTo({ rules }, text, rules.maxLength) : text;
  const shown = fold ? foldAt(fits, fold) : fits;
  return { shown, folded: fits.slice(shown.length), cut: text.slice(fits.length) };
}

/** A title a network shows on one line or two: what fits, and what it cuts with "…". */
export function clip(text: string, max: number): { shown: string; cut: boolean } {
  const chars = [...text.trim()];
  return chars.length > max ? { shown: `${chars.slice(0, max - 1).join('')}…`, cut: true } : { shown: chars.join(''), cut: false };
}

/** The first web address in a text, where a network makes its link card from. */
export function firstLink(text: string): string | undefined {
  return /\bhttps?:\/\/[^\s<>"']+[^\s<>"'.,;:!?)\]]/i.exec(text)?.[0];
}
