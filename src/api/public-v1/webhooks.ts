/** Account webhooks: endpoints that receive signed events about this account's posts and channels. */
import { z } from 'zod';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { Services } from '../../app.ts';
import { WEBHOOK_EVENTS } from '../../domain/webhooks.ts';
import { errorBody as errorSchema, idParam } from './schemas.ts';

const tags = ['webhooks'];
const errors = { 400: errorSchema, 401: errorSchema, 404: errorSchema };

const webhookUrl = z
  .url({ protocol: /^https?$/, error: 'must be an http(s) URL' })
  .max(2048)
  .describe('Where events are POSTed; must be a public address');
const events = z
  .array(z.enum(WEBHOOK_EVENTS))
  .min(1)
  .max(WEBHOOK_EVENTS.length * 2)
  .describe(`Events to receive: ${WEBHOOK_EVENTS.join(', ')}`);

const webhook = z.object({
  id: z.string(),
  name: z.string().nullable(),
  url: z.string(),
  events: z.array(z.enum(WEBHOOK_EVENTS)),
  disabled: z.boolean(),
  createdAt: z.string(),
  updatedAt: z.string(),
});

const delivery = z.object({
  id: z.string(),
  webhookId: z.string(),
  messageId: z.string().describe('The webhook-id header; the same on every retry and redelivery'),
  event: z.string(),
  state: z.enum(['pending', 'delivered', 'failed']),
  attempts: z.number(),
  nextAttemptAt: z.string().nullable(),
  lastStatus: z.number().nullable(),
  lastError: z.string().nullable(),
  createdAt: z.string(),
  deliveredAt: z.string().nullable(),
  payload: z.object({ type: z.string(), timestamp: z.string(), data: z.record(z.string(), z.unknown()) }),
  attemptLog: z.array(z.object({ at: z.string(), status: z.number().nullable(), error: z.string().nullable() })),
});

const deliveryParams = z.object({ id: z.string().min(1).max(200), deliveryId: z.string().min(1).max(200) });

export function webhooksRoutes(services: Services): FastifyPluginAsyncZod {
  const { webhooks } = services;
  return async (app) => {
    app.get('/webhooks', {
      schema: { tags, summary: "The account's webhooks", response: { 200: z.array(webhook), ...errors } },
      handler: async (request) => webhooks.list(request.principal.accountId),
    });

    app.post('/webhooks', {
      schema: {
        tags,
        summary: 'Register a webhook',
        description: 'The answer contains the signing secret (whsec_...) once; it cannot be read again.',
        body: z.object({ url: webhookUrl, events, name: z.string().trim().min(1).max(200).optional() }),
        response: { 201: webhook.extend({ secret: z.string() }), ...errors },
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
        body: z.object({
          url: webhookUrl.optional(),
          events: events.optional(),
          name: z.string().trim().min(1).max(200).nullable().optional(),
          disabled: z.boolean().optional(),
        }),
        response: { 200: webhook, ...errors },
      },
      handler: async (request) => webhooks.update(request.principal.accountId, request.params.id, request.body),
    });

    app.delete('/webhooks/:id', {
      schema: {
        tags,
        summary: 'Remove a webhook; its pending deliveries are failed',
        params: idParam,
        response: { 200: z.object({ deleted: z.boolean(), id: z.string() }), ...errors },
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
        querystring: z.object({ page: z.coerce.number().int().min(0).max(100_000).optional().default(0) }),
        response: { 200: z.object({ deliveries: z.array(delivery), page: z.number(), limit: z.number(), hasMore: z.boolean() }), ...errors },
      },
      handler: async (request) => webhooks.deliveries(request.principal.accountId, request.params.id, request.query.page),
    });

    app.post('/webhooks/:id/deliveries/:deliveryId/redeliver', {
      schema: {
        tags,
        summary: 'Send a recorded event again (same webhook-id and body) as a new delivery',
        params: deliveryParams,
        response: { 202: delivery, ...errors, 409: errorSchema },
      },
      handler: async (request, reply) =>
        reply.code(202).send(await webhooks.redeliver(request.principal.accountId, request.params.id, request.params.deliveryId)),
    });

    app.post('/webhooks/:id/test', {
      schema: {
        tags,
        summary: 'Send a ping event to the webhook; follow it in the deliveries list',
        params: idParam,
        response: { 202: delivery, ...errors, 409: errorSchema },
      },
      handler: async (request, reply) => reply.code(202).send(await webhooks.ping(request.principal.accountId, request.params.id)),
    });
  };
}
