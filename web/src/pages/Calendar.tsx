/**
 * The home page: every post on a day, week, month or list calendar, in the
 * person's time zone, filtered by channel, customer and state, dragged to
 * reschedule, kept current by the live stream.
 */
import { useMemo, useState } from 'react';
import { Link, useLocation, useNavigate } from 'react-router-dom';
import { keepPreviousData, useQuery, useQueryClient } from '@tanstack/react-query';
import FullCalendar from '@fullcalendar/react';
import dayGridPlugin from '@fullcalendar/react/daygrid';
import timeGridPlugin from '@fullcalendar/react/timegrid';
import listPlugin from '@fullcalendar/react/list';
import interactionPlugin from '@fullcalendar/react/interaction';
import classicTheme from '@fullcalendar/react/themes/classic';
import '@fullcalendar/react/skeleton.css';
import '@fullcalendar/react/themes/classic/theme.css';
import '@fullcalendar/react/themes/classic/palette.css';
import { api, pub, type PostState } from '../api.ts';
import { keys, useChannels } from '../data.ts';
import { t, type MessageKey } from '../i18n.ts';
import { calendarLocale } from '../calendar-locale.ts';
import { setZone, usePrefs } from '../prefs.ts';
import { formatWhen } from '../time.ts';
import { ErrorNote, Notice, ZoneSelect } from '../components/ui.tsx';
import { BulkActions } from '../components/BulkActions.tsx';
import { Announcer, type Announcement } from '../components/Announcer.tsx';
import { PostTile } from './calendar/PostTile.tsx';
import { calendarPosts, eventTitle, monthPosts, postsByDay, type CalendarPost, type TileChannel } from './calendar/tiles.ts';
import { MoreText } from './calendar/MoreText.tsx';
import { useGridKeys } from './calendar/useGridKeys.ts';
import { useDayCountLabels } from './calendar/useDayCountLabels.ts';

const STATES: PostState[] = ['QUEUE', 'PUBLISHED', 'ERROR', 'DRAFT'];

/** Posts a day shows before "+N more": a busy month stays a month high. */
const POSTS_SHOWN_PER_DAY = 3;

export function postsInRange(start: string, end: string) {
  return api('GET', pub(`/posts?startDate=${encodeURIComponent(start)}&endDate=${encodeURIComponent(end)}`)).then((r) => r.posts);
}

/** Why a post in this state cannot be moved, if it cannot. */
function unmovable(state: CalendarPost['state']): MessageKey | undefined {
  if (state === 'PUBLISHED') return 'calendar.publishedStays';
  if (state === 'PUBLISHING') return 'calendar.sendingStays';
  return undefined;
}

export function CalendarPage() {
  const prefs = usePrefs();
  const navigate = useNavigate();
  const client = useQueryClient();
  const channels = useChannels();
  const [range, setRange] = useState<{ start: string; end: string }>();
  const [filter, setFilter] = useState({ channel: '', customer: '', state: '' });
  // What the page that sent the person here confirms (a post saved in the composer, one deleted).
  const notice = (useLocation().state as { notice?: string } | null)?.notice;
  const [message, setMessage] = useState<Announcement | undefined>(notice ? { kind: 'success', text: notice } : undefined);
  // Select mode: a click (or Enter) on a post adds it to the selection instead of opening it.
  const [selecting, setSelecting] = useState(false);
  const [chosen, setChosen] = useState<Set<string>>(new Set());
  const keyboard = useGridKeys();
  const [view, setView] = useState(() => (window.matchMedia('(max-width: 600px)').matches ? 'listWeek' : 'dayGridMonth'));
  // The month's day whose "+N more" list was opened: FullCalendar is given all its posts, so the list has them all.
  const [openDay, setOpenDay] = useState<string>();

  // The tiles and the posts being sent come in one answer, so the calendar redraws once per change (a redraw in the middle of a drag would drop it).
  const tiles = useQuery({
    queryKey: [...keys.posts, 'calendar', range?.start, range?.end],
    queryFn: () => api('GET', `/calendar?startDate=${encodeURIComponent(range!.start)}&endDate=${encodeURIComponent(range!.end)}`),
    enabled: !!range,
    placeholderData: keepPreviousData,
  });
  const tileChannels = useMemo(
    () =>
      new Map(
        (channels.data ?? []).map((c): [string, TileChannel] => [
          c.id,
          { id: c.id, name: c.name, picture: c.picture, network: c.identifier, customer: c.customer?.id ?? '' },
        ]),
      ),
    [channels.data],
  );
  const posts = useMemo(
    (): CalendarPost[] => (tiles.data ? calendarPosts(tiles.data.posts, tiles.data.publishing, tileChannels) : []),
    [tiles.data, tileChannels],
  );
  // In the same answer as the tiles, so a retry's news redraws the calendar once.
  const retrying = useMemo(() => new Map((tiles.data?.retrying ?? []).map((r) => [r.id, r])), [tiles.data]);

  const customers = useMemo(
    () => [...new Map((channels.data ?? []).flatMap((c) => (c.customer ? [[c.customer.id, c.customer.name] as const] : []))).entries()],
    [channels.data],
  );

  const shown = useMemo(
    () =>
      posts.filter(
        (p) =>
          (!filter.channel || p.channel.id === filter.channel) &&
          (!filter.state || (filter.state === 'PENDING' ? p.approval === 'pending' : p.state === filter.state)) &&
          (!filter.customer || p.channel.customer === filter.customer),
      ),
    [posts, filter],
  );
  const days = useMemo(() => postsByDay(shown, prefs.zone), [shown, prefs.zone]);
  const month = view === 'dayGridMonth';
  // A month draws a few posts a day: FullCalendar gets those (and the open day's), the week, day and list views every post.
  const drawn = useMemo(() => (month ? monthPosts(days, POSTS_SHOWN_PER_DAY, openDay) : shown), [month, days, openDay, shown]);
  const dayCountLabels = useDayCountLabels(days, POSTS_SHOWN_PER_DAY, prefs.language);

  const events = useMemo(
    () =>
      drawn.map((p) => ({
        id: p.id,
        start: p.publishDate,
        title: eventTitle(p),
        url: `/posts/${p.id}`,
        // Every post can be picked up, so a drag that cannot move one says why (eventDrop) instead of doing nothing.
        editable: true,
        // FullCalendar 7 puts an event's `className` (a string; it ignores `classNames`) on the event's element.
        className: `post-event post-${p.state.toLowerCase()}${chosen.has(p.id) ? ' chosen' : ''}`,
        extendedProps: { post: p },
      })),
    [drawn, chosen],
  );

  const noChannels = channels.data?.length === 0;
  return (
    <section className="calendar-page">
      {/* The grid is one tab stop: from here, its first post is two keys away (arrows then move between posts and days). */}
      <nav className="calendar-skips" aria-label={t('calendar.title')}>
        <a className="skip" href="#calendar-grid">
          {t('calendar.skipToGrid')}
        </a>
        <a className="skip" href="#calendar-filter-channel">
          {t('calendar.skipToFilters')}
        </a>
      </nav>
      <div className="page-head">
        <h1>{t('calendar.title')}</h1>
        <label className="inline">
          {t('calendar.zone')}
          <ZoneSelect value={prefs.zone} onChange={setZone} />
        </label>
      </div>
      {noChannels && (
        <Notice>
          <strong>{t('calendar.emptyTitle')}</strong> {t('calendar.emptyBody')} <Link to="/channels">{t('calendar.connect')}</Link>
        </Notice>
      )}
      <div className="filters">
        <label className="inline">
          {t('calendar.filterChannel')}
          <select id="calendar-filter-channel" value={filter.channel} onChange={(e) => setFilter({ ...filter, channel: e.target.value })}>
            <option value="">{t('calendar.all')}</option>
            {(channels.data ?? []).map((c) => (
              <option key={c.id} value={c.id}>
                {c.name} ({c.identifier})
              </option>
            ))}
          </select>
        </label>
        {customers.length > 0 && (
          <label className="inline">
            {t('calendar.filterCustomer')}
            <select value={filter.customer} onChange={(e) => setFilter({ ...filter, customer: e.target.value })}>
              <option value="">{t('calendar.all')}</option>
              {customers.map(([id, name]) => (
                <option key={id} value={id}>
                  {name}
                </option>
              ))}
            </select>
          </label>
        )}
        <label className="inline">
          {t('calendar.filterState')}
          <select value={filter.state} onChange={(e) => setFilter({ ...filter, state: e.target.value })}>
            <option value="">{t('calendar.all')}</option>
            {STATES.map((s) => (
              <option key={s} value={s}>
                {t(`state.${s}`)}
              </option>
            ))}
            <option value="PENDING">{t('calendar.pending')}</option>
          </select>
        </label>
      </div>
      <div className="row">
        <button
          type="button"
          aria-pressed={selecting}
          onClick={() => {
            setSelecting(!selecting);
            setChosen(new Set());
          }}
        >
          {t('bulk.select')}
        </button>
        {selecting && (
          <BulkActions
            selected={posts.filter((p) => chosen.has(p.id)).map((p) => ({ id: p.id, content: p.text, publishDate: p.publishDate }))}
            onDone={(summary) => {
              setMessage(summary);
              setChosen(new Set());
            }}
          />
        )}
      </div>
      <Announcer message={message} onClose={() => setMessage(undefined)} />
      {tiles.error && <ErrorNote error={new Error(t('calendar.loadFailed', { message: (tiles.error as Error).message }))} onRetry={() => tiles.refetch()} />}
      <section
        id="calendar-grid"
        className="calendar-grid"
        ref={keyboard.grid}
        tabIndex={-1}
        aria-label={t('calendar.gridLabel')}
        aria-describedby="calendar-grid-keys"
        onFocus={keyboard.onFocus}
        onKeyDown={keyboard.onKeyDown}
      >
        <p id="calendar-grid-keys" className="visually-hidden">
          {t('calendar.gridKeys')}
        </p>
        <FullCalendar
          plugins={[classicTheme, dayGridPlugin, timeGridPlugin, listPlugin, interactionPlugin]}
          initialView={view}
          headerToolbar={{ start: 'prev,next today', center: 'title', end: 'timeGridDay,timeGridWeek,dayGridMonth,listWeek' }}
          buttons={{
            today: { text: t('calendar.today'), hint: t('calendar.today') },
            prev: { hint: t('calendar.previous') },
            next: { hint: t('calendar.next') },
            timeGridDay: { text: t('calendar.day') },
            timeGridWeek: { text: t('calendar.week') },
            dayGridMonth: { text: t('calendar.month') },
            listWeek: { text: t('calendar.list') },
          }}
          noEventsText={t('calendar.noPosts')}
          locale={calendarLocale()}
          timeZone={prefs.zone}
          firstDay={prefs.weekStart}
          eventTimeFormat={{ hour: 'numeric', minute: '2-digit', hour12: prefs.hour12 }}
          slotHeaderFormat={{ hour: 'numeric', minute: '2-digit', omitZeroMinute: prefs.hour12, hour12: prefs.hour12 }}
          nowIndicator
          editable
          eventDurationEditable={false}
          height="auto"
          events={events}
          datesSet={(info) => {
            setRange({ start: info.start.toISOString(), end: info.end.toISOString() });
            setView(info.view.type);
          }}
          eventClick={(info) => {
            info.jsEvent.preventDefault();
            if (!selecting) return navigate(`/posts/${info.event.id}`);
            const id = info.event.id;
            setChosen((set) => {
              const next = new Set(set);
              if (!next.delete(id)) next.add(id);
              return next;
            });
          }}
          eventContent={(info) => (
            <PostTile
              post={info.event.extendedProps.post as CalendarPost}
              retry={retrying.get(info.event.id)}
              timeText={info.timeText}
              chosen={chosen.has(info.event.id)}
              prefs={prefs}
            />
          )}
          dayMaxEvents={POSTS_SHOWN_PER_DAY}
          eventMaxStack={POSTS_SHOWN_PER_DAY}
          moreLinkClick={(info) => {
            if (month) setOpenDay((info.jsEvent.target as Element | null)?.closest<HTMLElement>('[data-date]')?.dataset.date);
            return 'popover';
          }}
          moreLinkContent={(info) => (
            <MoreText
              narrow={info.isNarrow}
              counted={info.num}
              // FullCalendar counts the posts it was given; a month's day holds more (a week's stack of posts has them all).
              hiddenOn={month ? (day) => Math.max(0, (days.get(day)?.length ?? 0) - POSTS_SHOWN_PER_DAY) : undefined}
            />
          )}
          moreLinkHint={(count: number) => t('calendar.moreHint', { count })}
          {...dayCountLabels}
          dayCellTopContent={(info) => {
            const count = days.get(info.date.toISOString().slice(0, 10))?.length ?? 0;
            // A full day says how many posts it holds, beside its number (a phone's narrow day has "+N" only).
            return (
              <>
                {count > POSTS_SHOWN_PER_DAY && !info.isNarrow && <span className="day-count">{t('calendar.dayCount', { count })}</span>}
                <span>{info.dayNumberText}</span>
              </>
            );
          }}
          eventDrop={async (info) => {
            // Published posts stay where they went out; one being sent cannot move.
            const stays = unmovable((info.event.extendedProps.post as CalendarPost).state);
            if (stays) {
              info.revert();
              return setMessage({ kind: 'warning', text: t(stays) });
            }
            try {
              const moved = await api('PUT', `/posts/${info.event.id}/date`, { date: info.event.start!.toISOString() });
              setMessage({ kind: 'success', text: t('calendar.moved', { when: formatWhen(moved.publishDate, prefs) }) });
            } catch (err) {
              info.revert();
              setMessage({ kind: 'warning', text: t('calendar.moveRefused', { message: (err as Error).message }) });
            }
            void client.invalidateQueries({ queryKey: keys.posts });
          }}
        />
      </section>
    </section>
  );
}
