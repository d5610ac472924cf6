/** The account's notifications, newest first; opening them marks them seen. */
import { useEffect } from 'react';
import { Link } from 'react-router-dom';
import { useNotifications } from '../../data.ts';
import { t } from '../../i18n.ts';
import { usePrefs } from '../../prefs.ts';
import { formatWhen } from '../../time.ts';
import { markSeen } from '../../seen.ts';
import { pageOfNotification } from '../../notification-link.ts';
import { ErrorNote, Loading } from '../../components/ui.tsx';

export function Notifications() {
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
        {list.data?.notifications.map((n) => {
          const page = pageOfNotification(n.link);
          return (
            <li key={n.id} className="card" data-testid="notification">
              <small>{formatWhen(n.createdAt, prefs)}</small>
              <p>{page ? <Link to={page}>{n.content}</Link> : n.content}</p>
            </li>
          );
        })}
      </ul>
    </div>
  );
}
