import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { shortLinkStats } from '../../domain/posts/shortlinks.ts';
import type { Services } from '../../services.ts';
import { publicRoutes } from '../../contract/routes/public.ts';
import { serve } from '../serve.ts';

const { routes } = publicRoutes;

export function accountRoutes(services: Services): FastifyPluginAsyncZod {
  const { store, notifications, customers } = services;
  return async (app) => {
    serve(app, routes.isConnected, { tags: ['account'], summary: 'Check that the API key works', handler: async () => ({ connected: true }) });

    serve(app, routes.customers, {
      tags: ['customers'],
      summary: 'Customers (groups of channels)',
      handler: async (request) => (await customers.list(request.principal.accountId)).map(({ id, name }) => ({ id, name })),
    });

    serve(app, routes.createCustomer, {
      tags: ['customers'],
      summary: 'Create a customer',
      handler: async (request, reply) => {
        const { id, name } = await customers.create(request.principal.accountId, request.body.name);
        return reply.code(201).send({ id, name });
      },
    });

    serve(app, routes.shortLink, {
      tags: ['posts'],
      summary: 'Where a short link of this account points and how often it was followed',
      handler: async (request) => shortLinkStats(store.db, request.principal.accountId, request.params.code),
    });

    serve(app, routes.notifications, {
      tags: ['account'],
      summary: 'Notifications, newest first (page counts from 0)',
      handler: async (request) => notifications.page(request.principal.accountId, request.query.page, request.principal.userId),
    });
  };
}
