/** The person's preferences: language, time zone, first day of the week, 12- or 24-hour clock; saved to their account. */
import { useState } from 'react';
import type { PreferencesChange } from '../../../../src/contract/preferences.ts';
import { setPrefs, usePrefs } from '../../prefs.ts';
import { LANGUAGE_NAMES, LANGUAGES, t, type Language } from '../../i18n.ts';
import { ErrorNote, Notice, ZoneSelect } from '../../components/ui.tsx';

export function Preferences() {
  const prefs = usePrefs();
  const [outcome, setOutcome] = useState<{ saved: true } | { error: unknown }>();
  const save = (change: PreferencesChange) => {
    setOutcome(undefined);
    setPrefs(change).then(
      () => setOutcome({ saved: true }),
      (error: unknown) => setOutcome({ error }),
    );
  };
  return (
    <div className="panel">
      <h2>{t('settings.preferences')}</h2>
      <label>
        {t('prefs.language')}
        <select value={prefs.language} onChange={(e) => save({ language: e.target.value as Language })}>
          {LANGUAGES.map((language) => (
            <option key={language} value={language} lang={language}>
              {LANGUAGE_NAMES[language]}
            </option>
          ))}
        </select>
      </label>
      <label>
        {t('prefs.zone')}
        <ZoneSelect value={prefs.zone} onChange={(zone) => save({ zone })} />
      </label>
      <label>
        {t('prefs.weekStart')}
        <select value={prefs.weekStart} onChange={(e) => save({ weekStart: Number(e.target.value) as 0 | 1 })}>
          <option value={1}>{t('prefs.monday')}</option>
          <option value={0}>{t('prefs.sunday')}</option>
        </select>
      </label>
      <label>
        {t('prefs.clock')}
        <select value={prefs.hour12 ? '12h' : '24h'} onChange={(e) => save({ clock: e.target.value as '12h' | '24h' })}>
          <option value="24h">{t('prefs.h24')}</option>
          <option value="12h">{t('prefs.h12')}</option>
        </select>
      </label>
      {outcome && 'error' in outcome ? <ErrorNote error={outcome.error} /> : <Notice>{t(outcome ? 'prefs.saved' : 'prefs.follows')}</Notice>}
    </div>
  );
}
