/**
 * Bluesky: up to 300 graphemes, up to four pictures (one at its own shape, two
 * square, three as one tall beside two, four in a 2×2 of 3:2) with an "ALT"
 * mark on those described, and otherwise the card of the first link, which
 * Herald builds from the page's Open Graph tags (GET /api/app/link-card).
 */
import { type FeedShown, feedPost, type Grid } from './feed.ts';
import type { PreviewInput } from './shape.ts';

export const BLUESKY_GRID: Grid = {
  single: { min: 1 / 2, max: 4 },
  cells: { 2: [1, 1], 3: [1 / 2, 1, 1], 4: [3 / 2, 3 / 2, 3 / 2, 3 / 2] },
};

export const blueskyPost = (input: PreviewInput): FeedShown => feedPost(input, BLUESKY_GRID);
