/**
 * Repeating posts: the list, one series with its rule, next occurrences and the
 * posts made so far (edit, stop), and the box a post of a series shows.
 */
import { useState } from 'react';
import { Link, useLocation, useNavigate, useParams } from 'react-router-dom';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { api, pub, type Series } from '../api.ts';
import { keys, useChannels } from '../data.ts';
import { t } from '../i18n.ts';
import { usePrefs } from '../prefs.ts';
import { formatWhen } from '../time.ts';
import { describeRule } from '../components/Repeat.tsx';
import { ErrorNote, Loading, Notice, StateBadge } from '../components/ui.tsx';

/** Under the posts' key, so the live stream (a post created or published anywhere) refreshes them too. */
export const seriesKeys = {
  all: [...keys.posts, 'series'] as const,
  one: (id: string) => [...keys.posts, 'series', id] as const,
};

export const useSeries = (id: string, enabled = true) => useQuery({ queryKey: seriesKeys.one(id), queryFn: () => api('GET', pub(`/series/${id}`)), enabled });

/**
 * "Stop series": after the person confirms, deletes the series and goes to the list
 * saying how many posts went with it; a refusal goes to `setError`.
 */
function useStopSeries(id: string, setError: (error: unknown) => void): () => Promise<void> {
  const navigate = useNavigate();
  const client = useQueryClient();
  return async () => {
    setError(undefined);
    if (!confirm(t('series.confirmStop'))) return;
    try {
      const stopped = await api('DELETE', pub(`/series/${id}`));
      await client.invalidateQueries({ queryKey: keys.posts });
      navigate('/series', { state: { notice: t('series.stopped', { count: stopped.removedPosts.length }) } });
    } catch (err) {
      setError(err);
    }
  };
}

function SeriesState({ series }: { series: Series }) {
  return (
    <span className={`state ${series.state === 'active' ? 'state-queue' : 'state-draft'}`}>
      {t(series.state === 'active' ? 'series.stateActive' : 'series.stateEnded')}
    </span>
  );
}

export function SeriesListPage() {
  const prefs = usePrefs();
  const location = useLocation();
  const notice = (location.state as { notice?: string } | null)?.notice;
  const list = useQuery({ queryKey: seriesKeys.all, queryFn: () => api('GET', pub('/series')) });
  if (list.isPending) return <Loading />;
  if (list.error) return <ErrorNote error={list.error} onRetry={() => list.refetch()} />;
  return (
    <section>
      <div className="page-head">
        <h1>{t('series.listTitle')}</h1>
      </div>
      {notice && <Notice kind="success">{notice}</Notice>}
      {list.data.length === 0 ? (
        <p>
          {t('series.none')} <Link to="/compose">{t('series.compose')}</Link>
        </p>
      ) : (
        <ul className="cards">
          {list.data.map((s) => (
            <li key={s.id} className="card" data-testid={`series-${s.id}`}>
              <div className="row">
                <Link to={`/series/${s.id}`}>
                  <strong>{s.name ?? s.posts[0]?.value[0]?.content.slice(0, 60) ?? s.id}</strong>
                </Link>
                <SeriesState series={s} />
              </div>
              <span>{describeRule(s.repeat, prefs)}</span>
              {s.upcoming[0] && <small>{t('series.next', { when: formatWhen(s.upcoming[0], prefs) })}</small>}
              {s.lastError && <span className="field-error">{t('series.lastError', { error: s.lastError })}</span>}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

export function SeriesPage() {
  const { id = '' } = useParams();
  const location = useLocation();
  const prefs = usePrefs();
  const channels = useChannels();
  const series = useSeries(id);
  const [error, setError] = useState<unknown>();
  const stop = useStopSeries(id, setError);
  const notice = (location.state as { notice?: string } | null)?.notice;
  if (series.isPending) return <Loading />;
  if (series.error) return <ErrorNote error={series.error} onRetry={() => series.refetch()} />;
  const s = series.data;
  const channelName = (cid: string) => channels.data?.find((c) => c.id === cid)?.name ?? cid;
  const first = s.posts[0]?.value[0];
  const later = s.upcoming.filter((at) => !s.occurrences.some((o) => o.at === at));
  return (
    <section className="series-page">
      <div className="page-head">
        <h1>{s.name ?? t('series.title')}</h1>
        <SeriesState series={s} />
      </div>
      {notice && <Notice kind="success">{notice}</Notice>}
      <p className="series-rule">{describeRule(s.repeat, prefs)}</p>
      {s.lastError && <Notice kind="warning">{t('series.lastError', { error: s.lastError })}</Notice>}
      <p>
        {t('series.channelsOf')}: {s.posts.map((p) => channelName(p.integration.id)).join(', ')}
      </p>
      {first && <p className="content series-text">{first.content}</p>}
      <div className="actions">
        <Link to={`/series/${s.id}/edit`} className="button">
          {t('series.edit')}
        </Link>
        <button type="button" className="danger" onClick={stop}>
          {t('series.stop')}
        </button>
      </div>
      <ErrorNote error={error} />
      {later.length > 0 && (
        <>
          <h2>{t('series.later')}</h2>
          <ul>
            {later.map((when) => (
              <li key={when}>{formatWhen(when, prefs)}</li>
            ))}
          </ul>
        </>
      )}
      <h2>{t('series.occurrences')}</h2>
      {s.occurrences.length === 0 ? (
        <p>{t('series.noOccurrences')}</p>
      ) : (
        <>
          <p className="hint">{t('series.detachedHelp')}</p>
          <ol className="occurrences">
            {s.occurrences.map((o) => (
              <li key={o.at} data-testid={`occurrence-${o.index}`}>
                <span>{formatWhen(o.at, prefs)}</span>
                {o.posts.map((p) => (
                  <Link key={p.id} to={`/posts/${p.id}`} className="occurrence-post">
                    <StateBadge state={p.state} /> {channelName(p.integration)}
                  </Link>
                ))}
                {o.detached && <small className="detached">{t('series.detached')}</small>}
              </li>
            ))}
          </ol>
        </>
      )}
    </section>
  );
}

/** On a post's page: the series it belongs to, with "edit series" and "stop series". */
export function SeriesBox({ seriesId }: { seriesId: string }) {
  const prefs = usePrefs();
  const series = useSeries(seriesId);
  const [error, setError] = useState<unknown>();
  const stop = useStopSeries(seriesId, setError);
  // A stopped series is gone: the post stays, on its own.
  if (!series.data) return null;
  const s = series.data;
  return (
    <section className="panel series-box" aria-label={t('series.title')}>
      <p>
        <span aria-hidden="true">↻ </span>
        {t('series.partOf', { rule: describeRule(s.repeat, prefs) })} <small>{t('series.editOne')}</small>
      </p>
      <div className="row">
        <Link to={`/series/${s.id}`}>{t('series.open')}</Link>
        <Link to={`/series/${s.id}/edit`} className="button">
          {t('series.edit')}
        </Link>
        <button type="button" className="danger" onClick={stop}>
          {t('series.stop')}
        </button>
      </div>
      <ErrorNote error={error} />
    </section>
  );
}
