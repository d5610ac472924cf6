/** Customers, which group channels: add, rename in place, remove. */
import { useState } from 'react';
import { api } from '../../api.ts';
import { t } from '../../i18n.ts';
import { DeleteButton, ErrorNote, Loading, TextField } from '../../components/ui.tsx';
import { useSection } from './useSection.ts';

export function Customers() {
  const { list, error, act } = useSection(['customers'], '/customers');
  const [name, setName] = useState('');
  if (list.isPending) return <Loading />;
  return (
    <div>
      <h2>{t('settings.customers')}</h2>
      <ErrorNote error={list.error ?? error} />
      {list.data?.length === 0 && <p>{t('customers.none')}</p>}
      <ul>
        {list.data?.map((c) => (
          <li key={c.id} className="row">
            <RenameField name={c.name} label={`${t('common.name')}: ${c.name}`} onRename={(name) => act(() => api('PATCH', `/customers/${c.id}`, { name }))} />
            <DeleteButton name={c.name} onConfirm={() => act(() => api('DELETE', `/customers/${c.id}`))} />
          </li>
        ))}
      </ul>
      <form
        className="panel"
        onSubmit={async (e) => {
          e.preventDefault();
          if (await act(() => api('POST', '/customers', { name }))) setName('');
        }}
      >
        <TextField label={t('common.name')} value={name} onChange={setName} error={error} path="name" id="customer-name" />
        <button type="submit" className="primary">
          {t('customers.create')}
        </button>
      </form>
    </div>
  );
}

/** A name changed in place: saved when the person presses Enter or leaves the field. */
function RenameField({ name, label, onRename }: { name: string; label: string; onRename: (name: string) => unknown }) {
  const [value, setValue] = useState(name);
  const save = () => value.trim() && value.trim() !== name && onRename(value.trim());
  return (
    <input
      aria-label={label}
      value={value}
      onChange={(e) => setValue(e.target.value)}
      onBlur={save}
      onKeyDown={(e) => {
        if (e.key === 'Enter') {
          e.preventDefault();
          save();
        }
      }}
    />
  );
}
