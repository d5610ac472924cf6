/** Small pieces every page uses. */
import { memo, useEffect, useRef, useState, type ReactNode } from 'react';
import { allZones } from '../prefs.ts';
import { ApiError, type FieldProblem, type PostState } from '../api.ts';
import { t } from '../i18n.ts';
import { fieldSentence } from '../field-message.ts';

export function Avatar({ src, name, size = 28 }: { src: string | null | undefined; name: string; size?: number }) {
  const [broken, setBroken] = useState(false);
  if (!src || broken) {
    return (
      <span className="avatar avatar-letter" style={{ width: size, height: size }} aria-hidden="true">
        {name.slice(0, 1).toUpperCase()}
      </span>
    );
  }
  return <img className="avatar" src={src} alt="" width={size} height={size} onError={() => setBroken(true)} />;
}

export function StateBadge({ state }: { state: PostState | 'PUBLISHING' }) {
  return <span className={`state state-${state.toLowerCase()}`}>{t(`state.${state}`)}</span>;
}

/** A failed request: what went wrong and a way on. */
export function ErrorNote({ error, onRetry }: { error: unknown; onRetry?: () => void }) {
  if (!error) return null;
  const message = error instanceof Error ? error.message : String(error);
  return (
    <div className="note note-error" role="alert">
      <p>{message}</p>
      {onRetry && (
        <button type="button" onClick={onRetry}>
          {t('common.retry')}
        </button>
      )}
    </div>
  );
}

export function Notice({ children, kind = 'info' }: { children: ReactNode; kind?: 'info' | 'success' | 'warning' }) {
  return (
    <div className={`note note-${kind}`} role="status">
      {children}
    </div>
  );
}

/** The API's problems that concern `path` (or start with it, unless `exact`). */
export function problemsAt(error: unknown, path: string, exact = false): FieldProblem[] {
  if (!(error instanceof ApiError)) return [];
  return error.fields.filter((f) => f.path === path || (!exact && f.path.startsWith(`${path}.`)));
}

/** The API's problems with one field, beside it, in sentences naming the field (`label`); `exact`: not those of its parts. */
export function FieldError({ error, path, id, label, exact }: { error: unknown; path: string; id?: string; label?: string; exact?: boolean }) {
  const found = problemsAt(error, path, exact);
  if (found.length === 0) return null;
  return (
    <p className="field-error" id={id} role="alert">
      {found.map((f) => fieldSentence(label, f.message)).join(' ')}
    </p>
  );
}

/**
 * A form's failure under its fields: when the API named fields, their problems
 * are already beside them, so this only points there (saying it twice confuses).
 */
export function FormErrorNote({ error }: { error: unknown }) {
  if (error instanceof ApiError && error.fields.length > 0) {
    return (
      <div className="note note-error" role="alert">
        <p>{t('form.checkFields')}</p>
      </div>
    );
  }
  return <ErrorNote error={error} />;
}

/** `label` names what is copied when a page has several (it must start with the button's visible word, "Copy"). */
export function CopyButton({ text, label }: { text: string; label?: string }) {
  const [done, setDone] = useState(false);
  return (
    <button
      type="button"
      aria-label={done ? undefined : label}
      onClick={async () => {
        await navigator.clipboard?.writeText(text).catch(() => undefined);
        setDone(true);
        setTimeout(() => setDone(false), 1500);
      }}
    >
      {done ? t('common.copied') : t('common.copy')}
    </button>
  );
}

/** A secret shown once, selectable and copyable. */
export function Secret({ label, value }: { label: string; value: string }) {
  return (
    <div className="secret">
      <span>{label}</span>
      <code data-testid="secret">{value}</code>
      <CopyButton text={value} />
    </div>
  );
}

/** A modal dialog (the browser's own: focus is kept inside and Escape closes it). */
export function Dialog({ title, open, onClose, children }: { title: string; open: boolean; onClose: () => void; children: ReactNode }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (open && !dialog.open) dialog.showModal();
    if (!open && dialog.open) dialog.close();
  }, [open]);
  return (
    <dialog ref={ref} onClose={onClose} aria-label={title}>
      <div className="dialog-head">
        <h2>{title}</h2>
        <button type="button" className="quiet" onClick={onClose} aria-label={t('common.close')}>
          ×
        </button>
      </div>
      {open && children}
    </dialog>
  );
}

export function Loading() {
  return (
    <p className="loading" role="status">
      {t('common.loading')}
    </p>
  );
}

/** The time zone picker: some 400 options, built once and skipped when nothing about it changed. */
export const ZoneSelect = memo(function ZoneSelect({ value, onChange, id }: { value: string; onChange: (zone: string) => void; id?: string }) {
  return (
    <select id={id} value={value} onChange={(e) => onChange(e.target.value)}>
      {allZones().map((z) => (
        <option key={z}>{z}</option>
      ))}
    </select>
  );
});

/** A button that deletes (or revokes, removes) after the person confirms, naming what goes. */
export function DeleteButton({
  name,
  onConfirm,
  label = t('common.delete'),
  question,
}: {
  name: string;
  onConfirm: () => unknown;
  label?: string;
  question?: string;
}) {
  return (
    <button type="button" className="danger" onClick={() => confirm(question ?? t('common.confirmDelete', { name })) && onConfirm()}>
      {label}
    </button>
  );
}

/** A labelled text input with the API's complaint about `path` beside it. */
export function TextField({
  label,
  value,
  onChange,
  error,
  path,
  id,
  type = 'text',
}: {
  label: string;
  value: string;
  onChange: (value: string) => void;
  error: unknown;
  path: string;
  id: string;
  type?: string;
}) {
  return (
    <>
      <label>
        {label}
        <input type={type} value={value} onChange={(e) => onChange(e.target.value)} aria-describedby={`${id}-error`} />
      </label>
      <FieldError error={error} path={path} id={`${id}-error`} label={label} />
    </>
  );
}

/** A table of things with an actions column at the end. */
export function ListTable({ headers, children }: { headers: string[]; children: ReactNode }) {
  return (
    <table className="list">
      <thead>
        <tr>
          {headers.map((h) => (
            <th key={h}>{h}</th>
          ))}
          <th>
            <span className="visually-hidden">{t('common.actions')}</span>
          </th>
        </tr>
      </thead>
      <tbody>{children}</tbody>
    </table>
  );
}
