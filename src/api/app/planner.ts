/**
 * What the web application needs beyond the public API's routes: every network
 * with its content rules, how it counts text and its settings and credentials
 * as JSON Schema (the composer's counters and forms are built from these, the
 * same objects the server validates with), moving a post on the calendar, and
 * a file's alt text, tags and where it is used.
 */
import { z } from 'zod';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { Services } from '../../app.ts';
import { networkCatalogue } from '../../providers/catalogue.ts';
import { mediaView } from '../../domain/media.ts';
import { WEBHOOK_EVENTS } from '../../contract/webhooks.ts';
import { idParam, isoInstant, mediaTag } from '../../contract/index.ts';
import { sessionPrincipal } from './public-api.ts';

export function plannerRoutes(services: Services): FastifyPluginAsyncZod {
  return async (app) => {
    const hide = true;
    // Built once: the catalogue only changes with the server's code and settings.
    const catalogue = networkCatalogue(services.config);
    app.get('/networks', { schema: { hide } }, async () => catalogue);
    app.get('/webhook-events', { schema: { hide } }, async () => WEBHOOK_EVENTS);

    app.patch('/media/:id', {
      schema: {
        hide,
        params: idParam,
        body: z.object({ alt: z.string().max(1500).optional(), tags: z.array(mediaTag).max(20).optional() }),
      },
      handler: async (request) => mediaView(await services.media.describe(sessionPrincipal(request).accountId, request.params.id, request.body)),
    });

    app.get('/media/:id/usage', { schema: { hide, params: idParam } }, async (request) =>
      services.media.usage(sessionPrincipal(request).accountId, request.params.id),
    );

    // The calendar shows these as "publishing"; a claim writes the post, so the live stream says when to ask again.
    app.get('/posts/publishing', { schema: { hide } }, async (request) => services.posts.publishing(sessionPrincipal(request).accountId));

    app.put('/posts/:id/date', {
      schema: { hide, params: idParam, body: z.object({ date: isoInstant }) },
      handler: async (request) => services.posts.reschedule(sessionPrincipal(request).accountId, request.params.id, request.body.date),
    });
  };
}
