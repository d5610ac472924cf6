/** What needs the person: failed posts and channels the network cut off, each with its reason and a way to fix it. */
import { useState } from 'react';
import { Link } from 'react-router-dom';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { api, pub } from '../api.ts';
import { keys, useChannels, useNetworks } from '../data.ts';
import { t } from '../i18n.ts';
import { usePrefs } from '../prefs.ts';
import { formatWhen } from '../time.ts';
import { Avatar, ErrorNote, Loading, Notice } from '../components/ui.tsx';
import { postsInRange } from './Calendar.tsx';
import { RetryingBadge, retryingText, useRetrying } from '../components/Retrying.tsx';
import { ReconnectButton } from '../channels/connect.tsx';
import { AccessEndsBadge, useExpiringAccess } from '../components/AccessExpiry.tsx';

const DAY = 86_400_000;

export function AttentionPage() {
  const prefs = usePrefs();
  const client = useQueryClient();
  const channels = useChannels();
  const networks = useNetworks();
  const expiring = useExpiringAccess();
  const failed = useQuery({
    queryKey: [...keys.posts, 'failed'],
    queryFn: async () =>
      (await postsInRange(new Date(Date.now() - 90 * DAY).toISOString(), new Date(Date.now() + 365 * DAY).toISOString())).filter((p) => p.state === 'ERROR'),
  });
  const retrying = useRetrying();
  const [error, setError] = useState<unknown>();
  if (failed.isPending || channels.isPending || networks.isPending) return <Loading />;
  const cut = (channels.data ?? []).filter((c) => c.needsReconnect);
  const retried = [...(retrying.data?.values() ?? [])];
  const ending = (channels.data ?? []).filter((c) => !c.needsReconnect && expiring.has(c.id));
  return (
    <section>
      <h1>{t('attention.title')}</h1>
      <ErrorNote error={failed.error ?? channels.error ?? error} onRetry={() => void failed.refetch()} />
      {failed.data?.length === 0 && cut.length === 0 && retried.length === 0 && ending.length === 0 && <Notice kind="success">{t('attention.nothing')}</Notice>}
      {cut.length > 0 && (
        <>
          <h2>{t('attention.channels')}</h2>
          <ul className="cards">
            {cut.map((c) => (
              <li key={c.id} className="card">
                <Avatar src={c.picture} name={c.name} /> {c.name} <small>{c.identifier}</small>
                <p>{t('channels.needsReconnect', { network: c.identifier })}</p>
                <ReconnectButton channel={c} network={networks.data?.find((n) => n.identifier === c.identifier)} className="primary">
                  {t('channels.reconnect')}
                </ReconnectButton>
              </li>
            ))}
          </ul>
        </>
      )}
      {ending.length > 0 && (
        <>
          <h2>{t('attention.expiring')}</h2>
          <ul className="cards">
            {ending.map((c) => (
              <li key={c.id} className="card" data-testid={`expiring-${c.id}`}>
                <Avatar src={c.picture} name={c.name} /> {c.name} <small>{c.identifier}</small>
                <p>
                  <AccessEndsBadge at={expiring.get(c.id)!} />
                </p>
                <Link to="/channels">{t('nav.channels')}</Link>
              </li>
            ))}
          </ul>
        </>
      )}
      {(failed.data?.length ?? 0) > 0 && (
        <>
          <h2>{t('attention.failedPosts')}</h2>
          <ul className="cards">
            {failed.data!.map((p) => (
              <li key={p.id} className="card" data-testid={`failed-${p.id}`}>
                <Avatar src={p.integration.picture} name={p.integration.name} /> {p.integration.name} · {formatWhen(p.publishDate, prefs)}
                <p>{p.content.slice(0, 140)}</p>
                <p className="field-error">{p.error}</p>
                <div className="row">
                  <button
                    type="button"
                    className="primary"
                    onClick={() =>
                      api('POST', pub(`/posts/${p.id}/retry`))
                        .then(() => client.invalidateQueries({ queryKey: keys.posts }))
                        .catch(setError)
                    }
                  >
                    {t('post.retry')}
                  </button>
                  <Link to={`/posts/${p.id}/edit`} className="button">
                    {t('common.edit')}
                  </Link>
                </div>
              </li>
            ))}
          </ul>
        </>
      )}
      {retried.length > 0 && (
        <>
          <h2>{t('attention.retrying')}</h2>
          <ul className="cards">
            {retried.map((r) => (
              <li key={r.id} className="card" data-testid={`retrying-${r.id}`}>
                <span className="row">
                  <RetryingBadge retry={r} /> {r.channel.name}
                </span>
                <p>
                  <Link to={`/posts/${r.id}`}>{r.excerpt || t('attention.openPost')}</Link>
                </p>
                <p>{retryingText(r, prefs)}</p>
              </li>
            ))}
          </ul>
        </>
      )}
    </section>
  );
}
