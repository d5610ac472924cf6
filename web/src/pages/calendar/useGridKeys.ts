/** Wires grid-keys.ts to the calendar's container: the tab stop follows focus and FullCalendar's redraws. */
import { useCallback, useEffect, useRef, type KeyboardEvent } from 'react';
import { isGridItem, keepOneTabStop, nextItem } from './grid-keys.ts';

export function useGridKeys() {
  const grid = useRef<HTMLElement>(null);
  const current = useRef<HTMLElement | null>(null);

  useEffect(() => {
    const root = grid.current;
    if (!root) return;
    let queued = false;
    // FullCalendar redraws its days on every change of posts or view; the tab stop is set again after each.
    const observer = new MutationObserver(() => {
      if (queued) return;
      queued = true;
      queueMicrotask(() => {
        queued = false;
        keepOneTabStop(root, current.current);
      });
    });
    observer.observe(root, { childList: true, subtree: true });
    keepOneTabStop(root, current.current);
    return () => observer.disconnect();
  }, []);

  const onFocus = useCallback((event: { target: EventTarget }) => {
    const root = grid.current;
    // The skip link lands on the grid itself: on to its tab stop.
    if (root && event.target === root) return keepOneTabStop(root, current.current)?.focus();
    if (!root || !(event.target instanceof HTMLElement) || !isGridItem(root, event.target)) return;
    current.current = event.target;
    keepOneTabStop(root, event.target);
  }, []);

  const onKeyDown = useCallback((event: KeyboardEvent<HTMLElement>) => {
    const root = grid.current;
    if (!root || !(event.target instanceof HTMLElement) || event.altKey || event.ctrlKey || event.metaKey) return;
    const to = nextItem(root, event.target, event.key);
    if (!to) return;
    event.preventDefault();
    current.current = to;
    keepOneTabStop(root, to);
    to.focus();
  }, []);

  return { grid, onFocus, onKeyDown };
}
