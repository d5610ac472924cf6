/** The signed-in person's display preferences: language, zone, week start, clock. */
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { Services } from '../../services.ts';
import { appRoutes } from '../../contract/routes/app.ts';
import { serve } from '../serve.ts';

const { routes } = appRoutes;

export function preferencesRoutes(services: Services): FastifyPluginAsyncZod {
  const { preferences } = services;
  return async (app) => {
    const hide = true;
    serve(app, routes.preferences, { hide, handler: async (request) => preferences.of(request.user.id) });
    serve(app, routes.setPreferences, { hide, handler: async (request) => preferences.change(request.user.id, request.body) });
  };
}
