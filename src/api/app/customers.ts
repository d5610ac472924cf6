/** Customers (the public API's groups): create, rename, delete, and which channels belong to each. */
import { z } from 'zod';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { Services } from '../../app.ts';
import { idParam } from '../../contract/index.ts';

const name = z.string().trim().min(1).max(200);

export function customersRoutes(services: Services): FastifyPluginAsyncZod {
  const { customers } = services;
  return async (app) => {
    const hide = true;
    app.get('/customers', { schema: { hide } }, async (request) => customers.list(request.user.account_id));

    app.post('/customers', { schema: { hide, body: z.object({ name }) } }, async (request, reply) =>
      reply.code(201).send(await customers.create(request.user.account_id, request.body.name)),
    );

    app.patch('/customers/:id', { schema: { hide, params: idParam, body: z.object({ name }) } }, async (request) =>
      customers.rename(request.user.account_id, request.params.id, request.body.name),
    );

    app.delete('/customers/:id', { schema: { hide, params: idParam } }, async (request) => {
      await customers.remove(request.user.account_id, request.params.id);
      return { deleted: true, id: request.params.id };
    });

    app.put('/customers/:id/channels', {
      schema: { hide, params: idParam, body: z.object({ channels: z.array(z.string().min(1).max(200)).max(1000) }) },
      handler: async (request) => customers.assignChannels(request.user.account_id, request.params.id, request.body.channels),
    });
  };
}
