/**
 * What the web application needs beyond the public API's routes: every network
 * with its content rules, how it counts text and its settings and credentials
 * as JSON Schema (the composer's counters and forms are built from these, the
 * same objects the server validates with), moving a post on the calendar, a
 * file's alt text, tags and where it is used, channels whose access ends, and
 * connecting a channel by approval.
 */
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { Services } from '../../services.ts';
import { networkCatalogue } from '../../providers/catalogue.ts';
import { mediaView } from '../../domain/media.ts';
import { WEBHOOK_EVENTS } from '../../contract/webhooks.ts';
import { appRoutes } from '../../contract/routes/app.ts';
import { serve } from '../serve.ts';
import { sendJsonText } from '../json-text.ts';
import { sessionPrincipal } from './public-api.ts';
import { requireScope } from '../auth.ts';
import type { FastifyRequest } from 'fastify';

const { routes } = appRoutes;

export function plannerRoutes(services: Services): FastifyPluginAsyncZod {
  return async (app) => {
    const hide = true;
    // Built once: the catalogue only changes with the server's code and settings.
    const catalogue = networkCatalogue(services.config);
    serve(app, routes.networks, { hide, handler: async () => catalogue });
    serve(app, routes.webhookEvents, { hide, handler: async () => WEBHOOK_EVENTS });
    // Connecting a channel by approval: as POST /integrations, only for who may change channels.
    const connecting = (request: FastifyRequest) => {
      const principal = sessionPrincipal(request);
      requireScope(principal, 'channels:write', 'connect a channel');
      return principal;
    };
    serve(app, routes.startApproval, {
      hide,
      handler: async (request, reply) => {
        connecting(request);
        return reply.code(201).send(await services.channels.startApproval(request.params.provider));
      },
    });
    serve(app, routes.checkApproval, {
      hide,
      handler: async (request) => services.channels.checkApproval(connecting(request).accountId, request.params.provider, request.params.id),
    });
    serve(app, routes.expiringAccess, { hide, handler: async (request) => services.channels.expiringAccess(sessionPrincipal(request).accountId) });

    serve(app, routes.describeMedia, {
      hide,
      handler: async (request) => mediaView(await services.media.describe(sessionPrincipal(request).accountId, request.params.id, request.body)),
    });

    serve(app, routes.mediaUsage, { hide, handler: async (request) => services.media.usage(sessionPrincipal(request).accountId, request.params.id) });

    // The calendar's month in one answer: the tiles (JSON the database built, sent as it is) and the posts being sent.
    serve(app, routes.calendar, {
      hide,
      handler: async (request, reply) => {
        const { accountId } = sessionPrincipal(request);
        const { startDate, endDate } = request.query;
        const [tiles, publishing, retrying] = await Promise.all([
          services.posts.calendarJson(accountId, startDate, endDate),
          services.posts.publishing(accountId),
          services.posts.retrying(accountId),
        ]);
        return sendJsonText(reply, `{"posts":${tiles},"publishing":${JSON.stringify(publishing)},"retrying":${JSON.stringify(retrying)}}`);
      },
    });

    // The calendar shows these as "publishing"; a claim writes the post, so the live stream says when to ask again.
    serve(app, routes.publishing, { hide, handler: async (request) => services.posts.publishing(sessionPrincipal(request).accountId) });

    // Queued posts whose last attempt failed and that wait for another: the pages show them as retrying, not as merely queued.
    serve(app, routes.retrying, { hide, handler: async (request) => services.posts.retrying(sessionPrincipal(request).accountId) });

    serve(app, routes.reschedule, {
      hide,
      handler: async (request) => services.posts.reschedule(sessionPrincipal(request).accountId, request.params.id, request.body.date),
    });
  };
}
