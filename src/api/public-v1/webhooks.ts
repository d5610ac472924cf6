/** Account webhooks: endpoints that receive signed events about this account's posts and channels. */
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { Services } from '../../services.ts';
import { publicRoutes } from '../../contract/routes/public.ts';
import { serve } from '../serve.ts';

const { routes } = publicRoutes;
const tags = ['webhooks'];

export function webhooksRoutes(services: Services): FastifyPluginAsyncZod {
  const { webhooks } = services;
  return async (app) => {
    serve(app, routes.webhooks, { tags, summary: "The account's webhooks", handler: async (request) => webhooks.list(request.principal.accountId) });

    serve(app, routes.createWebhook, {
      tags,
      summary: 'Register a webhook',
      description: 'The answer contains the signing secret (whsec_...) once; it cannot be read again.',
      handler: async (request, reply) => {
        const { webhook: created, secret } = await webhooks.create(request.principal.accountId, request.body);
        return reply.code(201).send({ ...created, secret });
      },
    });

    serve(app, routes.updateWebhook, {
      tags,
      summary: "Change a webhook's URL, events, name or disabled flag",
      handler: async (request) => webhooks.update(request.principal.accountId, request.params.id, request.body),
    });

    serve(app, routes.deleteWebhook, {
      tags,
      summary: 'Remove a webhook; its pending deliveries are failed',
      handler: async (request) => {
        await webhooks.remove(request.principal.accountId, request.params.id);
        return { deleted: true, id: request.params.id };
      },
    });

    serve(app, routes.deliveries, {
      tags,
      summary: 'Deliveries to a webhook, newest first, with every attempt (page counts from 0)',
      handler: async (request) => webhooks.deliveries(request.principal.accountId, request.params.id, request.query.page),
    });

    serve(app, routes.redeliver, {
      tags,
      summary: 'Send a recorded event again (same webhook-id and body) as a new delivery',
      handler: async (request, reply) =>
        reply.code(202).send(await webhooks.redeliver(request.principal.accountId, request.params.id, request.params.deliveryId)),
    });

    serve(app, routes.testWebhook, {
      tags,
      summary: 'Send a ping event to the webhook; follow it in the deliveries list',
      handler: async (request, reply) => reply.code(202).send(await webhooks.ping(request.principal.accountId, request.params.id)),
    });
  };
}
