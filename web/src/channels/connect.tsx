/**
 * Connecting a channel through its network, and reconnecting one the network
 * cut off: the one way both the Channels page and Needs attention do it. A
 * network that asks something first (Mastodon's instance) gets its form; the
 * others go straight to the network, which sends the person back to Herald.
 */
import { useState, type ReactNode } from 'react';
import { api, pub, type Channel, type Network } from '../api.ts';
import { t } from '../i18n.ts';
import { Dialog, ErrorNote, FormErrorNote, Notice } from '../components/ui.tsx';
import { SchemaFields } from '../components/SettingsForm.tsx';
import { browserZone } from '../time.ts';

/** Off to the network (OAuth), with what its start asks for (`options`); it comes back to the Channels page. */
export async function goToNetwork(identifier: string, options: Record<string, unknown> = {}): Promise<void> {
  // timeZone: a channel this creates starts in the person's zone (one that exists keeps its own).
  const query = new URLSearchParams([...Object.entries(options).map(([k, v]) => [k, String(v)]), ['timeZone', browserZone()]]);
  const { url } = await api('GET', pub(`/social/${identifier}?${query}`));
  window.location.assign(url);
}

/** What a network asks before connecting (credentials, or where to go), with the API's complaints beside the fields. */
export function NetworkForm({
  title,
  note,
  submitLabel,
  error,
  onCancel,
  onSubmit,
  children,
}: {
  title: string;
  note?: string | null;
  submitLabel: string;
  error: unknown;
  onCancel: () => void;
  onSubmit: () => unknown;
  children: ReactNode;
}) {
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        onSubmit();
      }}
      noValidate
    >
      <h3>{title}</h3>
      {note && <Notice>{note}</Notice>}
      {children}
      <FormErrorNote error={error} />
      <div className="row">
        <button type="button" onClick={onCancel}>
          {t('common.cancel')}
        </button>
        <button type="submit" className="primary">
          {submitLabel}
        </button>
      </div>
    </form>
  );
}

/** The form of a network that asks where to connect before sending the person there (its own state: nothing carries over to another network). */
export function StartOptionsForm({ network, onCancel }: { network: Network; onCancel: () => void }) {
  const [options, setOptions] = useState<Record<string, unknown>>({});
  const [error, setError] = useState<unknown>();
  return (
    <NetworkForm
      title={t('channels.credentialsFor', { name: network.name })}
      note={network.note}
      submitLabel={t('channels.connectWith', { name: network.name })}
      error={error}
      onCancel={onCancel}
      onSubmit={() => {
        setError(undefined);
        goToNetwork(network.identifier, options).catch(setError);
      }}
    >
      <SchemaFields schema={network.startOptions ?? {}} value={options} onChange={setOptions} idPrefix="start" error={error} errorPath="" />
    </NetworkForm>
  );
}

/** Reconnects a channel: its network's form first when it asks something, else straight to the network. */
export function ReconnectButton({ channel, network, children, className }: { channel: Channel; network?: Network; children: ReactNode; className?: string }) {
  const [asking, setAsking] = useState(false);
  const [error, setError] = useState<unknown>();
  return (
    <>
      <button
        type="button"
        className={className}
        onClick={() => {
          setError(undefined);
          if (network?.startOptions) setAsking(true);
          else goToNetwork(channel.identifier).catch(setError);
        }}
      >
        {children}
      </button>
      <ErrorNote error={error} />
      {network && (
        <Dialog title={t('channels.reconnectTitle', { name: channel.name })} open={asking} onClose={() => setAsking(false)}>
          <StartOptionsForm network={network} onCancel={() => setAsking(false)} />
        </Dialog>
      )}
    </>
  );
}
