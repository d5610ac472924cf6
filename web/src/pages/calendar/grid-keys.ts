/**
 * The calendar grid from the keyboard: one tab stop for the whole grid (a
 * roving tabindex) instead of one per post, arrow keys between posts and days,
 * Home and End to the first and last post. The posts are FullCalendar's links
 * (Enter opens them) and its "+N more" buttons; a day is a cell with data-date.
 * The popover of a day's posts keeps its own Tab order.
 */

/** Posts and "+N more" buttons in the grid's days, in reading order. */
const ITEMS = '[data-date] a.post-event, [data-date] [aria-haspopup="dialog"]';

function itemsOf(grid: HTMLElement): HTMLElement[] {
  return [...grid.querySelectorAll<HTMLElement>(ITEMS)].filter((el) => !el.closest('[role="dialog"]'));
}

/** Whether `el` is one of the grid's posts or "+N more" buttons (not the toolbar's buttons, not the popover's posts). */
export const isGridItem = (grid: HTMLElement, el: Element) => itemsOf(grid).includes(el as HTMLElement);

const dayOf = (item: HTMLElement) => item.closest<HTMLElement>('[data-date]')?.dataset.date ?? '';

/** The YYYY-MM-DD `days` days after `day`. */
function shift(day: string, days: number): string {
  const at = new Date(`${day}T00:00:00Z`);
  at.setUTCDate(at.getUTCDate() + days);
  return at.toISOString().slice(0, 10);
}

/** Keeps exactly one item tabbable: the one last focused if it is still there, else the first. */
export function keepOneTabStop(grid: HTMLElement, current: HTMLElement | null): HTMLElement | undefined {
  const items = itemsOf(grid);
  const stop = current && items.includes(current) ? current : items[0];
  // Only where it changes: FullCalendar redraws in several passes, and each pass brings this back.
  for (const item of items) {
    const tabIndex = item === stop ? 0 : -1;
    if (item.tabIndex !== tabIndex) item.tabIndex = tabIndex;
  }
  return stop;
}

/** Where an arrow key (or Home, End) leads from `from`; undefined for other keys or at an edge. */
export function nextItem(grid: HTMLElement, from: HTMLElement, key: string): HTMLElement | undefined {
  const items = itemsOf(grid);
  if (!items.includes(from)) return undefined;
  const byDay = new Map<string, HTMLElement[]>();
  for (const item of items) byDay.set(dayOf(item), [...(byDay.get(dayOf(item)) ?? []), item]);
  const days = [...byDay.keys()].sort();
  const day = dayOf(from);
  const inDay = byDay.get(day) ?? [];
  const at = inDay.indexOf(from);
  // The first post of the nearest day with posts, stepping `step` days at a time, within the days shown.
  const seek = (step: number): HTMLElement | undefined => {
    for (let d = shift(day, step); d >= days[0]! && d <= days.at(-1)!; d = shift(d, step)) {
      const found = byDay.get(d);
      if (found) return found[0];
    }
    return undefined;
  };
  switch (key) {
    case 'ArrowDown':
      return inDay[at + 1] ?? seek(7);
    case 'ArrowUp':
      return inDay[at - 1] ?? seek(-7);
    case 'ArrowRight':
      return seek(1);
    case 'ArrowLeft':
      return seek(-1);
    case 'Home':
      return items[0];
    case 'End':
      return items.at(-1);
    default:
      return undefined;
  }
}
