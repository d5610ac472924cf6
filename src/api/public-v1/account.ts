import { z } from 'zod';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { shortLinkStats } from '../../domain/posts/shortlinks.ts';
import type { Services } from '../../services.ts';
import { connected, createCustomerBody, customer, notificationsPage, pageQuery, shortLink } from '../../contract/index.ts';
import { routeErrors } from './route-errors.ts';

export function accountRoutes(services: Services): FastifyPluginAsyncZod {
  const { store, notifications, customers } = services;
  return async (app) => {
    app.get('/is-connected', {
      schema: { tags: ['account'], summary: 'Check that the API key works', response: { 200: connected, ...routeErrors() } },
      handler: async () => ({ connected: true }),
    });

    app.get('/groups', {
      schema: { tags: ['customers'], summary: 'Customers (groups of channels)', response: { 200: z.array(customer), ...routeErrors() } },
      handler: async (request) => (await customers.list(request.principal.accountId)).map(({ id, name }) => ({ id, name })),
    });

    app.post('/groups', {
      schema: { tags: ['customers'], summary: 'Create a customer', body: createCustomerBody, response: { 201: customer, ...routeErrors() } },
      handler: async (request, reply) => {
        const { id, name } = await customers.create(request.principal.accountId, request.body.name);
        return reply.code(201).send({ id, name });
      },
    });

    app.get('/short-links/:code', {
      schema: {
        tags: ['posts'],
        summary: 'Where a short link of this account points and how often it was followed',
        params: z.object({ code: z.string().min(1).max(64) }),
        response: { 200: shortLink, ...routeErrors(404) },
      },
      handler: async (request) => shortLinkStats(store.db, request.principal.accountId, request.params.code),
    });

    app.get('/notifications', {
      schema: {
        tags: ['account'],
        summary: 'Notifications, newest first (page counts from 0)',
        querystring: pageQuery,
        response: { 200: notificationsPage, ...routeErrors() },
      },
      handler: async (request) => notifications.page(request.principal.accountId, request.query.page),
    });
  };
}
