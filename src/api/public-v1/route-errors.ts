import { errorBody } from '../../contract/index.ts';

/** Statuses any public route may answer: bad input, no valid key, a key without the scope, over the key's rate, the store unavailable. */
const EVERY_ROUTE = [400, 401, 403, 429, 503] as const;

/** The error answers of a route for its OpenAPI entry: those of every route and the route's own (404, 409...). */
export function routeErrors(...own: number[]): Record<number, typeof errorBody> {
  return Object.fromEntries([...EVERY_ROUTE, ...own].map((status) => [status, errorBody]));
}
