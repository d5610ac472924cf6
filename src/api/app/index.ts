/**
 * The JSON endpoints the web UI uses, under /api/app. They authenticate with the
 * session cookie (and CSRF token) only; API keys and access tokens are for the
 * public API and are not accepted here.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { Services } from '../../services.ts';
import { authRoutes } from './auth.ts';
import { customersRoutes } from './customers.ts';
import { keysRoutes } from './keys.ts';
import { linkCardRoutes } from './link-cards.ts';
import { mailRoutes, passwordResetRoutes } from './mail.ts';
import { liveRoutes } from './live.ts';
import { oauthAppsRoutes } from './oauth-apps.ts';
import { oidcRoutes, ssoSettingsRoutes } from './oidc.ts';
import { peopleRoutes } from './people.ts';
import { plannerRoutes } from './planner.ts';
import { preferencesRoutes } from './preferences.ts';
import { publicApiForSessions } from './public-api.ts';
import { templatesRoutes } from './templates.ts';
import { requireSession } from './session.ts';

export function appRoutes(services: Services): FastifyPluginAsync {
  return async (app) => {
    await app.register(authRoutes(services));
    await app.register(passwordResetRoutes(services));
    await app.register(oidcRoutes(services));
    await app.register(async (signedIn) => {
      signedIn.addHook('onRequest', requireSession(services.people));
      await signedIn.register(peopleRoutes(services));
      await signedIn.register(ssoSettingsRoutes(services));
      await signedIn.register(keysRoutes(services));
      await signedIn.register(customersRoutes(services));
      await signedIn.register(oauthAppsRoutes(services));
      await signedIn.register(plannerRoutes(services));
      await signedIn.register(templatesRoutes(services));
      await signedIn.register(linkCardRoutes(services));
      await signedIn.register(preferencesRoutes(services));
      await signedIn.register(mailRoutes(services));
      await signedIn.register(liveRoutes(services.store.changes));
      await publicApiForSessions(signedIn, services);
    });
  };
}
