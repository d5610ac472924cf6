/** Which e-mails the person gets (failed posts, channels, a digest); every mail links here. */
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import type { MailChoicesChange } from '../../../../src/contract/mail.ts';
import { api } from '../../api.ts';
import { t } from '../../i18n.ts';
import { ErrorNote, Loading, Notice } from '../../components/ui.tsx';

const KEY = ['mail-settings'];

export function Mail() {
  const client = useQueryClient();
  const settings = useQuery({ queryKey: KEY, queryFn: () => api('GET', '/mail') });
  const [outcome, setOutcome] = useState<{ saved: true } | { error: unknown }>();
  if (settings.isPending) return <Loading />;
  if (!settings.data) return <ErrorNote error={settings.error} onRetry={() => settings.refetch()} />;
  const { enabled, choices } = settings.data;
  const save = (change: MailChoicesChange) => {
    setOutcome(undefined);
    api('PUT', '/mail', change).then(
      (saved) => {
        client.setQueryData(KEY, saved);
        setOutcome({ saved: true });
      },
      (error: unknown) => setOutcome({ error }),
    );
  };
  const box = (name: 'postFailed' | 'channelReconnect' | 'accessExpiring', label: string) => (
    <label className="check">
      <input type="checkbox" checked={choices[name]} onChange={(e) => save({ [name]: e.target.checked })} />
      {label}
    </label>
  );
  return (
    <div className="panel">
      <h2>{t('settings.mail')}</h2>
      {!enabled && <Notice kind="warning">{t('mail.off')}</Notice>}
      <fieldset>
        <legend>{t('mail.send')}</legend>
        {box('postFailed', t('mail.postFailed'))}
        {box('channelReconnect', t('mail.channelReconnect'))}
        {box('accessExpiring', t('mail.accessExpiring'))}
      </fieldset>
      <label>
        {t('mail.digest')}
        <select value={choices.digest} onChange={(e) => save({ digest: e.target.value as 'off' | 'daily' | 'weekly' })}>
          <option value="off">{t('mail.digestOff')}</option>
          <option value="daily">{t('mail.digestDaily')}</option>
          <option value="weekly">{t('mail.digestWeekly')}</option>
        </select>
      </label>
      {outcome && 'error' in outcome ? <ErrorNote error={outcome.error} /> : outcome && <Notice>{t('prefs.saved')}</Notice>}
    </div>
  );
}
