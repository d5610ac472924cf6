/** Media for one thread item: from the library, or dropped in and uploaded with progress; ordered; with alt text. */
import { memo, useRef, useState, type DragEvent } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { api, pub, upload, type MediaItem, type MediaRef } from '../api.ts';
import { keys } from '../data.ts';
import { t, useLanguage } from '../i18n.ts';
import type { ItemDraft } from '../composer-rules.ts';
import { Dialog, ErrorNote } from './ui.tsx';

type Attached = ItemDraft['media'][number];

export const attach = (m: MediaItem): Attached => ({
  id: m.id,
  path: m.path,
  mimeType: m.mimeType,
  thumbnail: m.thumbnail,
  name: m.originalName || m.name,
  alt: m.alt ?? '',
});

/** A post's stored reference (its path only) as the composer and the post page show it: the kind is read from the file name. */
export const fromRef = (m: MediaRef): Attached => ({
  id: m.id ?? '',
  path: m.path,
  mimeType: /\.(mp4|mov|webm)$/i.test(m.path) ? 'video/mp4' : 'image/*',
  thumbnail: null,
  name: m.path.split('/').pop() ?? '',
  alt: '',
});

/** One file on its way up: its name and how much of it was sent. */
export interface Upload {
  name: string;
  fraction: number;
}

/** Each upload is its own entry, so two files of the same name (from two folders) each get their own bar. */
let uploadCount = 0;

export function useUploads(onDone: (m: MediaItem) => void) {
  const client = useQueryClient();
  const [progress, setProgress] = useState<Record<string, Upload>>({});
  const [error, setError] = useState<unknown>();
  const start = async (files: FileList | File[]) => {
    setError(undefined);
    await Promise.all(
      [...files].map(async (file) => {
        const id = `upload-${++uploadCount}`;
        setProgress((p) => ({ ...p, [id]: { name: file.name, fraction: 0 } }));
        try {
          const media = await upload(file, (fraction) => setProgress((p) => ({ ...p, [id]: { name: file.name, fraction } })));
          onDone(media);
        } catch (err) {
          setError(err);
        } finally {
          setProgress(({ [id]: _, ...rest }) => rest);
        }
      }),
    );
    void client.invalidateQueries({ queryKey: keys.media });
  };
  return { progress, error, start };
}

export function UploadProgress({ progress }: { progress: Record<string, Upload> }) {
  return (
    <>
      {Object.entries(progress).map(([id, { name, fraction }]) => (
        <div key={id} className="progress" data-testid="upload-progress">
          <label>
            {t('composer.uploading', { name, percent: Math.round(fraction * 100) })}
            <progress value={fraction} max={1} />
          </label>
        </div>
      ))}
    </>
  );
}

export function LibraryDialog({ open, onClose, onPick }: { open: boolean; onClose: () => void; onPick: (m: MediaItem) => void }) {
  const library = useQuery({ queryKey: [...keys.media, 'picker'], queryFn: () => api('GET', pub('/media?limit=100')), enabled: open });
  return (
    <Dialog title={t('library.title')} open={open} onClose={onClose}>
      <ErrorNote error={library.error} onRetry={() => library.refetch()} />
      {library.data?.media.length === 0 && <p>{t('library.empty')}</p>}
      <ul className="media-grid">
        {library.data?.media.map((m) => (
          <li key={m.id}>
            {/* Named by what it shows (the thumbnail's words, the file's name) after a hidden "Pick": the name read out contains the visible text. */}
            <button type="button" className="media-pick" onClick={() => onPick(m)}>
              <span className="visually-hidden">{t('library.pick')} </span>
              <Thumb item={m} decorative />
              <span>{m.originalName || m.name}</span>
            </button>
          </li>
        ))}
      </ul>
    </Dialog>
  );
}

/** A file's picture (or the word "Video"); `decorative` when the file's name is written beside it. */
export function Thumb({
  item,
  decorative = false,
}: {
  item: { thumbnail: string | null; path: string; mimeType: string; name: string; alt?: string | null };
  decorative?: boolean;
}) {
  const src = item.thumbnail ?? (item.mimeType.startsWith('image/') ? item.path : null);
  if (src) return <img className="thumb" src={src} alt={decorative ? '' : item.alt || item.name} loading="lazy" />;
  return <span className="thumb thumb-video">{t('library.video')}</span>;
}

/** Memoised: typing in the item's text leaves its media as they are. */
export const ItemMedia = memo(function ItemMedia({
  media,
  onChange,
  idPrefix,
}: {
  media: Attached[];
  onChange: (media: Attached[]) => void;
  idPrefix: string;
}) {
  useLanguage(); // memoised: draw again when the language changes
  const [picking, setPicking] = useState(false);
  const [over, setOver] = useState(false);
  // Uploads finishing together each append to the latest list, not to the one of the render they started in.
  const latest = useRef(media);
  latest.current = media;
  const uploads = useUploads((m) => {
    latest.current = [...latest.current, attach(m)];
    onChange(latest.current);
  });
  const move = (i: number, by: number) => {
    const next = [...media];
    const [moved] = next.splice(i, 1);
    next.splice(i + by, 0, moved!);
    onChange(next);
  };
  const onDrop = (e: DragEvent) => {
    e.preventDefault();
    setOver(false);
    if (e.dataTransfer.files.length) void uploads.start(e.dataTransfer.files);
  };
  return (
    <div className="item-media">
      <ol className="attached">
        {media.map((m, i) => (
          <li key={`${m.id}-${i}`}>
            <Thumb item={m} />
            <label>
              {t('composer.alt')}
              <input value={m.alt} onChange={(e) => onChange(media.map((x, j) => (j === i ? { ...x, alt: e.target.value } : x)))} />
            </label>
            {!m.alt && m.mimeType.startsWith('image/') && <small className="hint">{t('composer.altMissing')}</small>}
            <div className="row">
              <button type="button" disabled={i === 0} onClick={() => move(i, -1)}>
                {t('common.moveUp')}
              </button>
              <button type="button" disabled={i === media.length - 1} onClick={() => move(i, 1)}>
                {t('common.moveDown')}
              </button>
              <button type="button" onClick={() => onChange(media.filter((_, j) => j !== i))}>
                {t('common.remove')}
              </button>
            </div>
          </li>
        ))}
      </ol>
      {/* Dropping is the mouse's way; the file chooser inside is the keyboard's. */}
      <section
        className={`dropzone${over ? ' over' : ''}`}
        aria-label={t('composer.dropHere')}
        onDragOver={(e) => {
          e.preventDefault();
          setOver(true);
        }}
        onDragLeave={() => setOver(false)}
        onDrop={onDrop}
      >
        <span>{t('composer.dropHere')}</span>
        <label className="button">
          {t('composer.chooseFiles')}
          <input
            id={`${idPrefix}-files`}
            type="file"
            multiple
            accept="image/*,video/*"
            className="visually-hidden"
            onChange={(e) => e.target.files && uploads.start(e.target.files)}
          />
        </label>
        <button type="button" onClick={() => setPicking(true)}>
          {t('composer.fromLibrary')}
        </button>
      </section>
      <UploadProgress progress={uploads.progress} />
      <ErrorNote error={uploads.error} />
      <LibraryDialog
        open={picking}
        onClose={() => setPicking(false)}
        onPick={(m) => {
          onChange([...media, attach(m)]);
          setPicking(false);
        }}
      />
    </div>
  );
});
