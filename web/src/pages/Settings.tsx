/**
 * Settings: Developers (Public API keys: create with scopes, Reveal, rotate,
 * revoke), OAuth applications, webhooks (events, secret shown once, delivery
 * log, redeliver, test), team, customers, notifications, preferences and mail. Each
 * section is a file of web/src/pages/settings/; this page shows the tabs and
 * the chosen one.
 */
import type { ReactNode } from 'react';
import { NavLink, useParams } from 'react-router-dom';
import { t, type MessageKey } from '../i18n.ts';
import { Apps } from './settings/Apps.tsx';
import { Customers } from './settings/Customers.tsx';
import { Developers } from './settings/Developers.tsx';
import { Notifications } from './settings/Notifications.tsx';
import { Mail } from './settings/Mail.tsx';
import { Preferences } from './settings/Preferences.tsx';
import { Team } from './settings/Team.tsx';
import { Templates } from './settings/Templates.tsx';
import { Webhooks } from './settings/Webhooks.tsx';

/** The tabs in order: the address (/settings/{id}), the label, and the section shown. */
const SECTIONS: [id: string, label: MessageKey, body: () => ReactNode][] = [
  ['developers', 'settings.developers', Developers],
  ['apps', 'settings.apps', Apps],
  ['webhooks', 'settings.webhooks', Webhooks],
  ['team', 'settings.team', Team],
  ['customers', 'settings.customers', Customers],
  ['templates', 'settings.templates', Templates],
  ['notifications', 'settings.notifications', Notifications],
  ['preferences', 'settings.preferences', Preferences],
  ['mail', 'settings.mail', Mail],
];

export function SettingsPage() {
  const { section = 'developers' } = useParams();
  // An unknown section shows the first.
  const Body = (SECTIONS.find(([id]) => id === section) ?? SECTIONS[0]!)[2];
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
