/** Customers (the public API's groups): create, rename, delete, and which channels belong to each. */
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { Services } from '../../services.ts';
import { appRoutes } from '../../contract/routes/app.ts';
import { serve } from '../serve.ts';

const { routes } = appRoutes;

export function customersRoutes(services: Services): FastifyPluginAsyncZod {
  const { customers } = services;
  return async (app) => {
    const hide = true;
    serve(app, routes.customers, { hide, handler: async (request) => customers.list(request.user.account_id) });

    serve(app, routes.createCustomer, {
      hide,
      handler: async (request, reply) => reply.code(201).send(await customers.create(request.user.account_id, request.body.name)),
    });

    serve(app, routes.renameCustomer, { hide, handler: async (request) => customers.rename(request.user.account_id, request.params.id, request.body.name) });

    serve(app, routes.deleteCustomer, {
      hide,
      handler: async (request) => {
        await customers.remove(request.user.account_id, request.params.id);
        return { deleted: true, id: request.params.id };
      },
    });

    serve(app, routes.assignChannels, {
      hide,
      handler: async (request) => customers.assignChannels(request.user.account_id, request.params.id, request.body.channels),
    });
  };
}
