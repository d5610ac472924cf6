/**
 * Facebook (and the feeds shown like it: VK, MeWe, Google Business Profile):
 * "See more" after about five lines, pictures in Facebook's layouts (one at its
 * shape from 4:5 to 1.91:1, two squares, one wide above two or three, five
 * and more with "+N"), or a story: each picture or video full screen at 9:16,
 * without the text.
 */
import { type FeedShown, feedPost, type Grid } from './feed.ts';
import { cropFlags, fixed, frame, type PreviewInput, textSetting } from './shape.ts';

export const FACEBOOK_GRID: Grid = {
  single: { min: 4 / 5, max: 1.91 },
  cells: { 2: [1, 1], 3: [2, 1, 1], 4: [2, 4 / 3, 4 / 3, 4 / 3], 5: [1, 1, 1, 1, 1] },
};

export const FACEBOOK_FOLD = { chars: 480, lines: 5 };

export type FacebookShown = ({ kind: 'post' } & FeedShown) | ({ kind: 'story' } & Pick<FeedShown, 'flags'> & { frames: ReturnType<typeof frame>[] });

export function facebookPost(input: PreviewInput): FacebookShown {
  if (textSetting(input.settings, 'post_type') === 'story') {
    const media = input.items[0]?.media ?? [];
    const frames = media.map((m) => frame(m, input.sizes[m.path], fixed(9 / 16)));
    const flags = cropFlags(frames, input.network.name);
    if (input.items[0]?.content.trim()) flags.push({ key: 'previews.storyNoText', vars: { network: input.network.name } });
    return { kind: 'story', frames, flags };
  }
  return { kind: 'post', ...feedPost(input, FACEBOOK_GRID, FACEBOOK_FOLD) };
}
