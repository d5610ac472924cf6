/**
 * The text of a post made from a feed item: the subscription's template with
 * {title}, {link} and {summary} filled in, and made to fit each network (the
 * summary is shortened first, then the title; the link is never cut, since a
 * cut link leads nowhere).
 */
import { decodeEntities } from '../../lib/html-entities.ts';

export interface ItemFields {
  title: string;
  link: string;
  summary: string;
}

/** The words of an item's HTML summary, for a post: no tags, no scripts, one space between words. */
export function plainText(html: string): string {
  const text = html.replace(/<(script|style)\b[\s\S]*?<\/\1\s*>/gi, ' ').replace(/<[^>]*>/g, ' ');
  return decodeEntities(text).replace(/\s+/g, ' ').trim();
}

export function renderTemplate(template: string, fields: ItemFields): string {
  return template
    .replace(/\{(title|link|summary)\}/g, (_, name: keyof ItemFields) => fields[name])
    .replace(/[ \t]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/** The first `length` characters of `text`, at a word's end when one is near, with an ellipsis when cut. */
function cut(chars: string[], length: number): string {
  if (length >= chars.length) return chars.join('');
  if (length <= 1) return '';
  let head = chars.slice(0, length - 1).join('');
  const space = head.lastIndexOf(' ');
  if (space > head.length - 20 && space > 0) head = head.slice(0, space);
  return `${head.trimEnd()}…`;
}

/**
 * The template filled in so that `fits` accepts it, when it can be: the summary
 * is shortened (to nothing if need be), then the title. Returns the shortest
 * attempt when nothing fits; the post's own checks then say why.
 */
export function fitTemplate(template: string, fields: ItemFields, fits: (text: string) => boolean): string {
  let current = { ...fields };
  let text = renderTemplate(template, current);
  if (fits(text)) return text;
  for (const field of ['summary', 'title'] as const) {
    const chars = Array.from(current[field]);
    const at = (length: number) => renderTemplate(template, { ...current, [field]: cut(chars, length) });
    if (!fits(at(0))) {
      current = { ...current, [field]: '' };
      text = at(0);
      continue;
    }
    // The longest cut that fits: 0 fits, the whole does not.
    let low = 0;
    let high = chars.length;
    while (high - low > 1) {
      const middle = Math.floor((low + high) / 2);
      if (fits(at(middle))) low = middle;
      else high = middle;
    }
    return at(low);
  }
  return text;
}
