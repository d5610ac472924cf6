/**
 * A client's call found in a route table by its method and path, at compile
 * time: `('PUT', `/posts/${id}/date`)` names the entry whose method is PUT and
 * whose path pattern is '/posts/:id/date', and so the body that call must send
 * and the answer it gets. The web application's request helper and the tests'
 * caller take their types from here; nothing of it exists at run time.
 */
import type { AnswerOf, AnswersOf, BodyOf, Method, RouteEntry } from './route.ts';

type Routes = Record<string, RouteEntry>;

/** '/posts/abc/status' as ['', 'posts', 'abc', 'status']. Splitting first keeps `${string}` (which matches across slashes) inside its segment. */
type Segments<P extends string> = P extends `${infer Head}/${infer Tail}` ? [Head, ...Segments<Tail>] : [P];

/** The path without its query string, and whether it had one. */
type PathPart<P extends string> = P extends `${infer Path}?${string}` ? Path : P;
type HasQuery<P extends string> = P extends `${string}?${string}` ? true : false;

/** Each segment of the path fits the pattern's: a literal one equal, a :parameter any (non-empty) text. */
type SegmentsFit<Path extends string[], Pattern extends string[]> = Path extends [infer P extends string, ...infer PathRest extends string[]]
  ? Pattern extends [infer Q extends string, ...infer PatternRest extends string[]]
    ? (Q extends `:${string}` ? (P extends '' ? false : true) : P extends Q ? true : false) extends true
      ? SegmentsFit<PathRest, PatternRest>
      : false
    : false
  : Pattern extends []
    ? true
    : false;

/** How many :parameters a pattern has, as a tuple's length. */
type Parameters_<Pattern extends string[]> = Pattern extends [infer Q, ...infer Rest extends string[]]
  ? Q extends `:${string}`
    ? [unknown, ...Parameters_<Rest>]
    : Parameters_<Rest>
  : [];

/** The entries of `R` that a call of `M` at `P` reaches (a query string only where the entry takes a query). */
type Reached<R extends Routes, M extends Method, P extends string> = {
  [K in keyof R]: R[K]['method'] extends M
    ? SegmentsFit<Segments<PathPart<P>>, Segments<R[K]['path']>> extends true
      ? HasQuery<P> extends true
        ? R[K] extends { query: unknown }
          ? K
          : never
        : K
      : never
    : never;
}[keyof R];

/**
 * Of the entries reached, those with the fewest :parameters: a literal segment
 * wins over a parameter, as the server's router decides ('/posts/export' is
 * the export, not a post whose id is "export").
 */
type MostLiteral<R extends Routes, K extends keyof R, N extends unknown[] = []> = N['length'] extends 4
  ? never
  : [Extract<K, { [J in K]: Parameters_<Segments<R[J]['path']>>['length'] extends N['length'] ? J : never }[K]>] extends [never]
    ? MostLiteral<R, K, [...N, unknown]>
    : Extract<K, { [J in K]: Parameters_<Segments<R[J]['path']>>['length'] extends N['length'] ? J : never }[K]>;

/**
 * The name of the entry a call reaches; never when none does. Not distributed
 * over `P`: a signature's generic body and answer are then bounded by the
 * table's names, where distributing would match every path against every entry
 * when the signature itself is checked (minutes of tsc for the whole table).
 */
export type RouteNameFor<R extends Routes, M extends Method, P extends string> = [P] extends [string] ? MostLiteral<R, Reached<R, M, P>> : never;

/** The entry a call of `M` at `P` reaches. */
export type RouteFor<R extends Routes, M extends Method, P extends string> = R[RouteNameFor<R, M, P>];

/**
 * The arguments after the path: the body when the entry takes one, none when
 * it takes none (a GET never does). A path that fits PathsOf but no entry
 * segment by segment ('/posts/a/b' against '/posts/:id') asks for an
 * argument no call can give (a GET answers `never` instead).
 */
export type BodyArgument<R extends Routes, M extends Method, P extends string> = [M] extends ['GET']
  ? []
  : [RouteNameFor<R, M, P>] extends [never]
    ? [noRouteAnswersThisPath: never]
    : [BodyOf<RouteFor<R, M, P>>] extends [undefined]
      ? []
      : [body: BodyOf<RouteFor<R, M, P>>];

/** What a call answers on success. */
export type AnswerFor<R extends Routes, M extends Method, P extends string> = AnswerOf<RouteFor<R, M, P>>;

/** Every answer a call may get, as `{ status, body }` per status the entry declares (errors too). */
export type AnswersFor<R extends Routes, M extends Method, P extends string> = AnswersOf<RouteFor<R, M, P>>;

/** The entries of a table as they are reached below another prefix (the public routes under /public/v1 for the web session). */
export type Prefixed<R extends Routes, Prefix extends string> = {
  [K in keyof R as `${Prefix} ${K & string}`]: Omit<R[K], 'path'> & { path: `${Prefix}${R[K]['path']}` };
};

/** The entries whose path starts with `Prefix`, with their paths below it (the preview routes below /api/preview). */
export type Below<R extends Routes, Prefix extends string> = {
  [K in keyof R as R[K]['path'] extends `${Prefix}/${string}` ? K : never]: Omit<R[K], 'path'> & {
    path: R[K]['path'] extends `${Prefix}${infer Rest}` ? Rest : never;
  };
};

/** '/posts/:id/status' as the template of the paths that reach it: '/posts/${string}/status'. */
export type PathPattern<P extends string> = P extends `${infer Head}:${infer _Name}/${infer Tail}`
  ? `${Head}${string}/${PathPattern<Tail>}`
  : P extends `${infer Head}:${infer _Name}`
    ? `${Head}${string}`
    : P;

/** Every path a call of `M` may name (with a query string where the entry takes one): loose, since `${string}` spans slashes; RouteNameFor is exact. */
export type PathsOf<R extends Routes, M extends Method = Method> = {
  [K in keyof R]: R[K]['method'] extends M
    ? PathPattern<R[K]['path']> | (R[K] extends { query: unknown } ? `${PathPattern<R[K]['path']>}?${string}` : never)
    : never;
}[keyof R];
