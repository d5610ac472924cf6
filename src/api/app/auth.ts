/**
 * Signing up, in and out of the web side. Login attempts are limited per email
 * and client address together, per client address, and (far higher) per email
 * from everywhere, counted in the database so every process of a deployment
 * shares the count. A stranger guessing from one address locks out only that
 * address, never the person signing in from elsewhere.
 */
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { Services } from '../../services.ts';
import { appRoutes } from '../../contract/routes/app.ts';
import { ApiError } from '../../domain/errors.ts';
import { can, csrfTokenOf, userView, type People } from '../../domain/people.ts';
import { serve } from '../serve.ts';
import { clearSessionCookies, requireSession, setSessionCookies } from './session.ts';

const { routes } = appRoutes;

const LOGIN_WINDOW_MS = 15 * 60_000;
/** One address trying one email. */
const LOGIN_ATTEMPTS_PER_EMAIL_AND_ADDRESS = 10;
/** One address trying any emails. */
const LOGIN_ATTEMPTS_PER_ADDRESS = 50;
/** One email from every address together: only a guess spread over many addresses reaches it. */
const LOGIN_ATTEMPTS_PER_EMAIL = 300;

export { email, password } from '../../contract/routes/app.ts';

/** What the web UI needs to know about the signed-in person. */
export async function sessionView(services: Services, user: Parameters<typeof userView>[0], token: string) {
  const account = await services.accounts.describe(user.account_id);
  return {
    user: userView(user),
    account,
    csrfToken: csrfTokenOf(token),
    permissions: {
      manageKeys: can(user.role, 'manage_keys'),
      manageApps: can(user.role, 'manage_apps'),
      invite: can(user.role, 'invite'),
      managePeople: can(user.role, 'manage_people'),
      reviewPosts: can(user.role, 'review_posts'),
    },
  };
}

/** Counts a login attempt (successful or not) and throws 429 over the limit. */
async function countLoginAttempt(services: Services, emailAddress: string, clientAddress: string): Promise<void> {
  const email = emailAddress.toLowerCase();
  const limits = services.rateLimiter;
  await limits.consumeSliding(
    `login:email-address:${email}:${clientAddress}`,
    LOGIN_ATTEMPTS_PER_EMAIL_AND_ADDRESS,
    LOGIN_WINDOW_MS,
    'Sign-in attempts for this email from this address',
  );
  await limits.consumeSliding(`login:address:${clientAddress}`, LOGIN_ATTEMPTS_PER_ADDRESS, LOGIN_WINDOW_MS, 'Sign-in attempts from this address');
  await limits.consumeSliding(`login:email:${email}`, LOGIN_ATTEMPTS_PER_EMAIL, LOGIN_WINDOW_MS, 'Sign-in attempts for this email');
}

export async function logIn(services: Services, emailAddress: string, secret: string, clientAddress: string) {
  await countLoginAttempt(services, emailAddress, clientAddress);
  const user = await services.people.checkPassword(emailAddress, secret);
  if (!user) throw new ApiError('invalid_credentials', 'The email or the password is wrong', [{ path: 'password', message: 'does not match this email' }]);
  // Asked only once the password matched, so a stranger learns nothing about who the account's people are.
  if (services.config.oidc && user.role !== 'owner' && (await services.sso.settings(user.account_id)).passwordsOff) throw passwordsOff(services);
  return user;
}

/** Signing up with a password (the first person, or an invitee). */
export async function signUp(services: Services, input: Parameters<People['signUp']>[0]) {
  // An invitation to an account without passwords is accepted through single sign-on, never with a password.
  if (input.invitation && services.config.oidc && (await services.sso.passwordsOffForInvitation(input.invitation))) throw passwordsOff(services);
  return services.people.signUp(input);
}

/** The owner turned passwords off (which counts only while single sign-on is configured). */
function passwordsOff(services: Services): ApiError {
  const name = services.config.oidc?.name ?? 'single sign-on';
  return new ApiError('passwords_off', `This account signs in with ${name}: use the "Sign in with ${name}" button`);
}

export function authRoutes(services: Services): FastifyPluginAsyncZod {
  const { people } = services;
  const secure = services.config.publicUrl.startsWith('https:');
  return async (app) => {
    const hide = true;

    serve(app, routes.signUp, {
      hide,
      handler: async (request, reply) => {
        const user = await signUp(services, request.body);
        const session = await people.startSession(user.id);
        setSessionCookies(reply, session.token, session.expiresAt, secure);
        return reply.code(201).send(await sessionView(services, user, session.token));
      },
    });

    serve(app, routes.logIn, {
      hide,
      handler: async (request, reply) => {
        const user = await logIn(services, request.body.email, request.body.password, request.ip);
        const session = await people.startSession(user.id);
        setSessionCookies(reply, session.token, session.expiresAt, secure);
        return sessionView(services, user, session.token);
      },
    });

    // Whether anyone signed up yet: the UI shows "create the owner account" until then.
    serve(app, routes.authStatus, { hide, handler: async () => ({ signupOpen: !(await people.hasUsers()) }) });

    await app.register(async (signedIn) => {
      signedIn.addHook('onRequest', requireSession(people as People));
      serve(signedIn, routes.session, { hide, handler: async (request) => sessionView(services, request.user, request.sessionToken) });
      serve(signedIn, routes.logOut, {
        hide,
        handler: async (request, reply) => {
          await people.endSession(request.sessionToken);
          clearSessionCookies(reply, secure);
          return { signedOut: true };
        },
      });
    });
  };
}
