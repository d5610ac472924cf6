/**
 * YouTube and TikTok show a video first: YouTube in a 16:9 player under its
 * title (a vertical video becomes a Short at 9:16), TikTok full screen at 9:16
 * with the caption over it. Both take their cover from the settings or the
 * video itself.
 */
import { clip, type TextParts, textParts } from './text.ts';
import { type Flag, isVideo, type PreviewInput, type PreviewMedia, pathSetting, textFlags, textSetting } from './shape.ts';

export interface VideoShown {
  /** The video (or, on TikTok, the first photo of a photo post). */
  media?: PreviewMedia;
  /** A picture chosen as the cover, when the settings name one. */
  cover?: string;
  title: string;
  description: TextParts;
  /** Width / height of the frame the network plays it in. */
  ratio: number;
  /** YouTube: a vertical video is a Short. */
  short: boolean;
  photos: number;
  flags: Flag[];
}

/** YouTube's titles are cut after about 70 characters in lists. */
const YOUTUBE_TITLE = 70;

export function youtubeVideo(input: PreviewInput): VideoShown {
  const { name, rules } = input.network;
  const item = input.items[0] ?? { content: '', media: [] };
  const media = item.media.find(isVideo);
  const size = media ? input.sizes[media.path] : undefined;
  const short = !!size && size.height > size.width;
  const title = clip(textSetting(input.settings, 'title'), YOUTUBE_TITLE);
  const description = textParts(rules, item.content, { chars: 160, lines: 3 });
  const flags: Flag[] = [...textFlags(description, name, rules.maxLength)];
  if (!media) flags.push({ key: 'previews.needsVideo', vars: { network: name } });
  if (!title.shown) flags.push({ key: 'previews.noTitle', vars: { network: name } });
  if (title.cut) flags.push({ key: 'previews.titleCut', vars: { network: name } });
  return { media, cover: pathSetting(input.settings, 'thumbnail'), title: title.shown, description, ratio: short ? 9 / 16 : 16 / 9, short, photos: 0, flags };
}

/** TikTok's caption shows two lines over the video, the rest behind "more". */
const TIKTOK_FOLD = { chars: 80, lines: 2 };

export function tiktokVideo(input: PreviewInput): VideoShown {
  const { name, rules } = input.network;
  const item = input.items[0] ?? { content: '', media: [] };
  const video = item.media.find(isVideo);
  const photos = video ? 0 : item.media.length;
  const description = textParts(rules, item.content, TIKTOK_FOLD);
  const flags: Flag[] = [...textFlags(description, name, rules.maxLength)];
  const media = video ?? item.media[0];
  if (!media) flags.push({ key: 'previews.needsMedia', vars: { network: name } });
  const size = media ? input.sizes[media.path] : undefined;
  // TikTok shows other shapes whole, with bars: nothing is cut, but the screen is not filled.
  if (size && Math.abs(size.width / size.height - 9 / 16) > 0.02) flags.push({ key: 'previews.letterboxed', vars: { network: name, name: media!.name } });
  return { media, title: textSetting(input.settings, 'title'), description, ratio: 9 / 16, short: false, photos, flags };
}
