/**
 * Reddit (and the forums shown alike: Lemmy, Moltbook): the community, the
 * title in bold with its flair, then the text or the first picture. A post
 * sent to several communities is one post in each.
 */
import { clip, type TextParts, textParts } from './text.ts';
import { type Cell, cropFlags, type Flag, frame, type PreviewInput, textFlags, textSetting } from './shape.ts';

/** Where a post goes, as the settings hold it: {value: {subreddit, title, flair?}}. */
interface Target {
  subreddit?: string;
  title?: string;
  flair?: { name?: string } | null;
}

const PREFIX: Record<string, string> = { reddit: 'r/', lemmy: 'c/', moltbook: 'm/' };
/** Reddit titles end at 300 characters. */
const TITLE = 300;

export interface ForumShown {
  community: string;
  title: string;
  flair: string;
  body: TextParts;
  cell?: Cell;
  /** Other communities the same post goes to. */
  others: number;
  flags: Flag[];
}

export function forumPost(input: PreviewInput): ForumShown {
  const { name, rules, identifier } = input.network;
  const targets = (Array.isArray(input.settings.subreddit) ? input.settings.subreddit : []) as { value?: Target }[];
  const first = targets[0]?.value ?? {};
  const prefix = PREFIX[identifier] ?? '';
  const bare = (first.subreddit ?? textSetting(input.settings, 'submolt')).replace(/^\/?[rcm]\//, '');
  const item = input.items[0] ?? { content: '', media: [] };
  const picture = item.media[0];
  // A gallery or an image post shows its picture at its own shape, up to square tall and 2:1 wide.
  const cell = picture ? frame(picture, input.sizes[picture.path], { min: 4 / 5, max: 2 }) : undefined;
  const title = clip(first.title ?? textSetting(input.settings, 'title'), TITLE);
  const body = textParts(rules, item.content, { chars: 300, lines: 4 });
  const flags: Flag[] = [...textFlags(body, name, rules.maxLength), ...cropFlags(cell ? [cell] : [], name)];
  if (!title.shown) flags.push({ key: 'previews.noTitle', vars: { network: name } });
  if (title.cut) flags.push({ key: 'previews.titleCut', vars: { network: name } });
  return {
    community: bare ? prefix + bare : '',
    title: title.shown,
    flair: first.flair?.name ?? '',
    body,
    cell,
    others: Math.max(0, targets.length - 1),
    flags,
  };
}
