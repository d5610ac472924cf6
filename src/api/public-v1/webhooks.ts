/** Account webhooks: endpoints that receive signed events about this account's posts and channels. */
import { z } from 'zod';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { Services } from '../../services.ts';
import {
  createdWebhook,
  createWebhookBody,
  deletedWebhook,
  deliveriesPage,
  idParam,
  pageQuery,
  updateWebhookBody,
  webhook,
  webhookDelivery,
} from '../../contract/index.ts';
import { routeErrors } from './route-errors.ts';

const tags = ['webhooks'];

const deliveryParams = z.object({ id: z.string().min(1).max(200), deliveryId: z.string().min(1).max(200) });

export function webhooksRoutes(services: Services): FastifyPluginAsyncZod {
  const { webhooks } = services;
  return async (app) => {
    app.get('/webhooks', {
      schema: { tags, summary: "The account's webhooks", response: { 200: z.array(webhook), ...routeErrors() } },
      handler: async (request) => webhooks.list(request.principal.accountId),
    });

    app.post('/webhooks', {
      schema: {
        tags,
        summary: 'Register a webhook',
        description: 'The answer contains the signing secret (whsec_...) once; it cannot be read again.',
        body: createWebhookBody,
        response: { 201: createdWebhook, ...routeErrors() },
      },
      handler: async (request, reply) => {
        const { webhook: created, secret } = await webhooks.create(request.principal.accountId, request.body);
        return reply.code(201).send({ ...created, secret });
      },
    });

    app.patch('/webhooks/:id', {
      schema: {
        tags,
        summary: "Change a webhook's URL, events, name or disabled flag",
        params: idParam,
        body: updateWebhookBody,
        response: { 200: webhook, ...routeErrors(404) },
      },
      handler: async (request) => webhooks.update(request.principal.accountId, request.params.id, request.body),
    });

    app.delete('/webhooks/:id', {
      schema: {
        tags,
        summary: 'Remove a webhook; its pending deliveries are failed',
        params: idParam,
        response: { 200: deletedWebhook, ...routeErrors(404) },
      },
      handler: async (request) => {
        await webhooks.remove(request.principal.accountId, request.params.id);
        return { deleted: true, id: request.params.id };
      },
    });

    app.get('/webhooks/:id/deliveries', {
      schema: {
        tags,
        summary: 'Deliveries to a webhook, newest first, with every attempt (page counts from 0)',
        params: idParam,
        querystring: pageQuery,
        response: { 200: deliveriesPage, ...routeErrors(404) },
      },
      handler: async (request) => webhooks.deliveries(request.principal.accountId, request.params.id, request.query.page),
    });

    app.post('/webhooks/:id/deliveries/:deliveryId/redeliver', {
      schema: {
        tags,
        summary: 'Send a recorded event again (same webhook-id and body) as a new delivery',
        params: deliveryParams,
        response: { 202: webhookDelivery, ...routeErrors(404, 409) },
      },
      handler: async (request, reply) =>
        reply.code(202).send(await webhooks.redeliver(request.principal.accountId, request.params.id, request.params.deliveryId)),
    });

    app.post('/webhooks/:id/test', {
      schema: {
        tags,
        summary: 'Send a ping event to the webhook; follow it in the deliveries list',
        params: idParam,
        response: { 202: webhookDelivery, ...routeErrors(404, 409) },
      },
      handler: async (request, reply) => reply.code(202).send(await webhooks.ping(request.principal.accountId, request.params.id)),
    });
  };
}
