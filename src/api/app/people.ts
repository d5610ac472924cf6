/** The people of the account and invitations (owners and admins invite; the owner changes roles). */
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { Services } from '../../services.ts';
import { appRoutes } from '../../contract/routes/app.ts';
import { serve } from '../serve.ts';

const { routes } = appRoutes;

export function peopleRoutes(services: Services): FastifyPluginAsyncZod {
  const { people, config } = services;
  return async (app) => {
    const hide = true;
    serve(app, routes.people, { hide }, async (request) => people.list(request.user.account_id));

    serve(app, routes.setRole, { hide }, async (request) => people.setRole(request.user, request.params.id, request.body.role));

    serve(app, routes.removePerson, { hide }, async (request) => {
      await people.remove(request.user, request.params.id);
      return { removed: true, id: request.params.id };
    });

    serve(app, routes.invitations, { hide }, async (request) => people.invitations(request.user.account_id));

    serve(app, routes.invite, { hide }, async (request, reply) => {
      const { token, invitation } = await people.invite(request.user, request.body.email, request.body.role);
      // The token is shown this once; the invited person signs up with it.
      return reply.code(201).send({ ...invitation, token, signupUrl: `${config.publicUrl}/signup?invitation=${encodeURIComponent(token)}` });
    });

    serve(app, routes.withdrawInvitation, { hide }, async (request) => {
      await people.withdrawInvitation(request.user, request.params.id);
      return { withdrawn: true, id: request.params.id };
    });
  };
}
