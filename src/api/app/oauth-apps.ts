/**
 * Settings for OAuth: the applications this account registered (client id,
 * secret shown once, redirect URIs), and the access this account granted to
 * applications, which can be revoked here, and the agents (MCP clients) that
 * registered themselves and were approved, which can be disconnected here.
 */
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { Services } from '../../services.ts';
import { appRoutes } from '../../contract/routes/app.ts';
import { requirePermission } from '../../domain/people.ts';
import { serve } from '../serve.ts';

const { routes } = appRoutes;

export function oauthAppsRoutes(services: Services): FastifyPluginAsyncZod {
  const { oauth } = services;
  return async (app) => {
    const hide = true;
    serve(app, routes.oauthApps, { hide, handler: async (request) => oauth.listApps(request.user.account_id) });

    serve(app, routes.registerApp, {
      hide,
      handler: async (request, reply) => {
        requirePermission(request.user, 'manage_apps');
        const { app: registered, clientSecret } = await oauth.registerApp(request.user.account_id, request.body);
        return reply.code(201).send({ ...registered, clientSecret });
      },
    });

    serve(app, routes.updateApp, {
      hide,
      handler: async (request) => {
        requirePermission(request.user, 'manage_apps');
        return oauth.updateApp(request.user.account_id, request.params.id, request.body);
      },
    });

    serve(app, routes.rotateAppSecret, {
      hide,
      handler: async (request) => {
        requirePermission(request.user, 'manage_apps');
        const { app: registered, clientSecret } = await oauth.rotateSecret(request.user.account_id, request.params.id);
        return { ...registered, clientSecret };
      },
    });

    serve(app, routes.deleteApp, {
      hide,
      handler: async (request) => {
        requirePermission(request.user, 'manage_apps');
        await oauth.deleteApp(request.user.account_id, request.params.id);
        return { deleted: true, clientId: request.params.id };
      },
    });

    serve(app, routes.authorizations, { hide, handler: async (request) => oauth.grants(request.user.account_id) });

    serve(app, routes.revokeAuthorization, {
      hide,
      handler: async (request) => {
        await oauth.revokeGrant(request.user.account_id, request.params.id);
        return { revoked: true, id: request.params.id };
      },
    });

    // Agents that registered themselves: anyone who may revoke an authorization may disconnect one.
    serve(app, routes.connectedAgents, { hide, handler: async (request) => oauth.agents.list(request.user.account_id) });

    serve(app, routes.disconnectAgent, {
      hide,
      handler: async (request) => {
        await oauth.agents.disconnect(request.user.account_id, request.params.id);
        return { disconnected: true, clientId: request.params.id };
      },
    });
  };
}
