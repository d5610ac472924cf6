/**
 * Mail in the web application: a person's choice of what they get, and the
 * password reset ("Forgot password?" mails a single-use link; its page sets
 * the new password). Asking for a link answers the same whether or not the
 * address belongs to someone, and the letter is written after the answer, so
 * neither the words nor the time tell.
 */
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { Services } from '../../services.ts';
import { appRoutes } from '../../contract/routes/app.ts';
import { RESET_TTL_MS } from '../../domain/password-resets.ts';
import { inBackground } from '../../lib/background.ts';
import { mailLanguage, resetLetter } from '../../mail/compose.ts';
import { serve } from '../serve.ts';
import { sessionView } from './auth.ts';
import { setSessionCookies } from './session.ts';

const { routes } = appRoutes;

const RESET_WINDOW_MS = 60 * 60_000;
/** Links asked for one address in an hour, from anywhere: enough for a lost mail or two, not a mailbox flood. */
const RESETS_PER_EMAIL = 5;
/** Links asked for from one client address in an hour, for any addresses. */
const RESETS_PER_ADDRESS = 20;

/** Mails a reset link to the person with this address, if there is one (in the background: the request has been answered). */
export async function mailResetLink(services: Services, email: string): Promise<void> {
  const person = await services.passwordResets.person(email);
  if (!person) return;
  const token = await services.passwordResets.create(person.id);
  const language = mailLanguage((await services.preferences.of(person.id)).language);
  const letter = resetLetter(language, { link: services.mail.links.reset(token), minutes: RESET_TTL_MS / 60_000, choicesUrl: services.mail.links.choices });
  await services.mail.enqueue('password_reset', person.email, letter, person.id);
}

/** The routes anyone may call (the sign-in page's "Forgot password?" and the link's page). */
export function passwordResetRoutes(services: Services): FastifyPluginAsyncZod {
  const { mail, rateLimiter, passwordResets, people } = services;
  const secure = services.config.publicUrl.startsWith('https:');
  return async (app) => {
    const hide = true;
    serve(app, routes.forgotPassword, {
      hide,
      handler: async (request, reply) => {
        const email = request.body.email.toLowerCase();
        await rateLimiter.consumeSliding(`reset:address:${request.ip}`, RESETS_PER_ADDRESS, RESET_WINDOW_MS, 'Password reset requests from this address');
        await rateLimiter.consumeSliding(`reset:email:${email}`, RESETS_PER_EMAIL, RESET_WINDOW_MS, 'Password reset requests for this email');
        if (mail.enabled) inBackground('could not write a password reset mail', () => mailResetLink(services, email));
        return reply.code(202).send({ mailEnabled: mail.enabled });
      },
    });

    serve(app, routes.resetPassword, {
      hide,
      handler: async (request, reply) => {
        const user = await passwordResets.use(request.body.token, request.body.password);
        const session = await people.startSession(user.id);
        setSessionCookies(reply, session.token, session.expiresAt, secure);
        return sessionView(services, user, session.token);
      },
    });
  };
}

/** The signed-in person's mail choices. */
export function mailRoutes(services: Services): FastifyPluginAsyncZod {
  const { mail } = services;
  return async (app) => {
    const hide = true;
    serve(app, routes.mailSettings, { hide, handler: async (request) => ({ enabled: mail.enabled, choices: await mail.choices(request.user.id) }) });
    serve(app, routes.setMailChoices, {
      hide,
      handler: async (request) => ({ enabled: mail.enabled, choices: await mail.choose(request.user.id, request.body) }),
    });
  };
}
