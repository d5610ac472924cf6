/** Which notifications this person has seen, remembered in this browser (the newest date seen). */
import { useSyncExternalStore } from 'react';

const KEY = 'herald.notifications.seen';
const listeners = new Set<() => void>();

const seenUpTo = () => localStorage.getItem(KEY) ?? '';

/** The number of notifications in `list` newer than the newest one seen; follows markSeen. */
export function useUnreadCount(list: { createdAt: string }[]): number {
  const seen = useSyncExternalStore((listener) => {
    listeners.add(listener);
    return () => listeners.delete(listener);
  }, seenUpTo);
  return list.filter((n) => n.createdAt > seen).length;
}

export function markSeen(list: { createdAt: string }[]): void {
  // biome-ignore lint/complexity/useMathMinMax: the dates are ISO strings, compared as text.
  const newest = list.reduce((max, n) => (n.createdAt > max ? n.createdAt : max), seenUpTo());
  if (newest === seenUpTo()) return;
  localStorage.setItem(KEY, newest);
  for (const listener of listeners) listener();
}
