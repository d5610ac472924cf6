/**
 * A full day's count, for screen readers: FullCalendar hides a day's header
 * (its number, and the count beside it) from them, so the day's cell is named
 * "4 November 2026, 9 posts" instead. The cells are FullCalendar's: each is
 * registered as it mounts, and relabelled whenever the counts change.
 */
import { useEffect, useRef } from 'react';
import { t } from '../../i18n.ts';

interface DayCellMount {
  el: HTMLElement;
  date: Date;
}

export function useDayCountLabels(perDay: Map<string, number>, shownPerDay: number, language: string, zone: string) {
  const cells = useRef(new Map<HTMLElement, Date>());
  const label = useRef<(el: HTMLElement, date: Date) => void>(() => {});
  label.current = (el, date) => {
    const count = perDay.get(date.toISOString().slice(0, 10)) ?? 0;
    if (count <= shownPerDay) return el.removeAttribute('aria-label');
    // FullCalendar's day dates are midnight UTC of the day in the calendar's zone.
    const day = new Intl.DateTimeFormat(language, { dateStyle: 'long', timeZone: 'UTC' }).format(date);
    el.setAttribute('aria-label', `${day}, ${t('calendar.dayCount', { count })}`);
  };
  useEffect(() => {
    for (const [el, date] of cells.current) label.current(el, date);
  }, [perDay, shownPerDay, language, zone]);
  return {
    dayCellDidMount: ({ el, date }: DayCellMount) => {
      cells.current.set(el, date);
      label.current(el, date);
    },
    dayCellWillUnmount: ({ el }: DayCellMount) => {
      cells.current.delete(el);
    },
  };
}
