/** Every table of routes the server registers from the contract (see ../route.ts). */
import { appRoutes } from './app.ts';
import { publicRoutes, sessionPublicRoutes } from './public.ts';
import { oauthDiscoveryRoutes, oauthPages, oauthTokenRoutes, previewRoutes } from './visitors.ts';

export { appRoutes } from './app.ts';
export { publicRoutes, sessionPublicRoutes } from './public.ts';
export { oauthDiscoveryRoutes, oauthPages, oauthTokenRoutes, previewRoutes } from './visitors.ts';

export const ROUTE_TABLES = [publicRoutes, sessionPublicRoutes, appRoutes, oauthTokenRoutes, oauthPages, previewRoutes, oauthDiscoveryRoutes] as const;
