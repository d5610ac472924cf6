/**
 * Settings for OAuth: the applications this account registered (client id,
 * secret shown once, redirect URIs), and the access this account granted to
 * applications, which can be revoked here.
 */
import { z } from 'zod';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { Services } from '../../app.ts';
import { idParam } from '../../contract/index.ts';
import { MAX_TOKEN_TTL_SECONDS } from '../../domain/oauth.ts';
import { requirePermission } from '../../domain/people.ts';

const name = z.string().trim().min(1).max(200);
const redirectUris = z.array(z.string().min(1).max(2048)).min(1).max(20);
const tokenLifetime = z.number().int().min(60).max(MAX_TOKEN_TTL_SECONDS).describe('seconds');

export function oauthAppsRoutes(services: Services): FastifyPluginAsyncZod {
  const { oauth } = services;
  return async (app) => {
    const hide = true;
    app.get('/oauth/apps', { schema: { hide } }, async (request) => oauth.listApps(request.user.account_id));

    app.post('/oauth/apps', { schema: { hide, body: z.object({ name, redirectUris, tokenLifetime: tokenLifetime.optional() }) } }, async (request, reply) => {
      requirePermission(request.user, 'manage_apps');
      const { app: registered, clientSecret } = await oauth.registerApp(request.user.account_id, request.body);
      return reply.code(201).send({ ...registered, clientSecret });
    });

    app.patch('/oauth/apps/:id', {
      schema: {
        hide,
        params: idParam,
        body: z.object({ name: name.optional(), redirectUris: redirectUris.optional(), tokenLifetime: tokenLifetime.optional() }),
      },
      handler: async (request) => {
        requirePermission(request.user, 'manage_apps');
        return oauth.updateApp(request.user.account_id, request.params.id, request.body);
      },
    });

    app.post('/oauth/apps/:id/secret', { schema: { hide, params: idParam } }, async (request) => {
      requirePermission(request.user, 'manage_apps');
      const { app: registered, clientSecret } = await oauth.rotateSecret(request.user.account_id, request.params.id);
      return { ...registered, clientSecret };
    });

    app.delete('/oauth/apps/:id', { schema: { hide, params: idParam } }, async (request) => {
      requirePermission(request.user, 'manage_apps');
      await oauth.deleteApp(request.user.account_id, request.params.id);
      return { deleted: true, clientId: request.params.id };
    });

    app.get('/oauth/authorizations', { schema: { hide } }, async (request) => oauth.grants(request.user.account_id));

    app.delete('/oauth/authorizations/:id', { schema: { hide, params: idParam } }, async (request) => {
      await oauth.revokeGrant(request.user.account_id, request.params.id);
      return { revoked: true, id: request.params.id };
    });
  };
}
