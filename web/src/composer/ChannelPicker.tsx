import { useMemo } from 'react';
import { Link } from 'react-router-dom';
import type { Channel, Network } from '../api.ts';
import { t } from '../i18n.ts';
import { Avatar, FieldError } from '../components/ui.tsx';

/** The account's channels grouped by customer (those without one last), each a chip to pick. */
export function ChannelPicker({
  channels,
  networkOf,
  chosen,
  onToggle,
  error,
}: {
  channels: Channel[];
  networkOf: Map<string, Network>;
  chosen: string[];
  onToggle: (channel: string) => void;
  error: unknown;
}) {
  const groups = useMemo(() => {
    const byCustomer = new Map<string, Channel[]>();
    for (const c of channels) byCustomer.set(c.customer?.name ?? '', [...(byCustomer.get(c.customer?.name ?? '') ?? []), c]);
    return [...byCustomer.entries()].sort(([a], [b]) => (a === '' ? 1 : b === '' ? -1 : a.localeCompare(b)));
  }, [channels]);
  return (
    <fieldset>
      <legend>{t('composer.channels')}</legend>
      {channels.length === 0 && (
        <p>
          {t('calendar.emptyBody')} <Link to="/channels">{t('calendar.connect')}</Link>
        </p>
      )}
      {groups.map(([customer, list]) => (
        <div key={customer} className="channel-group">
          <h3>{customer || t('composer.noCustomer')}</h3>
          <div className="channel-chips">
            {list.map((c) => (
              <label key={c.id} className={`chip${chosen.includes(c.id) ? ' on' : ''}${c.disabled ? ' off' : ''}`}>
                <input type="checkbox" checked={chosen.includes(c.id)} onChange={() => onToggle(c.id)} disabled={c.disabled && !chosen.includes(c.id)} />
                <Avatar src={c.picture} name={c.name} size={22} />
                <span>
                  {c.name} <small>{networkOf.get(c.identifier)?.name ?? c.identifier}</small>
                </span>
              </label>
            ))}
          </div>
        </div>
      ))}
      {/* Only the problem with the choice itself: each post's own problems show beside its text. */}
      <FieldError error={error} path="posts" exact />
    </fieldset>
  );
}
