/** The pieces the previews are drawn with: the account line, text with its fold and its cut, framed media, a link's card and the flags. */
import { type ReactNode, useEffect, useId, useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { api } from '../api.ts';
import { t } from '../i18n.ts';
import { Avatar } from '../components/ui.tsx';
import type { Cell, Flag, PreviewInput, PreviewMedia, Size } from './shape.ts';
import { isVideo } from './shape.ts';
import type { TextParts } from './text.ts';

/** What every family's view gets. */
export interface FamilyProps {
  input: PreviewInput;
  channelId: string;
  picture: string | null;
  /** When the post goes out (ms), where a family shows the post among others. */
  planned?: number;
  /** Signed in: the views may ask the server (link cards, the profile's posts); a preview link's guest may not. */
  signedIn: boolean;
}

/** The pixel sizes of the media, read by the browser as it loads them (a network's crop depends on them). */
export function useSizes(media: PreviewMedia[]): Record<string, Size> {
  const [sizes, setSizes] = useState<Record<string, Size>>({});
  const paths = media.map((m) => `${m.mimeType}|${m.path}`).join('\n');
  useEffect(() => {
    let live = true;
    const found = (path: string, width: number, height: number) => {
      if (live && width > 0 && height > 0) setSizes((known) => ({ ...known, [path]: { width, height } }));
    };
    for (const line of new Set(paths.split('\n').filter(Boolean))) {
      const [mimeType, path] = line.split('|') as [string, string];
      if (mimeType.startsWith('video/')) {
        const video = document.createElement('video');
        video.preload = 'metadata';
        video.onloadedmetadata = () => found(path, video.videoWidth, video.videoHeight);
        video.src = path;
      } else {
        const image = new Image();
        image.onload = () => found(path, image.naturalWidth, image.naturalHeight);
        image.src = path;
      }
    }
    return () => {
      live = false;
    };
  }, [paths]);
  return sizes;
}

export function PostHead({ picture, name, handle, extra }: { picture: string | null; name: string; handle?: string; extra?: string }) {
  return (
    <header className="pv-head">
      <Avatar src={picture} name={name} size={36} />
      <span className="pv-who">
        <strong>{name}</strong>
        {handle && <span className="pv-handle">{handle}</span>}
        {extra && <span className="pv-handle">{extra}</span>}
      </span>
    </header>
  );
}

/** A content warning as Mastodon shows it: the warning, then "Show more" opening the text and media it hides. */
export function ContentWarning({ warning, children }: { warning: string; children: ReactNode }) {
  const [open, setOpen] = useState(false);
  const hidden = useId();
  return (
    <>
      <p className="pv-warning" data-testid="content-warning">
        {warning}
      </p>
      <button type="button" className="pv-show-more" aria-expanded={open} aria-controls={hidden} onClick={() => setOpen((was) => !was)}>
        {open ? t('previews.showLess') : t('previews.showMore')}
      </button>
      <div id={hidden} className="pv-warned" hidden={!open}>
        {children}
      </div>
    </>
  );
}

/** The text: what shows at once, the fold's "see more" (the rest stays readable to the person writing), and the cut marked. */
export function PostText({ parts, more = t('previews.seeMore'), className = '' }: { parts: TextParts; more?: string; className?: string }) {
  if (!parts.shown && !parts.folded && !parts.cut) return null;
  return (
    <p className={`pv-text ${className}`}>
      {parts.shown}
      {parts.folded && (
        <>
          <span className="pv-fold" data-testid="fold">
            {' '}
            {more}
          </span>
          <span className="pv-folded">{parts.folded.trimStart()}</span>
        </>
      )}
      {parts.cut && <mark className="overflow pv-cut">{parts.cut}</mark>}
    </p>
  );
}

/** A medium in its frame: cut to the frame (cover) when the network crops, marked so. */
export function MediaCell({ cell, alt = false, fit = 'cover' }: { cell: Cell; alt?: boolean; fit?: 'cover' | 'contain' }) {
  const { media } = cell;
  // A picture shown whole takes its own size; a frame has the network's shape.
  const style = cell.ratio && fit === 'cover' ? { aspectRatio: String(cell.ratio) } : undefined;
  return (
    <figure className={`pv-cell pv-fit-${fit}`} style={style} data-testid="preview-cell" data-cropped={cell.cropped ? 'yes' : 'no'}>
      <MediaView media={media} />
      {cell.cropped && <span className="pv-badge pv-crop">{t('previews.cropMark')}</span>}
      {alt && media.alt.trim() && <span className="pv-badge pv-alt">{t('previews.alt')}</span>}
    </figure>
  );
}

export function MediaView({ media, src }: { media: PreviewMedia; src?: string }) {
  if (isVideo(media)) {
    return (
      <>
        {media.thumbnail ? (
          <img src={media.thumbnail} alt={media.alt || media.name} />
        ) : (
          <video src={media.path} preload="metadata" muted aria-label={media.alt || media.name} />
        )}
        <span className="pv-play" aria-hidden="true">
          ▶
        </span>
      </>
    );
  }
  return <img src={src ?? media.path} alt={media.alt || media.name} loading="lazy" />;
}

/** Cells in the network's grid; "+N" on the last when more are left out of it. */
export function MediaGrid({ cells, more, alt, row }: { cells: Cell[]; more: number; alt?: boolean; row?: boolean }) {
  if (cells.length === 0) return null;
  return (
    <div
      className={`pv-grid ${row ? 'pv-row' : `pv-n${Math.min(cells.length, 5)}`}`}
      data-testid="preview-grid"
      data-count={cells.length}
      {...(row ? sideways(t('previews.pictures', { count: cells.length })) : {})}
    >
      {cells.map((cell, i) => (
        <div key={i} className="pv-slot">
          <MediaCell cell={cell} alt={alt} />
          {more > 0 && i === cells.length - 1 && <span className="pv-more">{t('previews.moreMedia', { count: more })}</span>}
        </div>
      ))}
    </div>
  );
}

/** `value` once it has stayed the same for `ms` (undefined until then). */
function useSettled<T>(value: T, ms: number): T | undefined {
  const [settled, setSettled] = useState<T>();
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), ms);
    return () => clearTimeout(timer);
  }, [value, ms]);
  return settled;
}

/** A strip that scrolls sideways: the keyboard reaches it (and scrolls it with the arrows), named for screen readers. */
export function sideways(label: string) {
  return { tabIndex: 0, role: 'group', 'aria-label': label } as const;
}

/** The card of a link as Herald reads it (the same read the Bluesky adapter does); the address alone for a guest. */
export function LinkCard({ url, signedIn }: { url: string; signedIn: boolean }) {
  // Read once the address stops changing: typing one must not make the server fetch every prefix of it.
  const settled = useSettled(url, 600);
  const card = useQuery({
    queryKey: ['link-card', settled],
    queryFn: () => api('GET', `/link-card?url=${encodeURIComponent(url)}`),
    enabled: signedIn && settled === url,
    staleTime: Infinity,
    retry: false,
  });
  let host = url;
  try {
    host = new URL(url).host;
  } catch {}
  const data = card.data?.card;
  return (
    <div className="pv-card" data-testid="link-card">
      {data?.image && <img className="pv-card-image" src={data.image} alt="" />}
      <div className="pv-card-text">
        <small className="pv-handle">{host}</small>
        {data ? (
          <>
            <strong>{data.title}</strong>
            {data.description && <span className="pv-card-description">{data.description}</span>}
          </>
        ) : signedIn && card.isPending ? (
          <span className="pv-handle">{t('previews.linkLoading')}</span>
        ) : (
          signedIn && <span className="pv-handle">{t('previews.noCard')}</span>
        )}
      </div>
    </div>
  );
}

export function Flags({ flags, network }: { flags: Flag[]; network: string }) {
  if (flags.length === 0) return null;
  return (
    <div className="pv-flags" role="note" aria-label={t('previews.flagsTitle', { network })}>
      <strong>{t('previews.flagsTitle', { network })}</strong>
      <ul>
        {flags.map((f, i) => (
          <li key={i} data-flag={f.key}>
            {t(f.key, f.vars)}
          </li>
        ))}
      </ul>
    </div>
  );
}
