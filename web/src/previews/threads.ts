/**
 * Threads (and notes on Nostr and Farcaster, shown alike): the text within
 * 500, pictures in a row that scrolls sideways at their own shape up to 4:5
 * tall, a link's card when there are none, and replies as a thread.
 */
import { type FeedShown, feedPost, type Grid } from './feed.ts';
import type { PreviewInput } from './shape.ts';

const ROW = { min: 4 / 5, max: 1.91 };

export const THREADS_GRID: Grid = {
  single: ROW,
  cells: {},
  row: ROW,
};

export function threadsPost(input: PreviewInput): FeedShown {
  return feedPost(input, THREADS_GRID);
}
