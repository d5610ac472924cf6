/**
 * One entry of the route table: what a route takes (path parameters, query,
 * body) and what it answers, per status. The server registers its routes from
 * these entries (src/api/serve.ts) and the clients (the SDK, the web
 * application, the tests) take their types from the same entries, so a route,
 * its validation, its documentation and its callers cannot drift apart.
 */
import type { z } from 'zod';
import { errorBody } from './common.ts';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface RouteEntry {
  method: Method;
  /** Below its table's prefix, with :name for each path parameter (Fastify's spelling). */
  path: string;
  params?: z.ZodType;
  query?: z.ZodType;
  body?: z.ZodType;
  /**
   * The answer's schema per status. Routes that answer a page, a stream or a
   * redirect name none: their answers are not JSON to check. A file (the CSV
   * export) is documented by its media type and not checked.
   */
  responses: Partial<Record<number, z.ZodType | DocumentedAnswer>>;
}

/** An answer that is not JSON, as the OpenAPI document describes it. */
export interface DocumentedAnswer {
  description: string;
  content: Record<string, { schema: z.ZodType }>;
}

/** A table: its entries by name, all mounted under `prefix`. */
export interface RouteTable<R extends Record<string, RouteEntry> = Record<string, RouteEntry>> {
  prefix: string;
  routes: R;
}

/** The same entries served at another prefix (the public API for web sessions). */
export const mountedAt = <R extends Record<string, RouteEntry>>(table: RouteTable<R>, prefix: string): RouteTable<R> => ({ prefix, routes: table.routes });

/** Keeps the literal types of an entry (its method, path and schemas), which the clients' types are read from. */
export const route = <const E extends RouteEntry>(entry: E): E => entry;

export const routeTable = <const R extends Record<string, RouteEntry>>(prefix: string, routes: R): RouteTable<R> => ({ prefix, routes });

/** Statuses any public route may answer: bad input, no valid key, a key without the scope, over the key's rate, the store unavailable. */
const EVERY_PUBLIC_ROUTE = [400, 401, 403, 429, 503] as const;

/**
 * The error answers of a public route: those of every route and the route's
 * own (404, 409...), by their literal statuses, so a client's type can tell a
 * success answer from an error answer by its status.
 */
export function routeErrors<const S extends number[]>(...own: S): Record<(typeof EVERY_PUBLIC_ROUTE)[number] | S[number], typeof errorBody> {
  return Object.fromEntries([...EVERY_PUBLIC_ROUTE, ...own].map((status) => [status, errorBody])) as Record<
    (typeof EVERY_PUBLIC_ROUTE)[number] | S[number],
    typeof errorBody
  >;
}

/**
 * Statuses any route of the web application's own API (/api/app) with a JSON
 * answer may answer: bad input, no session, no CSRF token or not the role, no
 * such thing, a conflict, over a limit, the store unavailable.
 */
const EVERY_APP_ROUTE = [400, 401, 403, 404, 409, 429, 503] as const;
type AppRouteError = (typeof EVERY_APP_ROUTE)[number];

/**
 * An entry of the web application's own table: its error answers declared
 * beside its own as the public routes declare theirs (routeErrors), so the
 * tests hold them to the contract's error body too and clients' types include
 * them. A stream, which declares no answer, is written with route().
 */
export const appRoute = <const E extends RouteEntry>(entry: E): E & { responses: Record<AppRouteError, typeof errorBody> } =>
  ({
    ...entry,
    responses: { ...Object.fromEntries(EVERY_APP_ROUTE.map((status) => [status, errorBody])), ...entry.responses },
  }) as E & { responses: Record<AppRouteError, typeof errorBody> };

type Field<E, K extends string> = E extends { [P in K]: infer S extends z.ZodType } ? S : undefined;
type SuccessStatus = 200 | 201 | 202 | 204;

/** What a client sends as the body (before the server's defaults and transforms). */
export type BodyOf<E> = Field<E, 'body'> extends z.ZodType ? z.input<Field<E, 'body'>> : undefined;
/** What a client sends as the query. */
export type QueryOf<E> = Field<E, 'query'> extends z.ZodType ? z.input<Field<E, 'query'>> : undefined;
/** The path parameters. */
export type ParamsOf<E> = Field<E, 'params'> extends z.ZodType ? z.input<Field<E, 'params'>> : undefined;

/** The answer of a route for one status, or by default for its success statuses. */
export type AnswerOf<E, S extends number = SuccessStatus> = E extends { responses: infer R }
  ? { [K in keyof R]: K extends S ? (R[K] extends z.ZodType ? z.output<R[K]> : never) : never }[keyof R]
  : never;

/**
 * Every answer of a route, one per declared status, as `{ status, body }`: a
 * client narrows on `status` to read the body. A route that declares no
 * answer (a page, a stream) answers any status with a body of unknown shape.
 */
export type AnswersOf<E> = E extends { responses: infer R }
  ? [keyof R] extends [never]
    ? { status: number; body: unknown }
    : { [K in keyof R]: { status: K; body: R[K] extends z.ZodType ? z.output<R[K]> : unknown } }[keyof R]
  : never;

/** '/posts/:id/status' as the template of the paths that reach it: '/posts/${string}/status'. */
export type PathPattern<P extends string> = P extends `${infer Head}:${infer _Name}/${infer Tail}`
  ? `${Head}${string}/${PathPattern<Tail>}`
  : P extends `${infer Head}:${infer _Name}`
    ? `${Head}${string}`
    : P;

/** What a call of `E` sends: its path parameters, query and body, each only when the entry takes it. */
export type RouteInput<E> = (ParamsOf<E> extends undefined ? { params?: undefined } : { params: ParamsOf<E> }) &
  (QueryOf<E> extends undefined ? { query?: undefined } : { query?: QueryOf<E> }) &
  (BodyOf<E> extends undefined ? { body?: undefined } : { body: BodyOf<E> });

/** The path (below the table's prefix) and query string of a call: each :name replaced by its encoded parameter. */
export function pathOf(entry: RouteEntry, input: { params?: unknown; query?: unknown }): string {
  const params = (input.params ?? {}) as Record<string, string>;
  const path = entry.path.replace(/:(\w+)/g, (_, name: string) => encodeURIComponent(params[name]));
  const query = Object.entries((input.query ?? {}) as Record<string, unknown>).filter(([, v]) => v !== undefined);
  return query.length === 0 ? path : `${path}?${new URLSearchParams(query.map(([k, v]) => [k, String(v)]))}`;
}
