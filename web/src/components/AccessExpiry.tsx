/**
 * Channels whose access the network does not let Herald renew: they publish
 * until the token lapses, and this says until when, so the person reconnects in time.
 */
import { useQuery } from '@tanstack/react-query';
import { api } from '../api.ts';
import { keys } from '../data.ts';
import { t } from '../i18n.ts';
import { usePrefs } from '../prefs.ts';
import { formatWhen } from '../time.ts';

/** Channel id → when its access ends (ISO); refreshed with the channel list. */
export function useExpiringAccess(): Map<string, string> {
  const expiring = useQuery({
    queryKey: [...keys.channels, 'expiring'],
    queryFn: () => api('GET', '/channels/expiring'),
  });
  return new Map((expiring.data ?? []).map((c) => [c.id, c.accessExpiresAt]));
}

export function AccessEndsBadge({ at }: { at: string }) {
  const prefs = usePrefs();
  return <span className="tag tag-warning">{t('channels.accessEnds', { when: formatWhen(at, prefs) })}</span>;
}
