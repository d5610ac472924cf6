/**
 * What the composer checks while a person writes: each selected network's rules
 * (length as that network counts it, media count and kind, threads), with the
 * fixes it can offer. The rules and the counting are the server's own modules
 * (content-rules.ts, text-counting.ts); this file says their problems in the
 * composer's words.
 */
import { contentProblems, type ContentProblem } from '../../src/providers/content-rules.ts';
import { countText } from '../../src/providers/text-counting.ts';
import type { Network } from './api.ts';
import { t } from './i18n.ts';
import { cutTo } from './previews/text.ts';

// Cutting a text to a limit is the previews' rule too; it lives with them and is re-exported for the fixes.
export { cutTo };

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
  const warnings: string[] = [];
  const published = rules.threads ? items : items.slice(0, 1);
  if (!rules.threads && items.length > 1) warnings.push(t('composer.noThreads', { name }));
  const problems = published.flatMap((item, i) =>
    contentProblems(rules, item).flatMap((p) => {
      const said = composerProblem(network, p);
      return said ? [{ item: i, ...said }] : [];
    }),
  );
  return { counts, problems, warnings };
}

/** A broken rule in the composer's words, with the fixes it offers; none for an empty item. */
function composerProblem({ name, rules }: Network, p: ContentProblem): Omit<Problem, 'item'> | undefined {
  switch (p.rule) {
    case 'max_length':
      return {
        message: t('composer.tooLong', { name, count: p.actual, max: p.limit }),
        fixes: [...(rules.threads ? (['split'] as const) : []), 'shorten', 'drop'],
      };
    case 'max_media':
      return { message: t('composer.tooManyMedia', { name, max: p.limit, count: p.actual }), fixes: ['drop'] };
    case 'min_media':
      return { message: t('composer.needsMedia', { name, min: p.limit }), fixes: ['drop'] };
    case 'media_kind':
      return { message: t('composer.wrongKind', { name, kind: p.kind }), fixes: ['drop'] };
    case 'empty':
      // A new post starts empty: the composer does not nag before anything is written; the server says so on sending.
      return undefined;
  }
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
