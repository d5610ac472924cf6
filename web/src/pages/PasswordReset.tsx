/**
 * "Forgot password?": ask for a link by mail, and the link's page, which sets
 * the new password once. The link carries its token after "#", so it never
 * reaches a server's logs; the page reads it from there.
 */
import { useState } from 'react';
import { Link, useNavigate } from 'react-router-dom';
import { useQueryClient } from '@tanstack/react-query';
import { api } from '../api.ts';
import { keys } from '../data.ts';
import { t } from '../i18n.ts';
import { useFormSubmit } from '../form-submit.ts';
import { ErrorNote, FieldError, Notice, problemsAt } from '../components/ui.tsx';

export function ForgotPassword() {
  const [answer, setAnswer] = useState<{ mailEnabled: boolean }>();
  const { onSubmit, busy, error } = useFormSubmit(async (form) => {
    setAnswer(await api('POST', '/auth/password-reset', { email: String(form.get('email') ?? '') }));
  });
  return (
    <main id="main" className="auth">
      <h1>{t('reset.forgotTitle')}</h1>
      {answer ? (
        <Notice kind={answer.mailEnabled ? 'success' : 'warning'}>{t(answer.mailEnabled ? 'reset.sent' : 'reset.mailOff')}</Notice>
      ) : (
        <form onSubmit={onSubmit} noValidate>
          <p>{t('reset.forgotIntro')}</p>
          <label>
            {t('auth.email')}
            <input name="email" type="email" autoComplete="email" required aria-describedby="email-error" />
          </label>
          <FieldError error={error} path="email" id="email-error" />
          {problemsAt(error, 'email').length === 0 && <ErrorNote error={error} />}
          <button type="submit" className="primary" disabled={busy}>
            {t('reset.send')}
          </button>
        </form>
      )}
      <p className="auth-foot">
        <Link to="/signin">{t('reset.backToSignIn')}</Link>
      </p>
    </main>
  );
}

export function ResetPassword() {
  const token = new URLSearchParams(window.location.hash.slice(1)).get('token') ?? '';
  const navigate = useNavigate();
  const client = useQueryClient();
  const { onSubmit, busy, error } = useFormSubmit(async (form) => {
    const session = await api('POST', '/auth/password-reset/complete', { token, password: String(form.get('password') ?? '') });
    client.setQueryData(keys.session, session);
    navigate('/', { replace: true });
  });
  return (
    <main id="main" className="auth">
      <h1>{t('reset.title')}</h1>
      {token ? (
        <form onSubmit={onSubmit} noValidate>
          <label>
            {t('reset.newPassword')}
            <input name="password" type="password" autoComplete="new-password" required aria-describedby="password-help password-error" />
          </label>
          <small id="password-help">{t('auth.passwordHelp')}</small>
          <FieldError error={error} path="password" id="password-error" />
          {/* A used or expired link: said above the button, with the way to a new one below. */}
          {problemsAt(error, 'password').length === 0 && <ErrorNote error={error} />}
          <button type="submit" className="primary" disabled={busy}>
            {t('reset.save')}
          </button>
        </form>
      ) : (
        <Notice kind="warning">{t('reset.noToken')}</Notice>
      )}
      <p className="auth-foot">
        <Link to="/forgot-password">{t('reset.askAgain')}</Link>
      </p>
    </main>
  );
}
