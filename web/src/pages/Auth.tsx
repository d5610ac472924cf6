/** First run (the owner signs up), sign-in, and joining through an invitation link. */
import { Link, Navigate, useLocation, useNavigate, useSearchParams } from 'react-router-dom';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { api, type Session } from '../api.ts';
import { keys } from '../data.ts';
import { t } from '../i18n.ts';
import { useFormSubmit } from '../form-submit.ts';
import { ErrorNote, FieldError, Loading } from '../components/ui.tsx';
import { SsoSignIn } from '../components/SingleSignOn.tsx';

/** A field of the form as text (the form has every field it names). */
const field = (form: FormData, name: string) => String(form.get(name) ?? '');

function useStatus() {
  return useQuery({ queryKey: ['auth-status'], queryFn: () => api('GET', '/auth/status') });
}

function AuthForm({
  title,
  intro,
  submit,
  fields,
  email,
}: {
  title: string;
  /** The address to start with (an invitation's). */
  email?: string;
  intro?: string;
  submit: (form: FormData) => Promise<Session>;
  fields: ('name' | 'email' | 'password')[];
}) {
  const navigate = useNavigate();
  const location = useLocation();
  const client = useQueryClient();
  const { onSubmit, busy, error } = useFormSubmit(async (form) => {
    const session = await submit(form);
    client.setQueryData(keys.session, session);
    navigate((location.state as { from?: string } | null)?.from ?? '/', { replace: true });
  });
  return (
    <main id="main" className="auth">
      <h1>{title}</h1>
      {intro && <p>{intro}</p>}
      <form onSubmit={onSubmit} noValidate>
        {fields.includes('name') && (
          <label>
            {t('auth.yourName')}
            <input name="name" autoComplete="name" />
          </label>
        )}
        <label>
          {t('auth.email')}
          <input name="email" type="email" autoComplete="email" required aria-describedby="email-error" defaultValue={email} />
        </label>
        <FieldError error={error} path="email" id="email-error" />
        <label>
          {t('auth.password')}
          <input
            name="password"
            type="password"
            autoComplete={fields.includes('name') ? 'new-password' : 'current-password'}
            required
            aria-describedby="password-help password-error"
          />
        </label>
        {fields.includes('name') && <small id="password-help">{t('auth.passwordHelp')}</small>}
        <FieldError error={error} path="password" id="password-error" />
        <ErrorNote error={error} />
        <button type="submit" className="primary" disabled={busy}>
          {title}
        </button>
      </form>
    </main>
  );
}

export function SignIn() {
  const status = useStatus();
  if (status.isPending) return <Loading />;
  if (status.data?.signupOpen) return <Navigate to="/signup" replace />;
  return (
    <>
      <SsoSignIn />
      <AuthForm
        title={t('auth.signIn')}
        fields={['email', 'password']}
        submit={(form) => api('POST', '/auth/login', { email: field(form, 'email'), password: field(form, 'password') })}
      />
      <p className="auth-foot">
        <Link to="/forgot-password">{t('auth.forgotPassword')}</Link>
      </p>
      <p className="auth-foot">{t('auth.noAccount')}</p>
    </>
  );
}

export function SignUp() {
  const [params] = useSearchParams();
  const invitation = params.get('invitation') ?? undefined;
  const status = useStatus();
  if (status.isPending) return <Loading />;
  if (!invitation && status.data && !status.data.signupOpen) return <Navigate to="/signin" replace />;
  return (
    <>
      <AuthForm
        title={invitation ? t('auth.signUpInvited') : t('auth.signUp')}
        intro={invitation ? undefined : t('auth.signUpIntro')}
        fields={['name', 'email', 'password']}
        email={(invitation && params.get('email')) || undefined}
        submit={(form) =>
          api('POST', '/auth/signup', {
            email: field(form, 'email'),
            password: field(form, 'password'),
            name: field(form, 'name') || undefined,
            invitation,
          })
        }
      />
      {invitation && (
        <p className="auth-foot">
          <Link to="/signin">{t('auth.haveAccount')}</Link>
        </p>
      )}
    </>
  );
}
