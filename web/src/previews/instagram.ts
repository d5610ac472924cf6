/**
 * Instagram: a feed post's pictures share the first one's shape, kept within
 * 4:5 to 1.91:1 (a carousel of up to ten, swiped); a single video is a reel at
 * 9:16; a story shows each picture full screen at 9:16 without the caption.
 * The caption folds into "… more" after about 125 characters or two lines.
 * The profile's grid shows the next nine posts as 3:4 tiles, newest first.
 */
import { unique } from './feed.ts';
import { type Cell, cropFlags, droppedFlag, type Flag, fixed, frame, isVideo, type PreviewInput, type PreviewMedia, textFlags, textSetting } from './shape.ts';
import { type TextParts, textParts } from './text.ts';

export const INSTAGRAM_FEED = { min: 4 / 5, max: 1.91 };
export const INSTAGRAM_FOLD = { chars: 125, lines: 2 };
const STORY = 9 / 16;
/** The profile grid's tiles (portrait since 2025). */
export const GRID_TILE = 3 / 4;

export type InstagramKind = 'image' | 'carousel' | 'reel' | 'story';

export interface InstagramShown {
  kind: InstagramKind;
  cells: Cell[];
  caption: TextParts;
  flags: Flag[];
}

export function instagramKind(media: PreviewMedia[], postType: string): InstagramKind {
  if (postType === 'story') return 'story';
  if (media.length === 1 && isVideo(media[0]!)) return 'reel';
  return media.length > 1 ? 'carousel' : 'image';
}

export function instagramPost(input: PreviewInput): InstagramShown {
  const { rules, name } = input.network;
  const item = input.items[0] ?? { content: '', media: [] };
  const media = item.media.slice(0, rules.maxMedia);
  const kind = instagramKind(media, textSetting(input.settings, 'post_type'));
  let cells: Cell[];
  if (kind === 'story' || kind === 'reel') cells = media.map((m) => frame(m, input.sizes[m.path], fixed(STORY)));
  else {
    // The first picture sets the carousel's shape; the others are cut to it.
    const first = media[0] ? frame(media[0], input.sizes[media[0].path], INSTAGRAM_FEED) : undefined;
    const shape = first?.ratio;
    cells = media.map((m, i) =>
      i === 0 || shape === undefined ? (first ?? frame(m, input.sizes[m.path], INSTAGRAM_FEED)) : frame(m, input.sizes[m.path], fixed(shape)),
    );
  }
  const caption = textParts(rules, item.content, INSTAGRAM_FOLD);
  const flags: Flag[] = [...cropFlags(cells, name), ...droppedFlag(item.media.length, rules.maxMedia, name)];
  if (kind === 'story') {
    if (item.content.trim()) flags.push({ key: 'previews.storyNoText', vars: { network: name } });
  } else flags.unshift(...textFlags(caption, name, rules.maxLength));
  if (media.length === 0) flags.push({ key: 'previews.needsMedia', vars: { network: name } });
  if (input.items.length > 1) flags.push({ key: 'previews.noThread', vars: { network: name } });
  return { kind, cells, caption, flags: unique(flags) };
}

/** A post of the profile, as the grid needs it. */
export interface GridPost {
  id: string;
  at: number;
  /** Its first picture, if any. */
  cover?: string;
  /** The post being written (or previewed), among the others. */
  current?: boolean;
}

/** The next nine tiles of the profile: the posts by date, newest first, the current one in its place. */
export function profileGrid(current: GridPost, others: GridPost[]): GridPost[] {
  return [{ ...current, current: true }, ...others.filter((p) => p.id !== current.id)].sort((a, b) => b.at - a.at).slice(0, 9);
}
