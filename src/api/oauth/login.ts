/**
 * GET/POST /oauth/login: the sign-in page the consent step sends people to (and,
 * before anyone has signed up, the page that creates the owner account; with an
 * invitation, the page that joins an account). A pre-session token in a cookie
 * and a hidden field stops other sites from signing people in behind their back.
 */
import crypto from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { Services } from '../../services.ts';
import { ApiError } from '../../domain/errors.ts';
import { email as emailSchema, logIn, password as passwordSchema, signUp } from '../app/auth.ts';
import { cookies, sameToken, setSessionCookies } from '../app/session.ts';
import { MAX_NEXT, oauthPages } from '../../contract/routes/visitors.ts';
import { installFormParser } from '../form-body.ts';
import { serve } from '../serve.ts';
import { errorBox, escapeHtml, hiddenFields, sendPage } from './pages.ts';

const FORM_COOKIE = 'herald_form';

/**
 * A path of this server: one leading slash, then no slash or backslash right after
 * it, and no backslash, space or control character anywhere (browsers drop tabs and
 * newlines and read a backslash as a slash, so "/\t/evil.test" would leave the site).
 */
const SAME_ORIGIN_PATH = /^\/(?![/\\])[^\\\u0000-\u0020\u007f]*$/;

const NOT_ASCII = /[^\u0021-\u007e]+/g;

/**
 * Only paths of this server: never an open redirect to somewhere else. What is
 * followed goes into a Location header, which holds Latin-1 only (anything above
 * U+00FF made Node throw, a 500): characters outside printable ASCII are
 * percent-encoded as UTF-8, as a browser would encode them, so the path it reads
 * is the one asked for. A lone surrogate has no UTF-8 and is not followed.
 */
export function safeNext(next: string | undefined): string {
  if (next === undefined || !SAME_ORIGIN_PATH.test(next)) return '/';
  let encoded: string;
  try {
    encoded = next.replace(NOT_ASCII, (run) => encodeURIComponent(run));
  } catch {
    return '/';
  }
  return encoded.length <= MAX_NEXT ? encoded : '/';
}

export function loginUrl(next: string): string {
  return `/oauth/login?next=${encodeURIComponent(next)}`;
}

type Mode = 'login' | 'signup';

export function loginPages(services: Services): FastifyPluginAsyncZod {
  const { people } = services;
  const secure = services.config.publicUrl.startsWith('https:');

  /** Single sign-on, when configured, comes back to the same place as the form would. */
  const ssoLink = (mode: Mode, next: string) =>
    mode === 'login' && services.config.oidc
      ? `<p><a href="/api/app/auth/oidc/start?next=${encodeURIComponent(next)}">Sign in with ${escapeHtml(services.config.oidc.name)}</a></p>`
      : '';

  async function render(
    _request: FastifyRequest,
    reply: FastifyReply,
    status: number,
    fields: { next: string; invitation?: string; email?: string; error?: string },
  ) {
    const mode: Mode = fields.invitation || !(await people.hasUsers()) ? 'signup' : 'login';
    // A fresh pre-session token for every form shown.
    const formToken = crypto.randomBytes(24).toString('base64url');
    reply.header('set-cookie', `${FORM_COOKIE}=${formToken}; Path=/oauth; Max-Age=3600; SameSite=Lax; HttpOnly${secure ? '; Secure' : ''}`);
    const title = mode === 'login' ? 'Sign in to Herald' : fields.invitation ? 'Join Herald' : 'Create the owner account';
    const intro =
      mode === 'login'
        ? ''
        : fields.invitation
          ? '<p>You were invited: choose your password.</p>'
          : '<p>Nobody has signed up on this Herald yet. The first person becomes its owner, and owns the API keys made with <code>herald keys</code>.</p>';
    const nameField = mode === 'signup' ? '<label for="name">Name</label><input type="text" id="name" name="name" autocomplete="name">' : '';
    return sendPage(
      reply,
      status,
      title,
      `<h1>${title}</h1>${intro}${errorBox(fields.error)}<form method="post" action="/oauth/login">` +
        `${hiddenFields({ next: fields.next, mode, form_token: formToken, invitation: fields.invitation })}\n` +
        '<label for="email">Email</label>' +
        `<input type="email" id="email" name="email" required autocomplete="email" value="${escapeHtml(fields.email ?? '')}">\n` +
        `${nameField}<label for="password">Password${mode === 'signup' ? ' (at least 10 characters)' : ''}</label>` +
        `<input type="password" id="password" name="password" required autocomplete="${mode === 'signup' ? 'new-password' : 'current-password'}">\n` +
        `<button type="submit">${mode === 'login' ? 'Sign in' : 'Create account'}</button></form>` +
        ssoLink(mode, fields.next),
    );
  }

  return async (app) => {
    installFormParser(app);
    serve(app, oauthPages.routes.loginPage, {
      hide: true,
      handler: async (request, reply) => render(request, reply, 200, { next: safeNext(request.query.next), invitation: request.query.invitation }),
    });

    serve(app, oauthPages.routes.logIn, {
      hide: true,
      handler: async (request, reply) => {
        const form = (request.body ?? {}) as Record<string, string | undefined>;
        const next = safeNext(form.next);
        const again = (status: number, error: string) =>
          render(request, reply, status, { next, invitation: form.invitation || undefined, email: form.email, error });
        if (!sameToken(form.form_token, cookies(request)[FORM_COOKIE] ?? '\u0000'))
          return again(403, 'This form expired or was sent from another site. Please try again.');
        try {
          let user;
          if (form.mode === 'signup') {
            const email = emailSchema.safeParse(form.email ?? '');
            if (!email.success) return again(400, 'Email: enter a valid email address.');
            const password = passwordSchema.safeParse(form.password ?? '');
            if (!password.success) return again(400, 'Password: use at least 10 characters.');
            user = await signUp(services, {
              email: email.data,
              password: password.data,
              name: form.name?.slice(0, 200),
              invitation: form.invitation || undefined,
            });
          } else {
            user = await logIn(services, (form.email ?? '').slice(0, 320), (form.password ?? '').slice(0, 1024), request.ip);
          }
          const session = await people.startSession(user.id);
          setSessionCookies(reply, session.token, session.expiresAt, secure);
          return reply.redirect(next, 303);
        } catch (err) {
          if (err instanceof ApiError) {
            if (err.headers['Retry-After']) reply.header('retry-after', err.headers['Retry-After']);
            return again(err.statusCode, err.message);
          }
          throw err;
        }
      },
    });
  };
}
