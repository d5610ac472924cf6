/** The public API's route plugins, registered under /api/public/v1 (API keys) and /api/app/public/v1 (web sessions). */
import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services.ts';
import { accountRoutes } from './account.ts';
import { integrationsRoutes } from './integrations.ts';
import { mediaRoutes } from './media.ts';
import { postsRoutes } from './posts.ts';
import { webhooksRoutes } from './webhooks.ts';
import { importRoutes } from './imports.ts';
import { approvalsRoutes } from './approvals.ts';
import { feedsRoutes } from './feeds.ts';
import { seriesRoutes } from './series.ts';

export async function registerPublicRoutes(app: FastifyInstance, services: Services): Promise<void> {
  await app.register(integrationsRoutes(services));
  await app.register(postsRoutes(services));
  await app.register(mediaRoutes(services));
  await app.register(accountRoutes(services));
  await app.register(webhooksRoutes(services));
  await app.register(importRoutes(services));
  await app.register(approvalsRoutes(services));
  await app.register(feedsRoutes(services));
  await app.register(seriesRoutes(services));
}
