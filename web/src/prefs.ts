/**
 * The person's display preferences: language, time zone, week start, clock.
 * They are the person's, kept on the server (/api/app/preferences), so they
 * follow them to any browser; what the person has not chosen comes from this
 * browser (its language, zone and clock).
 */
import { useEffect, useState, useSyncExternalStore } from 'react';
import type { PersonPreferences, PreferencesChange } from '../../src/contract/preferences.ts';
import { api } from './api.ts';
import type { Language } from './i18n.ts';
import { browserLanguage, showLanguage } from './language.ts';

export interface Prefs {
  language: Language;
  zone: string;
  weekStart: 0 | 1;
  hour12: boolean;
}

const listeners = new Set<() => void>();
const NOTHING_CHOSEN: PersonPreferences = { language: null, zone: null, weekStart: null, clock: null };
let chosen: PersonPreferences = NOTHING_CHOSEN;

function browserDefaults(): Prefs {
  const resolved = new Intl.DateTimeFormat().resolvedOptions();
  return {
    language: browserLanguage(),
    zone: resolved.timeZone || 'UTC',
    weekStart: 1,
    hour12: resolved.hour12 ?? new Intl.DateTimeFormat(undefined, { hour: 'numeric' }).resolvedOptions().hour12 ?? false,
  };
}

function effective(person: PersonPreferences): Prefs {
  const defaults = browserDefaults();
  return {
    language: person.language ?? defaults.language,
    zone: person.zone ?? defaults.zone,
    weekStart: person.weekStart ?? defaults.weekStart,
    hour12: person.clock === null ? defaults.hour12 : person.clock === '12h',
  };
}

let current: Prefs = effective(chosen);

/** Takes the person's preferences as the server has them, and shows the pages in their language. */
async function adopt(person: PersonPreferences): Promise<void> {
  chosen = person;
  current = effective(person);
  for (const listener of listeners) listener();
  await showLanguage(current.language);
}

/** The person's choice is saved at once; the pages follow it before the server answers, and go back if it refuses. */
export async function setPrefs(change: PreferencesChange): Promise<void> {
  const before = chosen;
  await adopt({ ...chosen, ...change });
  try {
    await adopt(await api('PUT', '/preferences', change));
  } catch (error) {
    await adopt(before);
    throw error;
  }
}

export const setZone = (zone: string) => setPrefs({ zone }).catch(() => undefined);

/** Reads the signed-in person's preferences once per session; true once they are in place (or could not be read). */
export function usePersonPreferences(enabled: boolean): boolean {
  const [ready, setReady] = useState(false);
  useEffect(() => {
    if (!enabled) return;
    let live = true;
    api('GET', '/preferences')
      .then(adopt)
      // Unreadable preferences leave the browser's defaults: the pages still work.
      .catch(() => undefined)
      .finally(() => live && setReady(true));
    return () => {
      live = false;
    };
  }, [enabled]);
  return ready;
}

/** Back to this browser's defaults (at sign-out), so the next person starts from them. */
export function forgetPersonPreferences(): Promise<void> {
  return adopt(NOTHING_CHOSEN);
}

export function usePrefs(): Prefs {
  return useSyncExternalStore(
    (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    () => current,
  );
}

/** What the person chose themselves (null: the browser's default), for the Preferences page. */
export function useChosenPrefs(): PersonPreferences {
  return useSyncExternalStore(
    (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    () => chosen,
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
