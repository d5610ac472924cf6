/** Every table of routes the server registers from the contract (see ../route.ts). */
import { appRoutes } from './app.ts';
import { oauthPages, oauthTokenRoutes, previewRoutes } from './visitors.ts';

export { appRoutes } from './app.ts';
export { oauthPages, oauthTokenRoutes, previewRoutes } from './visitors.ts';

export const ROUTE_TABLES = [appRoutes, oauthTokenRoutes, oauthPages, previewRoutes] as const;
