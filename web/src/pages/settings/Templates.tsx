/** Templates (a post starts from one) and signatures (added at a post's end), kept for the team. */
import { useState } from 'react';
import { api, type Template } from '../../api.ts';
import { keys } from '../../data.ts';
import { t } from '../../i18n.ts';
import { DeleteButton, ErrorNote, FieldError, Loading, TextField } from '../../components/ui.tsx';
import { useSection } from './useSection.ts';

export function Templates() {
  const { list, error, act } = useSection(keys.templates, '/templates');
  const [form, setForm] = useState<{ kind: Template['kind']; name: string; content: string }>({ kind: 'template', name: '', content: '' });
  if (list.isPending) return <Loading />;
  return (
    <div>
      <h2>{t('settings.templates')}</h2>
      <p>{t('templates.intro')}</p>
      <ErrorNote error={list.error ?? error} />
      {list.data?.length === 0 && <p>{t('templates.none')}</p>}
      <ul className="cards">
        {list.data?.map((item) => (
          <li key={item.id} className="card" data-testid={`template-${item.name}`}>
            <strong>{item.name}</strong> <small>{t(item.kind === 'template' ? 'templates.template' : 'templates.signature')}</small>
            <p className="content">{item.content}</p>
            <DeleteButton name={item.name} onConfirm={() => act(() => api('DELETE', `/templates/${item.id}`))} />
          </li>
        ))}
      </ul>
      <form
        className="panel"
        onSubmit={async (e) => {
          e.preventDefault();
          if (await act(() => api('POST', '/templates', form))) setForm({ ...form, name: '', content: '' });
        }}
      >
        <label>
          {t('templates.kind')}
          <select value={form.kind} onChange={(e) => setForm({ ...form, kind: e.target.value as Template['kind'] })}>
            <option value="template">{t('templates.template')}</option>
            <option value="signature">{t('templates.signature')}</option>
          </select>
        </label>
        <TextField label={t('common.name')} value={form.name} onChange={(name) => setForm({ ...form, name })} error={error} path="name" id="template-name" />
        <label>
          {t('templates.content')}
          <textarea value={form.content} onChange={(e) => setForm({ ...form, content: e.target.value })} aria-describedby="template-content-error" />
        </label>
        <FieldError error={error} path="content" id="template-content-error" />
        <button type="submit" className="primary">
          {t('templates.create')}
        </button>
      </form>
    </div>
  );
}
