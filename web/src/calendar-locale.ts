/**
 * FullCalendar's own words in the person's language: the hints screen readers
 * read on its buttons and links, "all-day", "+N more". Its dates already come
 * from Intl with the same locale code.
 */
import type { LocaleInput } from '@fullcalendar/react';
import { locale, t } from './i18n.ts';

/** FullCalendar puts the unit, view or date where a hint says $0. */
const SLOT = '$0';

/** One object per language: FullCalendar redraws itself whenever it is handed a new one. */
const built = new Map<string, LocaleInput>();

export function calendarLocale(): LocaleInput {
  const known = built.get(locale);
  if (known) return known;
  const words: LocaleInput = {
    code: locale,
    todayText: t('calendar.today'),
    prevText: t('calendar.previous'),
    nextText: t('calendar.next'),
    dayText: t('calendar.day'),
    weekTextLong: t('calendar.week'),
    weekTextShort: t('calendar.weekShort'),
    monthText: t('calendar.month'),
    listText: t('calendar.list'),
    closeHint: t('common.close'),
    eventsHint: t('calendar.events'),
    allDayText: t('calendar.allDay'),
    timedText: t('calendar.timed'),
    moreLinkText: (count: number) => t('calendar.more', { count }),
    noEventsText: t('calendar.noPosts'),
    todayHint: (unitText: string, unit: string) => (unit === 'day' ? t('calendar.today') : t('calendar.thisUnit', { unit: unitText })),
    prevHint: t('calendar.previousUnit', { unit: SLOT }),
    nextHint: t('calendar.nextUnit', { unit: SLOT }),
    viewHint: t('calendar.viewHint', { view: SLOT }),
    viewChangeHint: t('calendar.changeView'),
    navLinkHint: t('calendar.goTo', { date: SLOT }),
    moreLinkHint: (count: number) => t('calendar.moreHint', { count }),
  };
  built.set(locale, words);
  return words;
}
