/** Webhooks: add one for chosen events (its secret shown once), test it, read its delivery log, redeliver. */
import { useEffect, useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { api, pub, type AppAnswer } from '../../api.ts';
import { t } from '../../i18n.ts';
import { usePrefs } from '../../prefs.ts';
import { formatWhen } from '../../time.ts';
import { DeleteButton, ErrorNote, FieldError, Loading, Notice, Secret, TextField } from '../../components/ui.tsx';
import { useSection } from './useSection.ts';

type WebhookEvent = AppAnswer<'webhookEvents'>[number];

export function Webhooks() {
  const { list, error, act } = useSection(['webhooks'], pub('/webhooks'));
  const events = useQuery({ queryKey: ['webhook-events'], queryFn: () => api('GET', '/webhook-events') });
  const [form, setForm] = useState<{ url: string; name: string; events: WebhookEvent[] }>({ url: '', name: '', events: [] });
  const [secret, setSecret] = useState<string>();
  const [open, setOpen] = useState<string>();
  // The hook a test was just sent to: its deliveries open, to show how the endpoint answered.
  const [tested, setTested] = useState<string>();
  if (list.isPending) return <Loading />;
  return (
    <div>
      <h2>{t('settings.webhooks')}</h2>
      <ErrorNote error={list.error ?? error} />
      {secret && <Secret label={t('webhooks.secret')} value={secret} />}
      {list.data?.length === 0 && <p>{t('webhooks.none')}</p>}
      <ul className="cards">
        {list.data?.map((h) => (
          <li key={h.id} className="card" data-testid={`webhook-${h.id}`}>
            <strong>{h.name ?? h.url}</strong> <code>{h.url}</code>
            <small>{h.events.join(', ')}</small>
            <div className="row">
              <button type="button" aria-expanded={open === h.id} onClick={() => setOpen(open === h.id ? undefined : h.id)}>
                {t('webhooks.deliveries')}
              </button>
              <button
                type="button"
                onClick={async () => {
                  setTested(undefined);
                  if (await act(() => api('POST', pub(`/webhooks/${h.id}/test`)))) {
                    setTested(h.id);
                    setOpen(h.id);
                  }
                }}
              >
                {t('webhooks.test')}
              </button>
              <DeleteButton name={h.name ?? h.url} onConfirm={() => act(() => api('DELETE', pub(`/webhooks/${h.id}`)))} />
            </div>
            {tested === h.id && <Notice kind="success">{t('webhooks.testSent')}</Notice>}
            {open === h.id && <Deliveries hook={h.id} />}
          </li>
        ))}
      </ul>
      <form
        className="panel"
        onSubmit={async (e) => {
          e.preventDefault();
          const made = await act(() => api('POST', pub('/webhooks'), { url: form.url, name: form.name || undefined, events: form.events }));
          if (made) {
            setSecret(made.secret);
            setForm({ url: '', name: '', events: [] });
          }
        }}
      >
        <h3>{t('webhooks.create')}</h3>
        <TextField label={t('webhooks.url')} type="url" value={form.url} onChange={(url) => setForm({ ...form, url })} error={error} path="url" id="hook-url" />
        <TextField label={t('common.name')} value={form.name} onChange={(name) => setForm({ ...form, name })} error={error} path="name" id="hook-name" />
        <fieldset>
          <legend>{t('webhooks.events')}</legend>
          {events.data?.map((ev) => (
            <label key={ev} className="check">
              <input
                type="checkbox"
                checked={form.events.includes(ev)}
                onChange={(e) => setForm({ ...form, events: e.target.checked ? [...form.events, ev] : form.events.filter((x) => x !== ev) })}
              />
              <code>{ev}</code>
            </label>
          ))}
        </fieldset>
        <FieldError error={error} path="events" />
        <button type="submit" className="primary">
          {t('webhooks.create')}
        </button>
      </form>
    </div>
  );
}

function Deliveries({ hook }: { hook: string }) {
  const prefs = usePrefs();
  const { list, error, act } = useSection(['webhooks', hook, 'deliveries'], pub(`/webhooks/${hook}/deliveries`));
  // Deliveries change without a post changing: look again every few seconds while open.
  useEffect(() => {
    const timer = setInterval(() => void list.refetch(), 3000);
    return () => clearInterval(timer);
  }, [list]);
  if (list.isPending) return <Loading />;
  return (
    <div className="deliveries">
      <ErrorNote error={list.error ?? error} />
      {list.data?.deliveries.length === 0 && <p>{t('webhooks.noDeliveries')}</p>}
      <ul>
        {list.data?.deliveries.map((d) => (
          <li key={d.id} data-testid="delivery">
            <code>{d.event}</code> · {d.state} · {formatWhen(d.createdAt, prefs)}
            <ul>
              {d.attemptLog.map((a) => (
                <li key={a.at}>{t('webhooks.attempt', { at: formatWhen(a.at, prefs), result: a.status ? `HTTP ${a.status}` : (a.error ?? '') })}</li>
              ))}
            </ul>
            <button type="button" onClick={() => act(() => api('POST', pub(`/webhooks/${hook}/deliveries/${d.id}/redeliver`)))}>
              {t('webhooks.redeliver')}
            </button>
          </li>
        ))}
      </ul>
    </div>
  );
}
