/**
 * The shape most feeds give a post: text (with its fold and its limit), the
 * pictures in the network's grid for their number, and a link's card when the
 * post has no media. Each family names its own grid, fold and bounds.
 */
import { type Bounds, type Cell, cropFlags, droppedFlag, type Flag, frame, isVideo, type PreviewInput, type PreviewItem, textFlags } from './shape.ts';
import { type Fold, firstLink, type TextParts, textParts } from './text.ts';

/** The frame of each picture for a number of pictures; one picture keeps its own shape within `single`. */
export interface Grid {
  single: Bounds;
  /** By count (2, 3, 4…): the shape of each cell, in order; the last entry serves larger counts. */
  cells: Record<number, number[]>;
  /** Several pictures in a row that scrolls sideways, each at its own shape within these bounds (instead of cells). */
  row?: Bounds;
}

export interface FeedItem {
  text: TextParts;
  cells: Cell[];
  /** Pictures beyond those the grid shows ("+N" on the last one). */
  more: number;
  /** The address whose card the network shows (no media only). */
  link?: string;
}

export interface FeedShown {
  items: FeedItem[];
  flags: Flag[];
}

/** Where the grid puts each picture, and which are cropped. */
export function gridCells(media: PreviewItem['media'], input: Pick<PreviewInput, 'sizes'>, grid: Grid): { cells: Cell[]; more: number } {
  if (media.length === 1) return { cells: [frame(media[0]!, input.sizes[media[0]!.path], grid.single)], more: 0 };
  if (grid.row) return { cells: media.map((m) => frame(m, input.sizes[m.path], grid.row!)), more: 0 };
  const counts = Object.keys(grid.cells).map(Number);
  const shapes = grid.cells[Math.min(media.length, Math.max(...counts))] ?? [];
  const cells = media.slice(0, shapes.length).map((m, i) => frame(m, input.sizes[m.path], { min: shapes[i]!, max: shapes[i]! }));
  return { cells, more: media.length - cells.length };
}

/** A post as a feed shows it: every item of a thread on networks with threads, the first otherwise. */
export function feedPost(input: PreviewInput, grid: Grid, fold?: Fold): FeedShown {
  const { rules, name } = input.network;
  const items = rules.threads ? input.items : input.items.slice(0, 1);
  const flags: Flag[] = [];
  const shown = items.map((item) => {
    const taken = item.media.slice(0, rules.maxMedia);
    const text = textParts(rules, item.content, fold);
    // A video is shown alone, at its own shape.
    const { cells, more } = taken.some(isVideo) ? { cells: [frame(taken.find(isVideo)!, undefined, grid.single)], more: 0 } : gridCells(taken, input, grid);
    flags.push(...textFlags(text, name, rules.maxLength), ...cropFlags(cells, name), ...droppedFlag(item.media.length, rules.maxMedia, name));
    const link = taken.length === 0 ? firstLink(item.content) : undefined;
    return { text, cells, more, ...(link ? { link } : {}) };
  });
  if (input.items.length > items.length) flags.push({ key: 'previews.noThread', vars: { network: name } });
  return { items: shown, flags: unique(flags) };
}

/** One flag per message: a thread's items repeat the same fold. */
export function unique(flags: Flag[]): Flag[] {
  const seen = new Set<string>();
  return flags.filter((f) => {
    const key = f.key + JSON.stringify(f.vars ?? {});
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
