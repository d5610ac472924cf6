/**
 * Blogs and newsletters (DEV, Hashnode, Medium, WordPress, Tumblr, listmonk,
 * Skool, Whop): the article as its list shows it: the cover, the title, a
 * subtitle when there is one and an excerpt of the text without its markup.
 */
import { clip } from './text.ts';
import { type Flag, type PreviewInput, isVideo, pathSetting, textSetting } from './shape.ts';

/** The excerpt lists show under a title. */
const EXCERPT = 160;

export interface ArticleShown {
  cover?: string;
  title: string;
  subtitle: string;
  excerpt: string;
  flags: Flag[];
}

/** The text as a reader sees it in a list: no Markdown or HTML marks, one paragraph. */
export function plainText(markup: string): string {
  return markup
    .replace(/<[^>]*>/g, ' ')
    .replace(/!\[[^\]]*\]\([^)]*\)/g, ' ')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/^\s{0,3}(#{1,6}|>|[-*+]|\d+\.)\s+/gm, '')
    .replace(/[*_`~]+/g, '')
    .replace(/\s+/g, ' ')
    .trim();
}

export function article(input: PreviewInput): ArticleShown {
  const { name } = input.network;
  const item = input.items[0] ?? { content: '', media: [] };
  const title = textSetting(input.settings, 'title') || textSetting(input.settings, 'subject');
  const picture = item.media.find((m) => !isVideo(m));
  const excerpt = clip(plainText(item.content), EXCERPT);
  const flags: Flag[] = [];
  if (!title) flags.push({ key: 'previews.noTitle', vars: { network: name } });
  return {
    cover: pathSetting(input.settings, 'main_image') ?? picture?.path,
    title,
    subtitle: textSetting(input.settings, 'subtitle') || textSetting(input.settings, 'preview'),
    excerpt: excerpt.shown,
    flags,
  };
}
