/**
 * Settings, Developers, Public API: the account's API keys. Owners
 * and admins manage them; every person of the account may list them.
 */
import { z } from 'zod';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { Services } from '../../app.ts';
import { idParam } from '../../contract/index.ts';
import { requirePermission } from '../../domain/people.ts';
import { parseScopes, SCOPES } from '../../domain/scopes.ts';

export function keysRoutes(services: Services): FastifyPluginAsyncZod {
  const { accounts } = services;
  return async (app) => {
    const hide = true;
    app.get('/keys', { schema: { hide } }, async (request) => accounts.listKeys(request.user.account_id));

    // The scopes a key may carry, with what each allows (for the UI's checkboxes).
    app.get('/scopes', { schema: { hide } }, async () => Object.entries(SCOPES).map(([name, description]) => ({ name, description })));

    app.post('/keys', {
      schema: { hide, body: z.object({ name: z.string().trim().min(1).max(200), scopes: z.array(z.string().max(100)).max(50).nullable().optional() }) },
      handler: async (request, reply) => {
        requirePermission(request.user, 'manage_keys');
        const scopes = parseScopes(request.body.scopes, 'scopes');
        const { key, summary } = await accounts.createKey(request.user.account_id, request.body.name, scopes);
        return reply.code(201).send({ ...summary, key });
      },
    });

    // POST, not GET: revealing a secret needs the CSRF token like any other action.
    app.post('/keys/:id/reveal', { schema: { hide, params: idParam } }, async (request) => {
      requirePermission(request.user, 'manage_keys');
      return { id: request.params.id, key: await accounts.revealKey(request.user.account_id, request.params.id) };
    });

    app.post('/keys/:id/rotate', { schema: { hide, params: idParam } }, async (request) => {
      requirePermission(request.user, 'manage_keys');
      const { key, summary } = await accounts.rotateKey(request.user.account_id, request.params.id);
      return { ...summary, key };
    });

    app.delete('/keys/:id', { schema: { hide, params: idParam } }, async (request) => {
      requirePermission(request.user, 'manage_keys');
      await accounts.revokeKey(request.user.account_id, request.params.id);
      return { id: request.params.id, revoked: true };
    });
  };
}
