/**
 * Settings, Developers, Public API: the account's API keys. Owners
 * and admins manage them; every person of the account may list them.
 */
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { Services } from '../../services.ts';
import { appRoutes } from '../../contract/routes/app.ts';
import { requirePermission } from '../../domain/people.ts';
import { parseScopes, SCOPES } from '../../domain/scopes.ts';
import { serve } from '../serve.ts';

const { routes } = appRoutes;

export function keysRoutes(services: Services): FastifyPluginAsyncZod {
  const { accounts } = services;
  return async (app) => {
    const hide = true;
    serve(app, routes.keys, { hide, handler: async (request) => accounts.listKeys(request.user.account_id) });

    // The scopes a key may carry, with what each allows (for the UI's checkboxes).
    serve(app, routes.scopes, { hide, handler: async () => Object.entries(SCOPES).map(([name, description]) => ({ name, description })) });

    serve(app, routes.createKey, {
      hide,
      handler: async (request, reply) => {
        requirePermission(request.user, 'manage_keys');
        const scopes = parseScopes(request.body.scopes, 'scopes');
        const { key, summary } = await accounts.createKey(request.user.account_id, request.body.name, scopes);
        return reply.code(201).send({ ...summary, key });
      },
    });

    // POST, not GET: revealing a secret needs the CSRF token like any other action.
    serve(app, routes.revealKey, {
      hide,
      handler: async (request) => {
        requirePermission(request.user, 'manage_keys');
        return { id: request.params.id, key: await accounts.revealKey(request.user.account_id, request.params.id) };
      },
    });

    serve(app, routes.rotateKey, {
      hide,
      handler: async (request) => {
        requirePermission(request.user, 'manage_keys');
        const { key, summary } = await accounts.rotateKey(request.user.account_id, request.params.id);
        return { ...summary, key };
      },
    });

    serve(app, routes.revokeKey, {
      hide,
      handler: async (request) => {
        requirePermission(request.user, 'manage_keys');
        await accounts.revokeKey(request.user.account_id, request.params.id);
        return { id: request.params.id, revoked: true };
      },
    });
  };
}
