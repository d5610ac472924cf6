/**
 * Registers a route from its entry in the contract's route table
 * (src/contract/route.ts): the entry gives the method, the path and every
 * schema; the route file adds only its documentation and its handler. A route
 * registered any other way is missing from the table, which
 * test/api/route-table.test.ts refuses.
 */
import type { FastifyInstance, FastifySchema, RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerDefault, RouteHandlerMethod } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { RouteEntry } from '../contract/route.ts';

type Field<E, K extends string> = E extends { [P in K]: infer S } ? S : undefined;

/** The Fastify schema an entry stands for, with its exact zod types, so the handler's request and reply are typed. */
export interface SchemaOf<E extends RouteEntry> extends FastifySchema {
  params: Field<E, 'params'>;
  querystring: Field<E, 'query'>;
  body: Field<E, 'body'>;
  response: E['responses'];
}

/** What the route file says about a route besides the contract: its place in the OpenAPI document. */
export interface RouteDocs {
  tags?: string[];
  summary?: string;
  description?: string;
  consumes?: string[];
  produces?: string[];
  /** Left out of the OpenAPI document (the web application's routes, pages, previews). */
  hide?: boolean;
}

export type HandlerOf<E extends RouteEntry> = RouteHandlerMethod<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  {},
  unknown,
  SchemaOf<E>,
  ZodTypeProvider
>;

/** Only the schemas the entry names: Fastify and the OpenAPI generator read a present key as "declared". */
function schemaOf(entry: RouteEntry, docs: RouteDocs): FastifySchema {
  return {
    ...docs,
    ...(entry.params ? { params: entry.params } : {}),
    ...(entry.query ? { querystring: entry.query } : {}),
    ...(entry.body ? { body: entry.body } : {}),
    ...(Object.keys(entry.responses).length > 0 ? { response: entry.responses } : {}),
  };
}

type AnyInstance = FastifyInstance<RawServerDefault, any, any, any, any>;

/** Registers the entry's route: its documentation and its handler in one object, as every route file writes it. */
export function serve<E extends RouteEntry>(app: AnyInstance, entry: E, { handler, ...docs }: RouteDocs & { handler: HandlerOf<E> }): void {
  app.route({ method: entry.method, url: entry.path, schema: schemaOf(entry, docs), handler: handler as RouteHandlerMethod });
}
