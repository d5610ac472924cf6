/**
 * Queries on the path of every request, built and compiled by Kysely once and
 * then only run with new values: building a query costs more than SQLite takes
 * to answer it. `build` receives placeholders in place of the values.
 */
import type { Compilable, CompiledQuery, Kysely } from 'kysely';

const MARK = '\u0000hot-query:';

export function hotQuery<Args extends Record<string, string | number | null>, Row>(
  db: Kysely<any>,
  names: (keyof Args & string)[],
  build: (placeholders: Args) => Compilable<Row>,
): (args: Args, on?: Kysely<any>) => Promise<Row[]> {
  const placeholders = Object.fromEntries(names.map((name) => [name, MARK + name])) as unknown as Args;
  const compiled = build(placeholders).compile();
  const slots = compiled.parameters.map((value) => (typeof value === 'string' && value.startsWith(MARK) ? value.slice(MARK.length) : undefined));
  for (const name of names) if (!slots.includes(name)) throw new Error(`hotQuery: placeholder ${name} is not used`);
  // `on`: run inside a transaction instead of on the pool.
  return async (args, on = db) => {
    const parameters = compiled.parameters.map((value, i) => (slots[i] === undefined ? value : args[slots[i]!]));
    const query: CompiledQuery<Row> = { ...compiled, parameters };
    return (await on.executeQuery(query)).rows;
  };
}
