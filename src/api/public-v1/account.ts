import { z } from 'zod';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { newId } from '../../lib/ids.ts';
import { iso } from '../../lib/time.ts';
import { notFound } from '../../domain/errors.ts';
import { shortLinkStats } from '../../domain/shortlinks.ts';
import type { Services } from '../../app.ts';
import { errorBody as errorSchema } from './schemas.ts';

const errors = { 400: errorSchema, 401: errorSchema };

export function accountRoutes(services: Services): FastifyPluginAsyncZod {
  const { store, notifications } = services;
  return async (app) => {
    app.get('/is-connected', {
      schema: { tags: ['account'], summary: 'Check that the API key works', response: { 200: z.object({ connected: z.boolean() }), ...errors } },
      handler: async () => ({ connected: true }),
    });

    app.get('/groups', {
      schema: {
        tags: ['customers'],
        summary: 'Customers (groups of channels)',
        response: { 200: z.array(z.object({ id: z.string(), name: z.string() })), ...errors },
      },
      handler: async (request) =>
        store.db.selectFrom('customers').select(['id', 'name']).where('account_id', '=', request.principal.accountId).orderBy('name').execute(),
    });

    app.post('/groups', {
      schema: {
        tags: ['customers'],
        summary: 'Create a customer',
        body: z.object({ name: z.string().trim().min(1).max(200) }),
        response: { 201: z.object({ id: z.string(), name: z.string() }), ...errors },
      },
      handler: async (request, reply) => {
        const row = { id: newId(), account_id: request.principal.accountId, name: request.body.name, created_at: Date.now() };
        await store.db.insertInto('customers').values(row).execute();
        return reply.code(201).send({ id: row.id, name: row.name });
      },
    });

    app.get('/short-links/:code', {
      schema: {
        tags: ['posts'],
        summary: 'Where a short link of this account points and how often it was followed',
        params: z.object({ code: z.string().min(1).max(64) }),
        response: { 200: z.object({ code: z.string(), url: z.string(), clicks: z.number(), createdAt: z.string() }), ...errors, 404: errorSchema },
      },
      handler: async (request) => {
        const link = await shortLinkStats(store.db, request.principal.accountId, request.params.code);
        if (!link) throw notFound('Short link', request.params.code);
        return { code: link.code, url: link.url, clicks: link.clicks, createdAt: iso(link.created_at) };
      },
    });

    app.get('/notifications', {
      schema: {
        tags: ['account'],
        summary: 'Notifications, newest first (page counts from 0)',
        querystring: z.object({ page: z.coerce.number().int().min(0).max(100_000).optional().default(0) }),
        response: {
          200: z.object({
            notifications: z.array(z.object({ id: z.string(), content: z.string(), link: z.string().nullable(), createdAt: z.string() })),
            total: z.number(),
            page: z.number(),
            limit: z.number(),
            hasMore: z.boolean(),
          }),
          ...errors,
        },
      },
      handler: async (request) => notifications.page(request.principal.accountId, request.query.page),
    });
  };
}
