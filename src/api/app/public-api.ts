/**
 * The public API's own routes, a second time under /api/app/public/v1, for the
 * web application: the same handlers, schemas and domain services, reached with
 * the session cookie (and CSRF token) instead of an API key. One implementation
 * of each operation, two ways to authenticate.
 *
 * A person acts with their role's reach: owners and admins have full access,
 * members every named scope (what an application they authorise may get).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Services } from '../../services.ts';
import type { Principal } from '../../domain/accounts.ts';
import { capScopesForRole } from '../../domain/scopes.ts';
import { checkScope } from '../auth.ts';
import { registerPublicRoutes } from '../public-v1/index.ts';

export function sessionPrincipal(request: FastifyRequest): Principal {
  const { user } = request;
  return { accountId: user.account_id, keyId: `session:${user.id}`, scopes: capScopesForRole(null, user.role), userId: user.id };
}

/** Registers the public routes in `app` (a context where a session is already required). */
export async function publicApiForSessions(app: FastifyInstance, services: Services): Promise<void> {
  await app.register(
    async (api) => {
      // Documented once, under /api/public/v1; these copies stay out of the OpenAPI document.
      api.addHook('onRoute', (route) => {
        route.schema = { ...route.schema, hide: true };
      });
      api.addHook('onRequest', async (request) => {
        request.principal = sessionPrincipal(request);
        checkScope(request, request.principal);
        await services.rateLimiter.consumeBatched(`person:${request.user.id}`, services.config.requestsPerMinute, 60_000, 'Your session');
      });
      await registerPublicRoutes(api, services);
    },
    { prefix: '/public/v1' },
  );
}
