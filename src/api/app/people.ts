/** The people of the account and invitations (owners and admins invite; the owner changes roles). */
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { Services } from '../../services.ts';
import { appRoutes } from '../../contract/routes/app.ts';
import { serve } from '../serve.ts';
import { invitationLetter, mailLanguage } from '../../mail/compose.ts';
import { INVITATION_TTL_MS } from '../../domain/people.ts';

const { routes } = appRoutes;

export function peopleRoutes(services: Services): FastifyPluginAsyncZod {
  const { people, config, mail, accounts, preferences } = services;
  return async (app) => {
    const hide = true;
    serve(app, routes.people, { hide, handler: async (request) => people.list(request.user.account_id) });

    serve(app, routes.setRole, { hide, handler: async (request) => people.setRole(request.user, request.params.id, request.body.role) });

    serve(app, routes.removePerson, {
      hide,
      handler: async (request) => {
        await people.remove(request.user, request.params.id);
        return { removed: true, id: request.params.id };
      },
    });

    // The sign-up page's address for an invitation: its token, and the invitee's address to fill in.
    const signupUrl = (token: string, email: string) => `${config.publicUrl}/signup?${new URLSearchParams({ invitation: token, email })}`;

    serve(app, routes.invitations, {
      hide,
      handler: async (request) =>
        (await people.invitations(request.user)).map(({ token, ...invitation }) => ({
          ...invitation,
          signupUrl: token ? signupUrl(token, invitation.email) : null,
        })),
    });

    serve(app, routes.invite, {
      hide,
      handler: async (request, reply) => {
        const { token, invitation } = await people.invite(request.user, request.body.email, request.body.role);
        // The invited person signs up with the token; those who may invite can copy the link again while it is open.
        const link = signupUrl(token, invitation.email);
        // Written in the inviter's language: the invitee has chosen none yet. Without mail, the inviter sends the link.
        const letter = invitationLetter(mailLanguage((await preferences.of(request.user.id)).language), {
          inviter: request.user.name,
          account: (await accounts.describe(request.user.account_id)).name,
          link,
          days: INVITATION_TTL_MS / 86_400_000,
        });
        const mailed = await mail.enqueue('invitation', invitation.email, letter, null);
        return reply.code(201).send({ ...invitation, token, signupUrl: link, mailed });
      },
    });

    serve(app, routes.withdrawInvitation, {
      hide,
      handler: async (request) => {
        await people.withdrawInvitation(request.user, request.params.id);
        return { withdrawn: true, id: request.params.id };
      },
    });
  };
}
