/** Templates and signatures of the account, for the composer: every person of the account may use and manage them. */
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { Services } from '../../services.ts';
import { appRoutes } from '../../contract/routes/app.ts';
import { serve } from '../serve.ts';

const { routes } = appRoutes;

export function templatesRoutes(services: Services): FastifyPluginAsyncZod {
  const { templates } = services;
  return async (app) => {
    const hide = true;
    serve(app, routes.templates, { hide, handler: async (request) => templates.list(request.user.account_id) });

    serve(app, routes.createTemplate, {
      hide,
      handler: async (request, reply) => reply.code(201).send(await templates.create(request.user.account_id, request.body)),
    });

    serve(app, routes.updateTemplate, { hide, handler: async (request) => templates.update(request.user.account_id, request.params.id, request.body) });

    serve(app, routes.deleteTemplate, {
      hide,
      handler: async (request) => {
        await templates.remove(request.user.account_id, request.params.id);
        return { deleted: true, id: request.params.id };
      },
    });
  };
}
