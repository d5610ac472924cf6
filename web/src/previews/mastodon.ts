/**
 * Mastodon: the handle as @user@server, the text within the server's limit,
 * up to four pictures in a 16:9 box (two halves, one half beside two quarters,
 * or four quarters) with an "ALT" mark on those described.
 */
import { type FeedShown, feedPost, type Grid } from './feed.ts';
import type { PreviewInput } from './shape.ts';

export const MASTODON_GRID: Grid = {
  single: { min: 3 / 4, max: 2 },
  cells: { 2: [8 / 9, 8 / 9], 3: [8 / 9, 16 / 9, 16 / 9], 4: [16 / 9, 16 / 9, 16 / 9, 16 / 9] },
};

export const mastodonPost = (input: PreviewInput): FeedShown => feedPost(input, MASTODON_GRID);

/** The account as Mastodon writes it: one "@" before the user, one before the server ("@@name" came from a stored "@name"). */
export function mastodonHandle(profile: string | null, name: string): string {
  const bare = (profile ?? '').replace(/^@+/, '');
  return bare ? `@${bare}` : name;
}
