/**
 * Developers: the public API's keys (create with scopes, reveal, rotate, revoke),
 * the MCP server that takes them, and the agents that connected to it by
 * signing in themselves (OAuth), which can be disconnected.
 */
import { useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { api } from '../../api.ts';
import { useSession } from '../../data.ts';
import { t } from '../../i18n.ts';
import { usePrefs } from '../../prefs.ts';
import { formatWhen } from '../../time.ts';
import { CopyButton, DeleteButton, ErrorNote, Loading, Secret, TextField } from '../../components/ui.tsx';
import { useSection } from './useSection.ts';

export function Developers() {
  return (
    <>
      <Keys />
      <McpServer />
      <ConnectedAgents />
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
      <p>{t('mcp.signIn')}</p>
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

/** Agents (MCP clients) that registered themselves and were approved in this account; disconnecting ends their tokens. */
function ConnectedAgents() {
  const prefs = usePrefs();
  const { list, error, act } = useSection(['agents'], '/oauth/agents');
  if (list.isPending) return <Loading />;
  return (
    <div>
      <h2>{t('agents.title')}</h2>
      <p>{t('agents.intro')}</p>
      <ErrorNote error={list.error ?? error} />
      {list.data?.length === 0 && <p>{t('agents.none')}</p>}
      <ul className="cards">
        {list.data?.map((a) => (
          <li key={a.clientId} className="card" data-testid={`agent-${a.clientId}`}>
            <strong>{a.name}</strong> {a.clientUri && <code>{a.clientUri}</code>}
            <small>
              {a.connectedAt && t('agents.connected', { when: formatWhen(a.connectedAt, prefs) })} ·{' '}
              {a.lastUsedAt ? t('keys.lastUsed', { when: formatWhen(a.lastUsedAt, prefs) }) : t('keys.neverUsed')}
            </small>
            <div className="row">
              <DeleteButton
                name={a.name}
                label={t('agents.disconnect')}
                question={t('agents.confirm', { name: a.name })}
                onConfirm={() => act(() => api('DELETE', `/oauth/agents/${a.clientId}`))}
              />
            </div>
          </li>
        ))}
      </ul>
    </div>
  );
}

function Keys() {
  const prefs = usePrefs();
  const session = useSession();
  const { list, error, act } = useSection(['keys'], '/keys');
  const scopes = useQuery({ queryKey: ['scopes'], queryFn: () => api('GET', '/scopes') });
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
                    onClick={() => act(() => api('POST', `/keys/${k.id}/reveal`)).then((r) => r && setShown({ id: k.id, key: r.key, label: k.name }))}
                  >
                    {t('keys.reveal')}
                  </button>
                  <button
                    type="button"
                    onClick={() =>
                      act(() => api('POST', `/keys/${k.id}/rotate`)).then((r) => r && setShown({ id: k.id, key: r.key, label: t('keys.rotated') }))
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
            const created = await act(() => api('POST', '/keys', { name, scopes: chosen.length ? chosen : null }));
            if (created) {
              setShown({ id: created.id, key: created.key, label: t('keys.created', { name: created.name }) });
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
