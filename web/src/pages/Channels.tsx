/**
 * Connected channels (avatar, network, customer, state, a clear "reconnect"),
 * their settings, and adding one: every network Herald supports, what the
 * server lacks for those not configured, OAuth through the network and back,
 * credentials through a form built from the network's own schema.
 */
import { useState } from 'react';
import { useSearchParams } from 'react-router-dom';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { api, pub, type Channel, type Network } from '../api.ts';
import { keys, useAction, useChannels, useNetworks } from '../data.ts';
import { t } from '../i18n.ts';
import { Avatar, Dialog, ErrorNote, FieldError, FormErrorNote, ListTable, Loading, Notice, Secret, TextField, ZoneSelect } from '../components/ui.tsx';
import { SchemaFields } from '../components/SettingsForm.tsx';
import { AccessEndsBadge, useExpiringAccess } from '../components/AccessExpiry.tsx';
import { ApprovalConnect } from '../components/ApprovalConnect.tsx';
import { postsInRange } from './Calendar.tsx';
import { browserZone } from '../time.ts';
import { goToNetwork, NetworkForm, ReconnectButton, StartOptionsForm } from '../channels/connect.tsx';

export function ChannelsPage() {
  const channels = useChannels();
  const networks = useNetworks();
  const expiring = useExpiringAccess();
  const [params] = useSearchParams();
  const [adding, setAdding] = useState(false);
  const [editing, setEditing] = useState<Channel>();
  if (channels.isPending || networks.isPending) return <Loading />;
  const nameOf = new Map((networks.data ?? []).map((n) => [n.identifier, n.name]));
  return (
    <section>
      <div className="page-head">
        <h1>{t('channels.title')}</h1>
        <button type="button" className="primary" onClick={() => setAdding(true)}>
          {t('channels.add')}
        </button>
      </div>
      {params.get('connected') && <Notice kind="success">{t('channels.connected')}</Notice>}
      <ErrorNote error={channels.error ?? networks.error} onRetry={() => void channels.refetch()} />
      {channels.data?.length === 0 && <p>{t('channels.none')}</p>}
      <ListTable headers={[t('common.name'), t('channels.network'), t('channels.customer'), t('channels.state')]}>
        {channels.data?.map((c) => (
          <tr key={c.id} data-testid={`channel-${c.id}`}>
            <td>
              <Avatar src={c.picture} name={c.name} /> {c.name}
            </td>
            <td>{nameOf.get(c.identifier) ?? c.identifier}</td>
            <td>{c.customer?.name ?? '—'}</td>
            <td>
              {c.needsReconnect ? (
                <ReconnectButton channel={c} network={networks.data?.find((n) => n.identifier === c.identifier)} className="danger">
                  {t('channels.needsReconnect', { network: nameOf.get(c.identifier) ?? c.identifier })}
                </ReconnectButton>
              ) : c.disabled ? (
                t('channels.disabled')
              ) : expiring.has(c.id) ? (
                <>
                  {t('channels.active')} <AccessEndsBadge at={expiring.get(c.id)!} />
                </>
              ) : (
                t('channels.active')
              )}
            </td>
            <td>
              <button type="button" onClick={() => setEditing(c)}>
                {t('common.edit')}
              </button>
            </td>
          </tr>
        ))}
      </ListTable>
      <Dialog title={t('channels.add')} open={adding} onClose={() => setAdding(false)}>
        <AddChannel networks={networks.data ?? []} onDone={() => setAdding(false)} />
      </Dialog>
      <Dialog title={editing?.name ?? ''} open={!!editing} onClose={() => setEditing(undefined)}>
        {editing && (
          <EditChannel channel={editing} network={networks.data?.find((n) => n.identifier === editing.identifier)} onDone={() => setEditing(undefined)} />
        )}
      </Dialog>
    </section>
  );
}

function AddChannel({ networks, onDone }: { networks: Network[]; onDone: () => void }) {
  const [chosen, setChosen] = useState<Network>();
  const [error, setError] = useState<unknown>();
  // Networks connected by approval offer typing the credentials as a fallback.
  const [typing, setTyping] = useState(false);
  // Each network's form starts empty: nothing typed or refused for one shows on the next.
  if (chosen?.startOptions) return <StartOptionsForm key={chosen.identifier} network={chosen} onCancel={() => setChosen(undefined)} />;
  if (chosen?.approval && !typing) return <ApprovalConnect network={chosen} onDone={onDone} onPaste={() => setTyping(true)} />;
  if (chosen?.auth === 'credentials') {
    // Back to the list: a network connected by approval offers its approval first again.
    const cancel = () => {
      setChosen(undefined);
      setTyping(false);
    };
    return <CredentialsForm key={chosen.identifier} network={chosen} onCancel={cancel} onDone={onDone} />;
  }
  return (
    <div>
      <p>{t('channels.pickNetwork')}</p>
      <ErrorNote error={error} />
      <ul className="network-grid">
        {[...networks]
          .sort((a, b) => Number(b.configured) - Number(a.configured) || a.name.localeCompare(b.name))
          .map((n) => (
            <li key={n.identifier}>
              <button
                type="button"
                disabled={!n.configured}
                aria-describedby={n.configured ? undefined : `missing-${n.identifier}`}
                onClick={() => {
                  setError(undefined);
                  if (n.auth === 'credentials' || n.startOptions) setChosen(n);
                  else goToNetwork(n.identifier).catch(setError);
                }}
              >
                {n.name}
                {networks.some((o) => o !== n && o.name === n.name) && <small> ({n.identifier})</small>}
              </button>
              {!n.configured && (
                <small id={`missing-${n.identifier}`} className="hint">
                  {t('channels.notConfigured', { missing: n.missing.join(', ') })}
                </small>
              )}
            </li>
          ))}
      </ul>
    </div>
  );
}

/** A network connected with credentials typed here (a token, an address): its secrets, if it makes any, shown once. */
function CredentialsForm({ network, onCancel, onDone }: { network: Network; onCancel: () => void; onDone: () => void }) {
  const client = useQueryClient();
  const [credentials, setCredentials] = useState<Record<string, unknown>>({});
  const [name, setName] = useState('');
  const [error, setError] = useState<unknown>();
  const [secrets, setSecrets] = useState<Record<string, string>>();
  if (secrets) {
    return (
      <div>
        <Notice kind="success">{t('channels.connected')}</Notice>
        <p>{t('channels.secrets', { name: network.name })}</p>
        {Object.entries(secrets).map(([k, v]) => (
          <Secret key={k} label={k} value={v} />
        ))}
        <button type="button" onClick={onDone}>
          {t('common.close')}
        </button>
      </div>
    );
  }
  const connect = async () => {
    setError(undefined);
    try {
      const created = await api('POST', pub('/integrations'), {
        identifier: network.identifier,
        name: name || undefined,
        credentials,
        timeZone: browserZone(),
      });
      await client.invalidateQueries({ queryKey: keys.channels });
      if (created.secrets) setSecrets(created.secrets);
      else onDone();
    } catch (err) {
      setError(err);
    }
  };
  return (
    <NetworkForm
      title={t('channels.credentialsFor', { name: network.name })}
      note={network.note}
      submitLabel={t('channels.connect')}
      error={error}
      onCancel={onCancel}
      onSubmit={connect}
    >
      <label>
        {t('common.name')}
        <input value={name} onChange={(e) => setName(e.target.value)} aria-describedby="credentials-name-error" />
      </label>
      <FieldError error={error} path="name" id="credentials-name-error" label={t('common.name')} />
      <SchemaFields
        schema={network.credentials ?? {}}
        value={credentials}
        onChange={setCredentials}
        idPrefix="credentials"
        error={error}
        errorPath="credentials"
        secretFields
      />
    </NetworkForm>
  );
}

function EditChannel({ channel, network, onDone }: { channel: Channel; network?: Network; onDone: () => void }) {
  const customers = useQuery({ queryKey: ['customers'], queryFn: () => api('GET', '/customers') });
  const [form, setForm] = useState({
    name: channel.name,
    timeZone: channel.timeZone,
    postingTimes: channel.postingTimes.join(', '),
    customer: channel.customer?.id ?? '',
    disabled: channel.disabled,
    defaultSettings: channel.defaultSettings,
  });
  const { error, act } = useAction(keys.channels);
  return (
    <form
      onSubmit={async (e) => {
        e.preventDefault();
        const saved = await act(() =>
          api('PATCH', pub(`/integrations/${channel.id}`), {
            name: form.name,
            timeZone: form.timeZone,
            postingTimes: form.postingTimes
              .split(',')
              .map((s) => s.trim())
              .filter(Boolean),
            customer: form.customer || null,
            disabled: form.disabled,
            defaultSettings: form.defaultSettings,
          }),
        );
        if (saved) onDone();
      }}
    >
      <TextField label={t('common.name')} value={form.name} onChange={(name) => setForm({ ...form, name })} error={error} path="name" id="edit-name" />
      <label>
        {t('channels.timeZone')}
        <ZoneSelect value={form.timeZone} onChange={(timeZone) => setForm({ ...form, timeZone })} />
      </label>
      <TextField
        label={t('channels.postingTimes')}
        value={form.postingTimes}
        onChange={(postingTimes) => setForm({ ...form, postingTimes })}
        error={error}
        path="postingTimes"
        id="edit-times"
      />
      <label>
        {t('channels.customer')}
        <select value={form.customer} onChange={(e) => setForm({ ...form, customer: e.target.value })}>
          <option value="">{t('common.none')}</option>
          {customers.data?.map((c) => (
            <option key={c.id} value={c.id}>
              {c.name}
            </option>
          ))}
        </select>
      </label>
      {network && Object.keys(network.settings.properties ?? {}).length > 0 && (
        <fieldset>
          <legend>{t('channels.defaults', { name: network.name })}</legend>
          <SchemaFields
            schema={{ ...network.settings, required: [] }}
            value={form.defaultSettings}
            onChange={(defaultSettings) => setForm({ ...form, defaultSettings })}
            idPrefix="defaults"
            error={error}
            errorPath="defaultSettings"
          />
        </fieldset>
      )}
      <label className="check">
        <input type="checkbox" checked={form.disabled} onChange={(e) => setForm({ ...form, disabled: e.target.checked })} />
        {t('channels.disable')}
      </label>
      <FormErrorNote error={error} />
      <div className="row">
        <button type="submit" className="primary">
          {t('common.save')}
        </button>
        <button
          type="button"
          className="danger"
          onClick={async () => {
            const now = Date.now();
            const posts = await act(() => postsInRange(new Date(now - 365 * 86_400_000).toISOString(), new Date(now + 5 * 365 * 86_400_000).toISOString()));
            if (!posts) return;
            const pending = posts.filter((p) => p.integration.id === channel.id && p.state !== 'PUBLISHED').length;
            if (!confirm(t('channels.deleteWithPending', { name: channel.name, count: pending }))) return;
            if (await act(() => api('DELETE', pub(`/integrations/${channel.id}`)))) onDone();
          }}
        >
          {t('common.delete')}
        </button>
      </div>
    </form>
  );
}
