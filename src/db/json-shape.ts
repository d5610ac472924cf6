/**
 * The shape of an API object, described once and produced two ways: in
 * JavaScript from a row, or by the database as JSON text. A long list built by
 * the database crosses into JavaScript as one string instead of thousands of
 * values handed over one by one, and needs no JSON.stringify afterwards.
 */
import { sql, type RawBuilder } from 'kysely';
import type { Dialect } from './index.ts';

interface Field {
  /** value: as stored (strings, numbers, null); json: a column holding JSON text; instant: epoch ms shown as an ISO 8601 string. */
  kind: 'value' | 'json' | 'instant';
  /** "table.column" */
  column: string;
}

export interface Shape {
  [key: string]: Field | Shape;
}

export const value = (column: string): Field => ({ kind: 'value', column });
export const json = (column: string): Field => ({ kind: 'json', column });
export const instant = (column: string): Field => ({ kind: 'instant', column });

const isField = (value: Field | Shape): value is Field => typeof value.column === 'string' && typeof value.kind === 'string';

/** The name a column is selected under for fromRow. */
const aliasOf = (column: string) => column.replace('.', '__');

function fields(shape: Shape): Field[] {
  return Object.values(shape).flatMap((value) => (isField(value) ? [value] : fields(value)));
}

/** What to select for fromRow: every column of the shape once, under its alias. */
export function selections(shape: Shape): string[] {
  return [...new Set(fields(shape).map((f) => `${f.column} as ${aliasOf(f.column)}`))];
}

/** The object, from a row selected with `selections(shape)`. */
export function fromRow(shape: Shape, row: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(shape)) {
    if (!isField(value)) {
      out[key] = fromRow(value, row);
      continue;
    }
    const raw = row[aliasOf(value.column)];
    out[key] = raw === null || raw === undefined ? null : value.kind === 'json' ? JSON.parse(raw as string) : value.kind === 'instant' ? new Date(Number(raw)).toISOString() : raw;
  }
  return out;
}

function fieldSql(field: Field, dialect: Dialect): RawBuilder<unknown> {
  const ref = sql.ref(field.column);
  if (field.kind === 'value') return sql`${ref}`;
  if (dialect === 'postgres') {
    return field.kind === 'json' ? sql`${ref}::json` : sql`to_char(timestamp 'epoch' + ${ref} * interval '1 millisecond', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
  }
  return field.kind === 'json' ? sql`json(${ref})` : sql`strftime('%Y-%m-%dT%H:%M:%fZ', ${ref} / 1000.0, 'unixepoch')`;
}

function objectSql(shape: Shape, dialect: Dialect): RawBuilder<unknown> {
  const parts = Object.entries(shape).map(([key, value]) => sql`${sql.lit(key)}, ${isField(value) ? fieldSql(value, dialect) : objectSql(value, dialect)}`);
  return dialect === 'postgres' ? sql`json_build_object(${sql.join(parts)})` : sql`json_object(${sql.join(parts)})`;
}

/**
 * An SQL expression giving the JSON text of the object for the current row. Rows
 * are read as such texts and joined into an array by `jsonArray`, rather than
 * aggregated in SQL: SQLite sorts an ordered aggregate's input, while a plain
 * query can read its rows in an index's order.
 */
export function objectTextSql(shape: Shape, dialect: Dialect): RawBuilder<string> {
  const object = objectSql(shape, dialect);
  return dialect === 'postgres' ? sql<string>`${object}::text` : sql<string>`${object}`;
}

export function jsonArray(texts: string[]): string {
  return `[${texts.join(',')}]`;
}
