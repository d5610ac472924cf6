/** The words of a day's "+N more" link in the calendar. */
import { useLayoutEffect, useRef, useState } from 'react';
import { t } from '../../i18n.ts';

/**
 * "+N more": N as FullCalendar counted (`counted`), or, where `hiddenOn` is
 * given, as the page counts the day's posts (a month view gives FullCalendar
 * only the posts it draws). FullCalendar does not tell the link its day; the
 * day's cell does (data-date), read before the browser paints. The link's hint
 * (its title, which FullCalendar writes from its own count) says the same N.
 */
export function MoreText({ narrow, counted, hiddenOn }: { narrow: boolean; counted: number; hiddenOn?: (day: string) => number }) {
  const ref = useRef<HTMLSpanElement>(null);
  const [day, setDay] = useState<string>();
  const count = (hiddenOn && day && hiddenOn(day)) || counted;
  // After every render: FullCalendar may keep a link and move it to another day, and writes its title again when it redraws it.
  useLayoutEffect(() => {
    setDay(ref.current?.closest<HTMLElement>('[data-date]')?.dataset.date);
    const link = ref.current?.closest<HTMLElement>('[aria-haspopup="dialog"]');
    if (link && hiddenOn) link.title = t('calendar.moreHint', { count });
  });
  return <span ref={ref}>{t(narrow ? 'calendar.moreShort' : 'calendar.more', { count })}</span>;
}
