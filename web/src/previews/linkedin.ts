/**
 * LinkedIn (members and pages): "…see more" after about 210 characters or three
 * lines, pictures as LinkedIn lays them out (one from 4:5 to 1.91:1, two side
 * by side, one wide above two or three, "+N" past four) and a PDF as a
 * document that readers page through, under its title.
 */
import { type FeedShown, feedPost, type Grid } from './feed.ts';
import { type PreviewInput, type PreviewMedia, textSetting } from './shape.ts';

export const LINKEDIN_GRID: Grid = {
  single: { min: 4 / 5, max: 1.91 },
  cells: { 2: [1, 1], 3: [16 / 9, 1, 1], 4: [16 / 9, 4 / 3, 4 / 3, 4 / 3] },
};

export const LINKEDIN_FOLD = { chars: 210, lines: 3 };

const isDocument = (m: PreviewMedia) => m.mimeType === 'application/pdf';

export type LinkedInShown = FeedShown & { document?: { media: PreviewMedia; title: string } };

export function linkedinPost(input: PreviewInput): LinkedInShown {
  const first = input.items[0];
  const document = first?.media.find(isDocument);
  if (!document) return feedPost(input, LINKEDIN_GRID, LINKEDIN_FOLD);
  const withoutDocument = { ...input, items: [{ ...first!, media: [] }] };
  const shown = feedPost(withoutDocument, LINKEDIN_GRID, LINKEDIN_FOLD);
  return {
    ...shown,
    items: shown.items.map((i) => ({ ...i, link: undefined })),
    document: { media: document, title: textSetting(input.settings, 'carousel_name') || document.name },
  };
}
