/**
 * X: the text within 280 (X's counting; longer needs Premium), up to four
 * pictures in X's grids (two side by side at 7:8, three as one tall beside two,
 * four in a 2×2 of 16:9), a link's card when there are no pictures, and the
 * thread under the first post.
 */
import { type FeedShown, feedPost, type Grid } from './feed.ts';
import type { PreviewInput } from './shape.ts';

export const X_GRID: Grid = {
  // One picture: shown whole from 3:4 to 2:1 in the timeline, cut beyond.
  single: { min: 3 / 4, max: 2 },
  cells: { 2: [7 / 8, 7 / 8], 3: [7 / 8, 7 / 4, 7 / 4], 4: [16 / 9, 16 / 9, 16 / 9, 16 / 9] },
};

export const xPost = (input: PreviewInput): FeedShown => feedPost(input, X_GRID);
