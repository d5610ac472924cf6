/** The people of the account and invitations (owners and admins invite; the owner changes roles). */
import { z } from 'zod';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { Services } from '../../app.ts';
import { idParam } from '../../contract/index.ts';
import { email } from './auth.ts';

const role = z.enum(['admin', 'member']);

export function peopleRoutes(services: Services): FastifyPluginAsyncZod {
  const { people, config } = services;
  return async (app) => {
    const hide = true;
    app.get('/people', { schema: { hide } }, async (request) => people.list(request.user.account_id));

    app.patch('/people/:id', { schema: { hide, params: idParam, body: z.object({ role }) } }, async (request) =>
      people.setRole(request.user, request.params.id, request.body.role),
    );

    app.delete('/people/:id', { schema: { hide, params: idParam } }, async (request) => {
      await people.remove(request.user, request.params.id);
      return { removed: true, id: request.params.id };
    });

    app.get('/invitations', { schema: { hide } }, async (request) => people.invitations(request.user.account_id));

    app.post('/invitations', { schema: { hide, body: z.object({ email, role: role.default('member') }) } }, async (request, reply) => {
      const { token, invitation } = await people.invite(request.user, request.body.email, request.body.role);
      // The token is shown this once; the invited person signs up with it.
      return reply.code(201).send({ ...invitation, token, signupUrl: `${config.publicUrl}/signup?invitation=${encodeURIComponent(token)}` });
    });

    app.delete('/invitations/:id', { schema: { hide, params: idParam } }, async (request) => {
      await people.withdrawInvitation(request.user, request.params.id);
      return { withdrawn: true, id: request.params.id };
    });
  };
}
