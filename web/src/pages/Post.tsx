/** One post: its whole thread with each item's state, error, attempts and link; retry, move, duplicate, edit, delete. */
import { useState } from 'react';
import { Link, useLocation, useNavigate, useParams } from 'react-router-dom';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { api, pub } from '../api.ts';
import { keys } from '../data.ts';
import { t } from '../i18n.ts';
import { usePrefs } from '../prefs.ts';
import { formatWhen } from '../time.ts';
import { fromLocalInput, toLocalInput } from '../wall-clock.ts';
import { Avatar, ErrorNote, FieldError, Loading, Notice, StateBadge } from '../components/ui.tsx';
import { fromRef, Thumb } from '../components/MediaPicker.tsx';
import { SeriesBox } from './Series.tsx';
import { ApprovalBadge, ApprovalPanel, CommentsPanel, PreviewLinksPanel } from '../components/Approval.tsx';
import { RetryingBadge, retryingText, useRetrying } from '../components/Retrying.tsx';

export function PostPage() {
  const { id = '' } = useParams();
  const location = useLocation();
  const navigate = useNavigate();
  const client = useQueryClient();
  const prefs = usePrefs();
  const post = useQuery({ queryKey: keys.post(id), queryFn: () => api('GET', pub(`/posts/${id}`)) });
  const retrying = useRetrying();
  const [error, setError] = useState<unknown>();
  const [notice, setNotice] = useState<string | undefined>((location.state as { notice?: string } | null)?.notice);
  const [moveTo, setMoveTo] = useState<string>();

  if (post.isPending) return <Loading />;
  if (post.error) return <ErrorNote error={post.error} onRetry={() => post.refetch()} />;
  const p = post.data;
  const act = async (work: () => Promise<unknown>, done?: string) => {
    setError(undefined);
    try {
      await work();
      if (done) setNotice(done);
      await client.invalidateQueries({ queryKey: keys.posts });
    } catch (err) {
      setError(err);
    }
  };
  const movable = p.state !== 'PUBLISHED';
  const retry = p.state === 'QUEUE' ? retrying.data?.get(p.id) : undefined;
  return (
    <section className="post-page">
      <div className="page-head">
        <h1>{t('post.title')}</h1>
        <span className="row">
          {retry ? <RetryingBadge retry={retry} /> : <StateBadge state={p.state} />}
          {p.approval && <ApprovalBadge approval={p.approval} />}
        </span>
      </div>
      {notice && <Notice kind="success">{notice}</Notice>}
      <p className="post-channel">
        <Avatar src={p.integration.picture} name={p.integration.name} /> {p.integration.name} <small>{p.integration.providerIdentifier}</small>
      </p>
      <p>{t(p.state === 'PUBLISHED' ? 'post.publishedAt' : 'post.scheduledFor', { when: formatWhen(p.publishDate, prefs) })}</p>
      {retry && (
        <Notice kind="warning">
          <span data-testid="retrying">{retryingText(retry, prefs)}</span>
        </Notice>
      )}
      {p.warning && <Notice kind="warning">{t('post.warning', { warning: p.warning })}</Notice>}
      {p.seriesId && <SeriesBox seriesId={p.seriesId} />}
      <div className="actions">
        {p.state === 'ERROR' && (
          <button type="button" className="primary" onClick={() => act(() => api('POST', pub(`/posts/${p.id}/retry`)))}>
            {t('post.retry')}
          </button>
        )}
        {movable && (
          <Link to={`/posts/${p.id}/edit`} className="button">
            {t('common.edit')}
          </Link>
        )}
        <Link to={`/compose?from=${p.id}`} className="button">
          {t('post.duplicate')}
        </Link>
        <button
          type="button"
          className="danger"
          onClick={() =>
            confirm(t('common.confirmDelete', { name: p.content.slice(0, 40) })) &&
            act(async () => {
              await api('DELETE', pub(`/posts/${p.id}`));
              navigate('/', { state: { notice: t('post.deleted') } });
            })
          }
        >
          {t('common.delete')}
        </button>
      </div>
      {movable && (
        <form
          className="row move-to"
          onSubmit={(e) => {
            e.preventDefault();
            const at = fromLocalInput(moveTo ?? '', prefs.zone);
            if (at !== undefined) void act(() => api('PUT', `/posts/${p.id}/date`, { date: new Date(at).toISOString() }));
          }}
        >
          <label>
            {t('post.moveTo')} ({prefs.zone})
            <input
              type="datetime-local"
              value={moveTo ?? toLocalInput(Date.parse(p.publishDate), prefs.zone)}
              onChange={(e) => setMoveTo(e.target.value)}
              aria-describedby="move-error"
            />
          </label>
          <button type="submit">{t('post.move')}</button>
          <FieldError error={error} path="date" id="move-error" />
        </form>
      )}
      <ErrorNote error={error} />
      <ApprovalPanel post={p} />
      <h2>{t('post.thread')}</h2>
      <ol className="thread-view">
        {p.thread.map((item) => (
          <li key={item.id} data-testid={`item-${item.id}`} data-state={item.state}>
            <div className="row">
              <StateBadge state={item.state} />
              <small>{formatWhen(item.publishDate, prefs)}</small>
              {item.releaseURL && (
                <a href={item.releaseURL} target="_blank" rel="noreferrer">
                  {t('post.open')}
                </a>
              )}
            </div>
            <p className="content">{item.content}</p>
            {item.image.length > 0 && (
              <div className="row">
                {item.image.map((m) => (
                  <Thumb key={m.path} item={fromRef(m)} />
                ))}
              </div>
            )}
            {item.error && (
              <p className="field-error" data-testid="item-error">
                {item.error}
              </p>
            )}
            <details>
              <summary>
                {t('post.attempts')} ({item.attempts.length})
              </summary>
              {item.attempts.length === 0 ? (
                <p>{t('post.noAttempts')}</p>
              ) : (
                <ul>
                  {item.attempts.map((a) => (
                    <li key={a.startedAt}>
                      {formatWhen(a.startedAt, prefs)}: {a.outcome}
                      {a.detail ? ` (${a.detail})` : ''}
                    </li>
                  ))}
                </ul>
              )}
            </details>
          </li>
        ))}
      </ol>
      <CommentsPanel postId={p.id} />
      <PreviewLinksPanel post={p} />
    </section>
  );
}
