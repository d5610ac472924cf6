/**
 * Settings: Developers (Public API keys: create with scopes, Reveal, rotate,
 * revoke), OAuth applications, webhooks (events, secret shown once, delivery
 * log, redeliver, test), team, customers, notifications and preferences.
 */
import { useEffect, useState, type ReactNode } from 'react';
import { NavLink, useParams } from 'react-router-dom';
import { useQuery, type QueryKey } from '@tanstack/react-query';
import { api, pub, type Template } from '../api.ts';
import { keys, useAction, useNotifications, useSession } from '../data.ts';
import { t, type MessageKey } from '../i18n.ts';
import { setPrefs, setZone, usePrefs } from '../prefs.ts';
import { formatWhen } from '../time.ts';
import { markSeen } from '../seen.ts';
import { ApprovalSetting } from '../components/Approval.tsx';
import { CopyButton, DeleteButton, ErrorNote, FieldError, ListTable, Loading, Notice, Secret, TextField, ZoneSelect } from '../components/ui.tsx';

const SECTIONS: [string, MessageKey][] = [
  ['developers', 'settings.developers'],
  ['apps', 'settings.apps'],
  ['webhooks', 'settings.webhooks'],
  ['team', 'settings.team'],
  ['customers', 'settings.customers'],
  ['templates', 'settings.templates'],
  ['notifications', 'settings.notifications'],
  ['preferences', 'settings.preferences'],
];

export function SettingsPage() {
  const { section = 'developers' } = useParams();
  const body: Record<string, () => ReactNode> = {
    developers: Developers,
    apps: Apps,
    webhooks: Webhooks,
    team: Team,
    customers: Customers,
    templates: TemplatesSection,
    notifications: Notifications,
    preferences: Preferences,
  };
  const Body = body[section] ?? Developers;
  return (
    <section className="settings">
      <h1>{t('settings.title')}</h1>
      <nav className="tabs" aria-label={t('settings.title')}>
        {SECTIONS.map(([id, label]) => (
          <NavLink key={id} to={`/settings/${id}`}>
            {t(label)}
          </NavLink>
        ))}
      </nav>
      <Body />
    </section>
  );
}

/** A list from the server, the actions on it, and their errors: what every section has. */
function useSection<T>(queryKey: QueryKey, path: string) {
  const list = useQuery({ queryKey, queryFn: () => api<T>('GET', path) });
  return { list, ...useAction(queryKey) };
}

/** Developers: the public API's keys, and the MCP server that takes the same keys. */
function Developers() {
  return (
    <>
      <Keys />
      <McpServer />
    </>
  );
}

/** Where an MCP client reaches this server, and a configuration to paste into it (the key stays a placeholder). */
function McpServer() {
  const url = `${location.origin}/api/mcp`;
  const config = JSON.stringify({ mcpServers: { herald: { type: 'http', url, headers: { Authorization: 'YOUR_API_KEY' } } } }, null, 2);
  return (
    <div>
      <h2>{t('settings.mcp')}</h2>
      <p>{t('mcp.intro')}</p>
      <div className="row">
        {t('mcp.endpoint')} <code data-testid="mcp-url">{url}</code>
        <CopyButton text={url} label={t('mcp.copyUrl')} />
      </div>
      <h3>{t('mcp.config')}</h3>
      <p>{t('mcp.configHelp')}</p>
      <pre className="snippet" data-testid="mcp-config">
        {config}
      </pre>
      <CopyButton text={config} label={t('mcp.copyConfig')} />
      <p>{t('mcp.scopes')}</p>
    </div>
  );
}

interface Key {
  id: string;
  name: string;
  hint: string;
  createdAt: string;
  lastUsedAt: string | null;
  revoked: boolean;
  scopes: string[] | null;
}

function Keys() {
  const prefs = usePrefs();
  const session = useSession();
  const { list, error, act } = useSection<Key[]>(['keys'], '/keys');
  const scopes = useQuery({ queryKey: ['scopes'], queryFn: () => api<{ name: string; description: string }[]>('GET', '/scopes') });
  const [shown, setShown] = useState<{ id: string; key: string; label: string }>();
  const [name, setName] = useState('');
  const [chosen, setChosen] = useState<string[]>([]);
  const canManage = session.data?.permissions.manageKeys;
  if (list.isPending) return <Loading />;
  return (
    <div>
      <h2>{t('settings.publicApi')}</h2>
      <p>{t('keys.intro', { url: `${location.origin}/api/public/v1` })}</p>
      <ErrorNote error={list.error ?? error} />
      {shown && <Secret label={shown.label} value={shown.key} />}
      {list.data?.filter((k) => !k.revoked).length === 0 && <p>{t('keys.none')}</p>}
      <ul className="cards">
        {list.data
          ?.filter((k) => !k.revoked)
          .map((k) => (
            <li key={k.id} className="card" data-testid={`key-${k.name}`}>
              <strong>{k.name}</strong> <code>{k.hint}</code>
              <small>
                {k.scopes ? k.scopes.join(', ') : t('keys.fullAccess')} ·{' '}
                {k.lastUsedAt ? t('keys.lastUsed', { when: formatWhen(k.lastUsedAt, prefs) }) : t('keys.neverUsed')}
              </small>
              {canManage && (
                <div className="row">
                  <button
                    type="button"
                    onClick={() =>
                      act(() => api<{ key: string }>('POST', `/keys/${k.id}/reveal`)).then((r) => r && setShown({ id: k.id, key: r.key, label: k.name }))
                    }
                  >
                    {t('keys.reveal')}
                  </button>
                  <button
                    type="button"
                    onClick={() =>
                      act(() => api<{ key: string }>('POST', `/keys/${k.id}/rotate`)).then(
                        (r) => r && setShown({ id: k.id, key: r.key, label: t('keys.rotated') }),
                      )
                    }
                  >
                    {t('keys.rotate')}
                  </button>
                  <DeleteButton name={k.name} label={t('keys.revoke')} onConfirm={() => act(() => api('DELETE', `/keys/${k.id}`))} />
                </div>
              )}
            </li>
          ))}
      </ul>
      {canManage && (
        <form
          className="panel"
          onSubmit={async (e) => {
            e.preventDefault();
            const created = await act(() => api<{ id: string; key: string }>('POST', '/keys', { name, scopes: chosen.length ? chosen : null }));
            if (created) {
              setShown({ id: created.id, key: created.key, label: t('common.shownOnce') });
              setName('');
              setChosen([]);
            }
          }}
        >
          <h3>{t('keys.create')}</h3>
          <TextField label={t('common.name')} value={name} onChange={setName} error={error} path="name" id="key-name" />
          <fieldset>
            <legend>{t('keys.scopes')}</legend>
            {scopes.data?.map((s) => (
              <label key={s.name} className="check">
                <input
                  type="checkbox"
                  checked={chosen.includes(s.name)}
                  onChange={(e) => setChosen(e.target.checked ? [...chosen, s.name] : chosen.filter((c) => c !== s.name))}
                />
                <code>{s.name}</code> {s.description}
              </label>
            ))}
          </fieldset>
          <button type="submit" className="primary">
            {t('keys.create')}
          </button>
        </form>
      )}
    </div>
  );
}

interface App {
  clientId: string;
  name: string;
  redirectUris: string[];
}

function Apps() {
  const { list, error, act } = useSection<App[]>(['apps'], '/oauth/apps');
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
              <button
                type="button"
                onClick={() =>
                  act(() => api<{ clientId: string; clientSecret: string }>('POST', `/oauth/apps/${a.clientId}/secret`)).then(
                    (made) => made && setCreated(made),
                  )
                }
              >
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
            api<{ clientId: string; clientSecret: string }>('POST', '/oauth/apps', {
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

interface Hook {
  id: string;
  name: string | null;
  url: string;
  events: string[];
  disabled: boolean;
}

interface Delivery {
  id: string;
  event: string;
  state: string;
  attempts: number;
  createdAt: string;
  attemptLog: { at: string; status: number | null; error: string | null }[];
}

function Webhooks() {
  const { list, error, act } = useSection<Hook[]>(['webhooks'], pub('/webhooks'));
  const events = useQuery({ queryKey: ['webhook-events'], queryFn: () => api<string[]>('GET', '/webhook-events') });
  const [form, setForm] = useState<{ url: string; name: string; events: string[] }>({ url: '', name: '', events: [] });
  const [secret, setSecret] = useState<string>();
  const [open, setOpen] = useState<string>();
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
              <button type="button" onClick={() => act(() => api('POST', pub(`/webhooks/${h.id}/test`)))}>
                {t('webhooks.test')}
              </button>
              <DeleteButton name={h.name ?? h.url} onConfirm={() => act(() => api('DELETE', pub(`/webhooks/${h.id}`)))} />
            </div>
            {open === h.id && <Deliveries hook={h.id} />}
          </li>
        ))}
      </ul>
      <form
        className="panel"
        onSubmit={async (e) => {
          e.preventDefault();
          const made = await act(() => api<{ secret: string }>('POST', pub('/webhooks'), { url: form.url, name: form.name || undefined, events: form.events }));
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
  const { list, error, act } = useSection<{ deliveries: Delivery[] }>(['webhooks', hook, 'deliveries'], pub(`/webhooks/${hook}/deliveries`));
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

interface Person {
  id: string;
  email: string;
  name: string | null;
  role: 'owner' | 'admin' | 'member';
}

function Team() {
  const session = useSession();
  const people = useSection<Person[]>(['people'], '/people');
  const invitations = useSection<{ id: string; email: string; role: string }[]>(['invitations'], '/invitations');
  const [form, setForm] = useState({ email: '', role: 'member' });
  const [link, setLink] = useState<string>();
  if (people.list.isPending) return <Loading />;
  const me = session.data?.user.id;
  return (
    <div>
      <h2>{t('team.people')}</h2>
      <ErrorNote error={people.list.error ?? people.error ?? invitations.error} />
      <ListTable headers={[t('auth.email'), t('team.role')]}>
        {people.list.data?.map((p) => (
          <tr key={p.id}>
            <td>
              {p.name ? `${p.name} · ` : ''}
              {p.email} {p.id === me && t('team.you')}
            </td>
            <td>
              {p.role === 'owner' || !session.data?.permissions.managePeople ? (
                p.role
              ) : (
                <select
                  aria-label={`${t('team.role')}: ${p.email}`}
                  value={p.role}
                  onChange={(e) => people.act(() => api('PATCH', `/people/${p.id}`, { role: e.target.value }))}
                >
                  <option value="admin">admin</option>
                  <option value="member">member</option>
                </select>
              )}
            </td>
            <td>
              {p.role !== 'owner' && p.id !== me && session.data?.permissions.managePeople && (
                <DeleteButton name={p.email} label={t('common.remove')} onConfirm={() => people.act(() => api('DELETE', `/people/${p.id}`))} />
              )}
            </td>
          </tr>
        ))}
      </ListTable>
      <ApprovalSetting />
      {session.data?.permissions.invite && (
        <>
          <h2>{t('team.invitations')}</h2>
          <ul>
            {invitations.list.data?.map((i) => (
              <li key={i.id}>
                {i.email} ({i.role}){' '}
                <button type="button" onClick={() => invitations.act(() => api('DELETE', `/invitations/${i.id}`))}>
                  {t('team.withdraw')}
                </button>
              </li>
            ))}
          </ul>
          {link && <Secret label={t('team.link')} value={link} />}
          <form
            className="panel"
            onSubmit={async (e) => {
              e.preventDefault();
              const made = await invitations.act(() => api<{ signupUrl: string }>('POST', '/invitations', form));
              if (made) {
                setLink(made.signupUrl);
                setForm({ email: '', role: 'member' });
              }
            }}
          >
            <TextField
              label={t('auth.email')}
              type="email"
              value={form.email}
              onChange={(email) => setForm({ ...form, email })}
              error={invitations.error}
              path="email"
              id="invite-email"
            />
            <label>
              {t('team.role')}
              <select value={form.role} onChange={(e) => setForm({ ...form, role: e.target.value })}>
                <option value="member">member</option>
                <option value="admin">admin</option>
              </select>
            </label>
            <button type="submit" className="primary">
              {t('team.invite')}
            </button>
          </form>
        </>
      )}
    </div>
  );
}

function Customers() {
  const { list, error, act } = useSection<{ id: string; name: string }[]>(['customers'], '/customers');
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

function TemplatesSection() {
  const { list, error, act } = useSection<Template[]>(keys.templates, '/templates');
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

function Notifications() {
  const prefs = usePrefs();
  const list = useNotifications();
  useEffect(() => {
    if (list.data) markSeen(list.data.notifications);
  }, [list.data]);
  if (list.isPending) return <Loading />;
  return (
    <div>
      <h2>{t('settings.notifications')}</h2>
      <ErrorNote error={list.error} onRetry={() => list.refetch()} />
      {list.data?.notifications.length === 0 && <p>{t('notifications.none')}</p>}
      <ul className="cards">
        {list.data?.notifications.map((n) => (
          <li key={n.id} className="card">
            <small>{formatWhen(n.createdAt, prefs)}</small>
            <p>{n.content}</p>
          </li>
        ))}
      </ul>
    </div>
  );
}

function Preferences() {
  const prefs = usePrefs();
  return (
    <div className="panel">
      <h2>{t('settings.preferences')}</h2>
      <label>
        {t('prefs.zone')}
        <ZoneSelect value={prefs.zone} onChange={setZone} />
      </label>
      <label>
        {t('prefs.weekStart')}
        <select value={prefs.weekStart} onChange={(e) => setPrefs({ weekStart: Number(e.target.value) as 0 | 1 })}>
          <option value={1}>{t('prefs.monday')}</option>
          <option value={0}>{t('prefs.sunday')}</option>
        </select>
      </label>
      <label>
        {t('prefs.clock')}
        <select value={prefs.hour12 ? '12' : '24'} onChange={(e) => setPrefs({ hour12: e.target.value === '12' })}>
          <option value="24">{t('prefs.h24')}</option>
          <option value="12">{t('prefs.h12')}</option>
        </select>
      </label>
      <Notice>{t('prefs.saved')}</Notice>
    </div>
  );
}
