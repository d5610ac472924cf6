/** The frame of every signed-in page: header, navigation, unread notifications. */
import { useEffect, useRef, useState, type ReactNode } from 'react';
import { NavLink, useLocation, useNavigate } from 'react-router-dom';
import { useQueryClient } from '@tanstack/react-query';
import { api } from '../api.ts';
import { useNotifications, useSession } from '../data.ts';
import { t } from '../i18n.ts';
import { useUnreadCount } from '../seen.ts';
import { forgetAllDrafts } from '../composer/draft-storage.ts';
import { forgetPersonPreferences } from '../prefs.ts';

const LINKS = [
  ['/', 'nav.calendar'],
  ['/compose', 'nav.compose'],
  ['/attention', 'nav.attention'],
  ['/channels', 'nav.channels'],
  ['/media', 'nav.media'],
  ['/series', 'nav.series'],
  ['/feeds', 'nav.feeds'],
  ['/import', 'nav.import'],
  ['/settings', 'nav.settings'],
] as const;

export function Layout({ children }: { children: ReactNode }) {
  const session = useSession();
  const notifications = useNotifications();
  const navigate = useNavigate();
  const client = useQueryClient();
  const unread = useUnreadCount(notifications.data?.notifications ?? []);
  // On a phone the navigation is a menu behind a button (wider screens always show it).
  const [menuOpen, setMenuOpen] = useState(false);
  const menuButton = useRef<HTMLButtonElement>(null);
  const { pathname } = useLocation();
  // biome-ignore lint/correctness/useExhaustiveDependencies: a new page closes the menu
  useEffect(() => setMenuOpen(false), [pathname]);
  return (
    <>
      <a className="skip" href="#main">
        {t('nav.skip')}
      </a>
      <header className="top">
        <span className="brand">{t('app.name')}</span>
        <button ref={menuButton} type="button" className="menu-button" aria-expanded={menuOpen} aria-controls="main-nav" onClick={() => setMenuOpen(!menuOpen)}>
          <svg width="18" height="18" viewBox="0 0 24 24" aria-hidden="true" fill="none" stroke="currentColor" strokeWidth="2">
            <path d="M4 6h16M4 12h16M4 18h16" />
          </svg>
          {t('nav.openMenu')}
        </button>
        <nav
          id="main-nav"
          aria-label={t('nav.menu')}
          className={menuOpen ? 'open' : undefined}
          // Picking a page closes the menu at once: the router shows the new page (and the new path) only once its code has arrived.
          onClick={(e) => {
            if ((e.target as Element).closest('a')) setMenuOpen(false);
          }}
          onKeyDown={(e) => {
            // Escape closes the open menu and gives focus back to its button.
            if (e.key === 'Escape' && menuOpen) {
              setMenuOpen(false);
              menuButton.current?.focus();
            }
          }}
        >
          {LINKS.map(([to, label]) => (
            <NavLink key={to} to={to} end={to === '/'}>
              {t(label)}
            </NavLink>
          ))}
        </nav>
        <div className="top-end">
          <NavLink to="/settings/notifications" className="bell" aria-label={`${t('nav.notifications')}: ${t('nav.unread', { count: unread })}`}>
            <svg width="20" height="20" viewBox="0 0 24 24" aria-hidden="true" fill="none" stroke="currentColor" strokeWidth="2">
              <path d="M6 8a6 6 0 1 1 12 0c0 7 3 9 3 9H3s3-2 3-9" />
              <path d="M10.3 21a1.94 1.94 0 0 0 3.4 0" />
            </svg>
            {unread > 0 && (
              <span className="badge" data-testid="unread">
                {unread}
              </span>
            )}
          </NavLink>
          <span className="who">{session.data?.user.name || session.data?.user.email}</span>
          <button
            type="button"
            className="quiet"
            onClick={async () => {
              await api('POST', '/auth/logout').catch(() => undefined);
              // The next person on this browser must not find this one's unsent posts.
              forgetAllDrafts();
              client.clear();
              await forgetPersonPreferences();
              navigate('/signin');
            }}
          >
            {t('nav.signOut')}
          </button>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        {children}
      </main>
    </>
  );
}
