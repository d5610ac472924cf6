/** The person's display preferences, kept in this browser: time zone, week start, clock. */
import { useSyncExternalStore } from 'react';

export interface Prefs {
  zone: string;
  weekStart: 0 | 1;
  hour12: boolean;
}

const KEY = 'herald.prefs';
const listeners = new Set<() => void>();

function systemDefaults(): Prefs {
  const resolved = new Intl.DateTimeFormat().resolvedOptions();
  return {
    zone: resolved.timeZone || 'UTC',
    weekStart: 1,
    hour12: resolved.hour12 ?? new Intl.DateTimeFormat(undefined, { hour: 'numeric' }).resolvedOptions().hour12 ?? false,
  };
}

let current: Prefs = (() => {
  try {
    return { ...systemDefaults(), ...JSON.parse(localStorage.getItem(KEY) ?? '{}') };
  } catch {
    return systemDefaults();
  }
})();

export function setPrefs(change: Partial<Prefs>): void {
  current = { ...current, ...change };
  localStorage.setItem(KEY, JSON.stringify(current));
  for (const listener of listeners) listener();
}

export const setZone = (zone: string) => setPrefs({ zone });

export function usePrefs(): Prefs {
  return useSyncExternalStore(
    (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    () => current,
  );
}

/** Every zone the browser knows, with UTC and the person's own (which the list may spell differently). */
export function allZones(): string[] {
  let zones: string[] = [];
  try {
    zones = Intl.supportedValuesOf('timeZone');
  } catch {
    // An older browser: the two below still let the person choose.
  }
  return [...new Set(['UTC', current.zone, ...zones])];
}
