import { memo, useCallback } from 'react';
import type { ItemDraft } from '../composer-rules.ts';
import { t, useLanguage } from '../i18n.ts';
import { ItemMedia } from '../components/MediaPicker.tsx';
import { FieldError } from '../components/ui.tsx';
import type { Owner } from './draft.ts';

export type UpdateItem = (owner: Owner, index: number, change: Partial<ItemDraft> | null) => void;

/** One thread (the shared one, or a channel's own): its items, and adding one. */
export function ThreadEditor({
  title,
  owner,
  items,
  updateItem,
  idPrefix,
  error,
  errorPaths,
}: {
  title: string;
  owner: Owner;
  items: ItemDraft[];
  updateItem: UpdateItem;
  idPrefix: string;
  error: unknown;
  errorPaths: string;
}) {
  return (
    <fieldset className="thread">
      <legend>{title}</legend>
      {items.map((item, i) => (
        <ThreadItem key={i} owner={owner} index={i} item={item} updateItem={updateItem} idPrefix={`${idPrefix}-${i}`} error={error} errorPaths={errorPaths} />
      ))}
      <button type="button" onClick={() => updateItem(owner, items.length, {})}>
        {t('composer.addItem')}
      </button>
    </fieldset>
  );
}

/** One item of a thread; memoised, so a keystroke renders only the item typed in. */
const ThreadItem = memo(function ThreadItem({
  owner,
  index: i,
  item,
  updateItem,
  idPrefix: id,
  error,
  errorPaths,
}: {
  owner: Owner;
  index: number;
  item: ItemDraft;
  updateItem: UpdateItem;
  idPrefix: string;
  error: unknown;
  errorPaths: string;
}) {
  useLanguage(); // memoised: draw again when the language changes
  const onMedia = useCallback((media: ItemDraft['media']) => updateItem(owner, i, { media }), [owner, i, updateItem]);
  return (
    <div className="thread-item">
      <label htmlFor={`${id}-text`}>{i === 0 ? t('composer.firstItem') : t('composer.reply', { n: i })}</label>
      <textarea
        id={`${id}-text`}
        value={item.content}
        rows={i === 0 ? 6 : 3}
        onChange={(e) => updateItem(owner, i, { content: e.target.value })}
        aria-describedby={`${id}-error`}
      />
      <div id={`${id}-error`}>
        {errorPaths
          .split(' ')
          .filter(Boolean)
          .map((p) => (
            <FieldError key={p} error={error} path={`${p}.${i}`} label={i === 0 ? t('composer.firstItem') : t('composer.reply', { n: i })} />
          ))}
      </div>
      {i > 0 && (
        <label className="inline">
          {t('composer.delay')}
          <input type="number" min={0} value={item.delay} onChange={(e) => updateItem(owner, i, { delay: Math.max(0, Number(e.target.value) || 0) })} />
        </label>
      )}
      <ItemMedia media={item.media} onChange={onMedia} idPrefix={id} />
      {i > 0 && (
        <button type="button" onClick={() => updateItem(owner, i, null)}>
          {t('common.remove')}
        </button>
      )}
    </div>
  );
});
