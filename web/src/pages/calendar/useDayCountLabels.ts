/**
 * A full day's count, for screen readers: FullCalendar hides a day's header
 * (its number, and the count beside it) from them, so the day's cell is named
 * "November 4, 2026, 9 posts" instead. The cells are FullCalendar's: each is
 * registered as it mounts, and relabelled whenever the counts change.
 */
import { useEffect, useRef } from 'react';
import { t } from '../../i18n.ts';

interface DayCellMount {
  el: HTMLElement;
  date: Date;
}

/** Each day's posts, by its date (YYYY-MM-DD in the calendar's zone). */
type Days = ReadonlyMap<string, readonly unknown[]>;

interface Counts {
  days: Days;
  shownPerDay: number;
  language: string;
}

/** Names a full day's cell with its date and count; a day with room for its posts keeps the name FullCalendar gives it. */
function labelDay(el: HTMLElement, date: Date, { days, shownPerDay, language }: Counts): void {
  const count = days.get(date.toISOString().slice(0, 10))?.length ?? 0;
  if (count <= shownPerDay) {
    el.removeAttribute('aria-label');
    return;
  }
  // FullCalendar's day dates are midnight UTC of the day in the calendar's zone.
  const day = new Intl.DateTimeFormat(language, { dateStyle: 'long', timeZone: 'UTC' }).format(date);
  el.setAttribute('aria-label', `${day}, ${t('calendar.dayCount', { count })}`);
}

export function useDayCountLabels(days: Days, shownPerDay: number, language: string) {
  const cells = useRef(new Map<HTMLElement, Date>());
  const latest = useRef<Counts>({ days, shownPerDay, language });
  latest.current = { days, shownPerDay, language };
  useEffect(() => {
    for (const [el, date] of cells.current) labelDay(el, date, { days, shownPerDay, language });
  }, [days, shownPerDay, language]);
  return {
    dayCellDidMount: ({ el, date }: DayCellMount) => {
      cells.current.set(el, date);
      labelDay(el, date, latest.current);
    },
    dayCellWillUnmount: ({ el }: DayCellMount) => {
      cells.current.delete(el);
    },
  };
}
