/** This browser's preferences: time zone, first day of the week, 12- or 24-hour clock. */
import { setPrefs, setZone, usePrefs } from '../../prefs.ts';
import { t } from '../../i18n.ts';
import { Notice, ZoneSelect } from '../../components/ui.tsx';

export function Preferences() {
  const prefs = usePrefs();
  return (
    <div className="panel">
      <h2>{t('settings.preferences')}</h2>
      <label>
        {t('prefs.zone')}
        <ZoneSelect value={prefs.zone} onChange={setZone} />
      </label>
      <label>
        {t('prefs.weekStart')}
        <select value={prefs.weekStart} onChange={(e) => setPrefs({ weekStart: Number(e.target.value) as 0 | 1 })}>
          <option value={1}>{t('prefs.monday')}</option>
          <option value={0}>{t('prefs.sunday')}</option>
        </select>
      </label>
      <label>
        {t('prefs.clock')}
        <select value={prefs.hour12 ? '12' : '24'} onChange={(e) => setPrefs({ hour12: e.target.value === '12' })}>
          <option value="24">{t('prefs.h24')}</option>
          <option value="12">{t('prefs.h12')}</option>
        </select>
      </label>
      <Notice>{t('prefs.saved')}</Notice>
    </div>
  );
}
