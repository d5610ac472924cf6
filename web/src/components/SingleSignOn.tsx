/**
 * Single sign-on in the web application: the "Sign in with …" button on the
 * sign-in page (when the server has a provider configured) with the reason a
 * sign-in was refused, and the owner's settings on the Team page.
 */
import { useState, type FormEvent } from 'react';
import { useQuery } from '@tanstack/react-query';
import { useSearchParams } from 'react-router-dom';
import { api, type AppBody } from '../api.ts';
import { useAction } from '../data.ts';
import { t, type MessageKey } from '../i18n.ts';
import { ErrorNote, FieldError, FormErrorNote, Notice } from './ui.tsx';

/** The reasons the server sends the browser back with (src/api/app/oidc.ts), each explained. */
const REFUSALS: Record<string, MessageKey> = {
  unverified_email: 'sso.refused.unverifiedEmail',
  not_invited: 'sso.refused.notInvited',
  removed: 'sso.refused.removed',
  expired: 'sso.refused.expired',
  failed: 'sso.refused.failed',
  unavailable: 'sso.refused.unavailable',
  denied: 'sso.refused.denied',
};

/** The button, and why the last single sign-on did not let the person in; nothing when the server has no provider. */
export function SsoSignIn() {
  const [params] = useSearchParams();
  const methods = useQuery({ queryKey: ['auth-methods'], queryFn: () => api('GET', '/auth/methods') });
  const refusal = REFUSALS[params.get('sso_error') ?? ''];
  const sso = methods.data?.sso;
  if (!sso && !refusal) return null;
  return (
    <section className="auth auth-sso" aria-label={t('sso.title')}>
      {refusal && (
        <div className="note note-error" role="alert">
          <p>{t(refusal)}</p>
        </div>
      )}
      {sso && (
        <a className="button primary" href={sso.startUrl}>
          {t('sso.signInWith', { name: sso.name })}
        </a>
      )}
    </section>
  );
}

type Settings = AppBody<'saveSsoSettings'>;

/** The owner's choices: which e-mail domains join, with which role, and whether only the owner keeps a password. */
export function SsoSettings() {
  const current = useQuery({ queryKey: ['sso-settings'], queryFn: () => api('GET', '/sso') });
  const { error, act } = useAction(['sso-settings']);
  const [edit, setEdit] = useState<{ domains: string; role: Settings['domainRole']; passwordsOff: boolean }>();
  const [saved, setSaved] = useState(false);
  if (!current.data) return <ErrorNote error={current.error} onRetry={() => current.refetch()} />;
  const shown = edit ?? { domains: current.data.allowedDomains.join(', '), role: current.data.domainRole, passwordsOff: current.data.passwordsOff };
  const change = (next: Partial<typeof shown>) => {
    setSaved(false);
    setEdit({ ...shown, ...next });
  };
  const onSubmit = async (event: FormEvent) => {
    event.preventDefault();
    const body: Settings = {
      allowedDomains: shown.domains
        .split(/[\s,]+/)
        .map((d) => d.trim())
        .filter(Boolean),
      domainRole: shown.role,
      passwordsOff: shown.passwordsOff,
    };
    if ((await act(() => api('PUT', '/sso', body))) !== undefined) {
      setEdit(undefined);
      setSaved(true);
    }
  };
  return (
    <form className="panel" onSubmit={onSubmit} aria-labelledby="sso-title">
      <h2 id="sso-title">{t('sso.title')}</h2>
      <p className="hint">{current.data.configured ? t('sso.configured', { name: current.data.providerName ?? '' }) : t('sso.notConfigured')}</p>
      <label>
        {t('sso.domains')}
        <input value={shown.domains} onChange={(e) => change({ domains: e.target.value })} aria-describedby="sso-domains-help sso-domains-error" />
      </label>
      <small id="sso-domains-help">{t('sso.domainsHelp')}</small>
      <FieldError error={error} path="allowedDomains" id="sso-domains-error" />
      <label>
        {t('sso.role')}
        <select value={shown.role} onChange={(e) => change({ role: e.target.value as Settings['domainRole'] })}>
          <option value="member">{t('team.roles.member')}</option>
          <option value="admin">{t('team.roles.admin')}</option>
        </select>
      </label>
      <label className="check">
        <input
          type="checkbox"
          checked={shown.passwordsOff}
          disabled={!current.data.configured}
          onChange={(e) => change({ passwordsOff: e.target.checked })}
          aria-describedby="sso-passwords-help"
        />
        {t('sso.passwordsOff')}
      </label>
      <p className="hint" id="sso-passwords-help">
        {t('sso.passwordsOffHelp')}
      </p>
      <FieldError error={error} path="passwordsOff" />
      {saved && <Notice kind="success">{t('sso.saved')}</Notice>}
      <FormErrorNote error={error} />
      <button type="submit" className="primary">
        {t('common.save')}
      </button>
    </form>
  );
}
