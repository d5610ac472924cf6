/** The media library: thumbnails and posters, size and dimensions, multi-file upload with progress, delete (with the server's reason when refused). */
import { useState } from 'react';
import { Link } from 'react-router-dom';
import { useInfiniteQuery, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, pub, type MediaItem } from '../api.ts';
import { keys, useAction } from '../data.ts';
import { t } from '../i18n.ts';
import { formatBytes, formatSeconds, formatWhen } from '../time.ts';
import { usePrefs } from '../prefs.ts';
import { ErrorNote, FieldError, Loading, StateBadge } from '../components/ui.tsx';
import { Thumb, UploadProgress, useUploads } from '../components/MediaPicker.tsx';

const PAGE = 48;

export function MediaPage() {
  const client = useQueryClient();
  const [tag, setTag] = useState('');
  const library = useInfiniteQuery({
    queryKey: [...keys.media, 'library', tag],
    queryFn: ({ pageParam }) => api('GET', pub(`/media?page=${pageParam}&limit=${PAGE}${tag ? `&tag=${encodeURIComponent(tag)}` : ''}`)),
    initialPageParam: 0,
    getNextPageParam: (last) => (last.hasMore ? last.page + 1 : undefined),
  });
  const uploads = useUploads(() => undefined);
  const [error, setError] = useState<unknown>();
  if (library.isPending) return <Loading />;
  const items = library.data?.pages.flatMap((p) => p.media) ?? [];
  return (
    <section>
      <div className="page-head">
        <h1>{t('library.title')}</h1>
        <label className="button primary">
          {t('library.upload')}
          <input type="file" multiple accept="image/*,video/*" className="visually-hidden" onChange={(e) => e.target.files && uploads.start(e.target.files)} />
        </label>
      </div>
      <form
        className="row"
        onSubmit={(e) => {
          e.preventDefault();
          setTag(String(new FormData(e.currentTarget).get('tag') ?? '').trim());
        }}
      >
        <label className="inline">
          {t('library.filterTag')}
          <input name="tag" defaultValue={tag} />
        </label>
        <button type="submit">{t('library.filter')}</button>
      </form>
      <UploadProgress progress={uploads.progress} />
      {library.error && <ErrorNote error={new Error(t('library.loadFailed', { message: library.error.message }))} onRetry={() => void library.refetch()} />}
      <ErrorNote error={uploads.error ?? error} />
      {items.length === 0 && !library.error && <p>{tag ? t('library.noneTagged', { tag }) : t('library.empty')}</p>}
      <ul className="media-grid">
        {items.map((m) => (
          <li key={m.id} className="card" data-testid={`media-${m.id}`}>
            <Thumb item={m} />
            <strong className="name" title={m.originalName || m.name}>
              {m.originalName || m.name}
            </strong>
            <small>
              {formatBytes(m.size)}
              {m.width && m.height ? ` · ${t('library.dimensions', { width: m.width, height: m.height })}` : ''}
              {m.duration ? ` · ${formatSeconds(m.duration)}` : ''}
            </small>
            <Details item={m} />
            <WhereUsed id={m.id} />
            <button
              type="button"
              className="danger"
              onClick={async () => {
                if (!confirm(t('common.confirmDelete', { name: m.originalName || m.name }))) return;
                setError(undefined);
                try {
                  await api('DELETE', pub(`/media/${m.id}`));
                  await client.invalidateQueries({ queryKey: keys.media });
                } catch (err) {
                  setError(new Error(t('library.deleteRefused', { message: (err as Error).message })));
                }
              }}
            >
              {t('common.delete')}
            </button>
          </li>
        ))}
      </ul>
      {library.hasNextPage && (
        <button type="button" onClick={() => library.fetchNextPage()}>
          {t('library.more')}
        </button>
      )}
    </section>
  );
}

/** The posts and repeating posts that carry a file, fetched when the person asks. */
function WhereUsed({ id }: { id: string }) {
  const prefs = usePrefs();
  const [open, setOpen] = useState(false);
  const usage = useQuery({
    queryKey: [...keys.media, 'usage', id],
    queryFn: () => api('GET', `/media/${id}/usage`),
    enabled: open,
  });
  return (
    <div>
      <button type="button" aria-expanded={open} onClick={() => setOpen(!open)}>
        {t('library.whereUsed')}
      </button>
      {open && usage.isPending && <Loading />}
      <ErrorNote error={usage.error} onRetry={() => usage.refetch()} />
      {open && usage.data?.length === 0 && <p className="hint">{t('library.unused')}</p>}
      {open && (usage.data?.length ?? 0) > 0 && (
        <ul className="where-used">
          {usage.data!.map((use) =>
            use.kind === 'series' ? (
              <li key={use.id}>
                <Link to={`/series/${use.id}`}>
                  {use.name ? `${t('series.marker')}: ${use.name}` : t('series.marker')} · {t('series.next', { when: formatWhen(use.nextDate, prefs) })}
                </Link>
              </li>
            ) : (
              <li key={use.id}>
                <Link to={`/posts/${use.id}`}>
                  {use.channel} · {formatWhen(use.publishDate, prefs)}
                </Link>{' '}
                <StateBadge state={use.state} />
              </li>
            ),
          )}
        </ul>
      )}
    </div>
  );
}

/** A file's alt text (what the networks that take it describe it with) and tags (comma separated), changed in place. */
function Details({ item }: { item: MediaItem }) {
  const [alt, setAlt] = useState(item.alt ?? '');
  const [tags, setTags] = useState(item.tags.join(', '));
  const [saved, setSaved] = useState(false);
  const { error, act } = useAction(keys.media);
  const id = `media-${item.id}`;
  return (
    <form
      onSubmit={async (e) => {
        e.preventDefault();
        setSaved(false);
        const done = await act(() =>
          api('PATCH', `/media/${item.id}`, {
            alt: alt.trim(),
            tags: tags
              .split(',')
              .map((s) => s.trim())
              .filter(Boolean),
          }),
        );
        setSaved(!!done);
      }}
    >
      {item.mimeType.startsWith('image/') && (
        <>
          <label>
            {t('composer.alt')}
            <textarea id={`${id}-alt`} rows={2} value={alt} onChange={(e) => setAlt(e.target.value)} aria-describedby={`${id}-alt-error`} />
          </label>
          <FieldError error={error} path="alt" id={`${id}-alt-error`} label={t('library.altShort')} />
        </>
      )}
      <label>
        {t('library.tags')}
        <input id={`${id}-tags`} value={tags} onChange={(e) => setTags(e.target.value)} aria-describedby={`${id}-tags-error`} />
      </label>
      <FieldError error={error} path="tags" id={`${id}-tags-error`} label={t('library.tags')} />
      <div className="row">
        <button type="submit">{t('common.save')}</button>
        {saved && <span role="status">{t('library.saved')}</span>}
      </div>
    </form>
  );
}
