/** Dates as the person reads them: in their zone, with the zone named. */
import type { Prefs } from './prefs.ts';
import { locale } from './i18n.ts';

/** One format per language, zone and clock: making one costs more than using it, and the calendar writes a date on every tile. */
const whenFormats = new Map<string, Intl.DateTimeFormat>();

export function formatWhen(iso: string | number, prefs: Prefs): string {
  const key = `${locale} ${prefs.zone} ${prefs.hour12}`;
  let format = whenFormats.get(key);
  if (!format) {
    format = new Intl.DateTimeFormat(locale, {
      year: 'numeric',
      month: 'short',
      day: 'numeric',
      hour: 'numeric',
      minute: '2-digit',
      timeZone: prefs.zone,
      hour12: prefs.hour12,
    });
    whenFormats.set(key, format);
  }
  // Named by the zone itself: Intl's short name is often only an offset ("GMT+1"), which says neither where nor whether summer time applies.
  return `${format.format(new Date(iso))} ${prefs.zone}`;
}

/** The zone this browser runs in, as an IANA name (a new channel starts in its creator's zone). */
export function browserZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
}

export function formatBytes(bytes: number): string {
  const units = ['B', 'KB', 'MB', 'GB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${new Intl.NumberFormat(locale, { maximumFractionDigits: unit === 0 ? 0 : 1 }).format(value)} ${units[unit]}`;
}

/** A length of time in seconds, with the unit as the language writes it (12 s, 12 秒). */
export function formatSeconds(seconds: number): string {
  return new Intl.NumberFormat(locale, { style: 'unit', unit: 'second', unitDisplay: 'narrow' }).format(Math.round(seconds));
}
