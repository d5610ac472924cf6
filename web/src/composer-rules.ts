/**
 * What the composer checks while a person writes: each selected network's rules
 * (length as that network counts it, media count and kind, threads), with the
 * fixes it can offer. The counting functions are the server's own module.
 */
import { countText } from '../../src/providers/text-counting.ts';
import type { Network } from './api.ts';
import { t } from './i18n.ts';

export interface ItemDraft {
  content: string;
  media: { id: string; path: string; mimeType: string; thumbnail: string | null; name: string; alt: string }[];
  delay: number;
}

export type Fix = 'split' | 'shorten' | 'drop';

export interface Problem {
  item: number;
  message: string;
  fixes: Fix[];
}

export function checkItems(network: Network, items: ItemDraft[]): { counts: number[]; problems: Problem[]; warnings: string[] } {
  const { rules, name } = network;
  const counts = items.map((item) => countText(rules.counting, item.content));
  const problems: Problem[] = [];
  const warnings: string[] = [];
  const published = rules.threads ? items : items.slice(0, 1);
  if (!rules.threads && items.length > 1) warnings.push(t('composer.noThreads', { name }));
  published.forEach((item, i) => {
    if (counts[i]! > rules.maxLength) {
      problems.push({
        item: i,
        message: t('composer.tooLong', { name, count: counts[i]!, max: rules.maxLength }),
        fixes: [...(rules.threads ? (['split'] as const) : []), 'shorten', 'drop'],
      });
    }
    if (item.media.length > rules.maxMedia)
      problems.push({ item: i, message: t('composer.tooManyMedia', { name, max: rules.maxMedia, count: item.media.length }), fixes: ['drop'] });
    for (const m of item.media) {
      const kind = m.mimeType.startsWith('video/') ? 'video' : 'image';
      if (!rules.mediaKinds.includes(kind)) problems.push({ item: i, message: t('composer.wrongKind', { name, kind }), fixes: ['drop'] });
    }
  });
  if (rules.minMedia > 0 && (items[0]?.media.length ?? 0) < rules.minMedia)
    problems.push({ item: 0, message: t('composer.needsMedia', { name, min: rules.minMedia }), fixes: ['drop'] });
  return { counts, problems, warnings };
}

/** The longest start of `text` that the network counts within `max`, cut at a word when one is near. */
export function cutTo(network: Pick<Network, 'rules'>, text: string, max: number): string {
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

/** A text that is too long, as thread items that each fit. */
export function splitToFit(network: Network, text: string): string[] {
  const parts: string[] = [];
  let rest = text.trim();
  while (rest && countText(network.rules.counting, rest) > network.rules.maxLength) {
    const head = cutTo(network, rest, network.rules.maxLength).trimEnd();
    if (!head) break;
    parts.push(head);
    rest = rest.slice(head.length).trimStart();
  }
  if (rest) parts.push(rest);
  return parts;
}
