/**
 * Mastodon: the handle as @user@server, the text within the server's limit,
 * up to four pictures in a 16:9 box (two halves, one half beside two quarters,
 * or four quarters) with an "ALT" mark on those described. A post with a
 * content warning shows the warning and hides the rest behind "Show more".
 */
import { type FeedShown, feedPost, type Grid } from './feed.ts';
import { type PreviewInput, textSetting } from './shape.ts';

export const MASTODON_GRID: Grid = {
  single: { min: 3 / 4, max: 2 },
  cells: { 2: [8 / 9, 8 / 9], 3: [8 / 9, 16 / 9, 16 / 9], 4: [16 / 9, 16 / 9, 16 / 9, 16 / 9] },
};

export interface MastodonShown extends FeedShown {
  /** The content warning (the `spoiler_text` setting) each status shows in place of its text and media. */
  warning?: string;
}

export function mastodonPost(input: PreviewInput): MastodonShown {
  const warning = textSetting(input.settings, 'spoiler_text');
  return { ...feedPost(input, MASTODON_GRID), ...(warning ? { warning } : {}) };
}

/** The account as Mastodon writes it: one "@" before the user, one before the server ("@@name" came from a stored "@name"). */
export function mastodonHandle(profile: string | null, name: string): string {
  const bare = (profile ?? '').replace(/^@+/, '');
  return bare ? `@${bare}` : name;
}
