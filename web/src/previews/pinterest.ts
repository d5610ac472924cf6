/**
 * Pinterest: a pin is its picture (whole from 1:2.1 to 1.91:1, taller ones cut
 * in the feed), its title, its description and the board it is saved to.
 * Dribbble shows a shot the same way, always at 4:3.
 */
import { clip, type TextParts, textParts } from './text.ts';
import { type Cell, cropFlags, fixed, type Flag, frame, type PreviewInput, textFlags, textSetting } from './shape.ts';

const PIN = { min: 1 / 2.1, max: 1.91 };
const SHOT = fixed(4 / 3);
/** Pin titles show up to 100 characters. */
const TITLE = 100;

export interface PinShown {
  cell?: Cell;
  title: string;
  description: TextParts;
  board: string;
  more: number;
  flags: Flag[];
}

export function pin(input: PreviewInput): PinShown {
  const { name, rules, identifier } = input.network;
  const item = input.items[0] ?? { content: '', media: [] };
  const first = item.media[0];
  const cell = first ? frame(first, input.sizes[first.path], identifier === 'dribbble' ? SHOT : PIN) : undefined;
  const title = clip(textSetting(input.settings, 'title'), TITLE);
  const description = textParts(rules, item.content);
  const flags: Flag[] = [...textFlags(description, name, rules.maxLength), ...cropFlags(cell ? [cell] : [], name)];
  if (!cell) flags.push({ key: 'previews.needsMedia', vars: { network: name } });
  if (title.cut) flags.push({ key: 'previews.titleCut', vars: { network: name } });
  return { cell, title: title.shown, description, board: textSetting(input.settings, 'board'), more: Math.max(0, item.media.length - 1), flags };
}
