/** Templates and signatures of the account, for the composer: every person of the account may use and manage them. */
import { z } from 'zod';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { Services } from '../../app.ts';
import { idParam } from '../../contract/index.ts';
import { TEMPLATE_KINDS } from '../../domain/templates.ts';

const name = z.string().trim().min(1).max(200);
const content = z.string().min(1).max(100_000);

export function templatesRoutes(services: Services): FastifyPluginAsyncZod {
  const { templates } = services;
  return async (app) => {
    const hide = true;
    app.get('/templates', { schema: { hide } }, async (request) => templates.list(request.user.account_id));

    app.post('/templates', { schema: { hide, body: z.object({ kind: z.enum(TEMPLATE_KINDS), name, content }) } }, async (request, reply) =>
      reply.code(201).send(await templates.create(request.user.account_id, request.body)),
    );

    app.patch(
      '/templates/:id',
      { schema: { hide, params: idParam, body: z.object({ name: name.optional(), content: content.optional() }) } },
      async (request) => templates.update(request.user.account_id, request.params.id, request.body),
    );

    app.delete('/templates/:id', { schema: { hide, params: idParam } }, async (request) => {
      await templates.remove(request.user.account_id, request.params.id);
      return { deleted: true, id: request.params.id };
    });
  };
}
