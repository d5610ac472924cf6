/** OAuth applications: register one (its secret shown once), give it a new secret, remove it. */
import { useState } from 'react';
import { api } from '../../api.ts';
import { t } from '../../i18n.ts';
import { DeleteButton, ErrorNote, FieldError, Loading, Secret, TextField } from '../../components/ui.tsx';
import { useSection } from './useSection.ts';

export function Apps() {
  const { list, error, act } = useSection(['apps'], '/oauth/apps');
  const [form, setForm] = useState({ name: '', redirectUris: '' });
  const [created, setCreated] = useState<{ clientId: string; clientSecret: string }>();
  if (list.isPending) return <Loading />;
  return (
    <div>
      <h2>{t('settings.apps')}</h2>
      <ErrorNote error={list.error ?? error} />
      {created && (
        <>
          <Secret label={t('apps.clientId')} value={created.clientId} />
          <Secret label={t('apps.clientSecret')} value={created.clientSecret} />
          <p className="hint">{t('common.shownOnce')}</p>
        </>
      )}
      {list.data?.length === 0 && <p>{t('apps.none')}</p>}
      <ul className="cards">
        {list.data?.map((a) => (
          <li key={a.clientId} className="card">
            <strong>{a.name}</strong> <code>{a.clientId}</code>
            <small>{a.redirectUris.join(', ')}</small>
            <div className="row">
              <button type="button" onClick={() => act(() => api('POST', `/oauth/apps/${a.clientId}/secret`)).then((made) => made && setCreated(made))}>
                {t('apps.newSecret')}
              </button>
              <DeleteButton name={a.name} onConfirm={() => act(() => api('DELETE', `/oauth/apps/${a.clientId}`))} />
            </div>
          </li>
        ))}
      </ul>
      <form
        className="panel"
        onSubmit={async (e) => {
          e.preventDefault();
          const made = await act(() =>
            api('POST', '/oauth/apps', {
              name: form.name,
              redirectUris: form.redirectUris
                .split('\n')
                .map((s) => s.trim())
                .filter(Boolean),
            }),
          );
          if (made) setCreated(made);
        }}
      >
        <h3>{t('apps.create')}</h3>
        <TextField label={t('common.name')} value={form.name} onChange={(name) => setForm({ ...form, name })} error={error} path="name" id="app-name" />
        <label>
          {t('apps.redirectUris')}
          <textarea value={form.redirectUris} onChange={(e) => setForm({ ...form, redirectUris: e.target.value })} />
        </label>
        <FieldError error={error} path="redirectUris" />
        <button type="submit" className="primary">
          {t('apps.create')}
        </button>
      </form>
    </div>
  );
}
