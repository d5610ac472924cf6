/**
 * Tools for the "bad input" guarantees: send any request (JSON, raw text,
 * multipart, odd headers), check the contract's error shape, and snapshot
 * everything a request could change (every table and the stored files) so a
 * test can prove a refused request changed nothing.
 */
import assert from 'node:assert/strict';
import { assertError } from './api-fixtures.ts';
import fs from 'node:fs';
import path from 'node:path';
import type { TestHerald } from './herald.ts';

export interface FormPart {
  name: string;
  content: Buffer | string;
  /** Present for a file part. */
  filename?: string;
}

export interface RawRequest {
  method: string;
  /** Path under /api/public/v1, with its query. */
  path: string;
  /** API key to send as Authorization; null sends none. */
  auth?: string | null;
  headers?: Record<string, string>;
  /** Sent as JSON text with Content-Type: application/json. */
  json?: unknown;
  /** Sent as is, with Content-Type: application/json unless `headers` name another. */
  raw?: string;
  /** Sent as multipart/form-data. */
  form?: FormPart[];
}

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
  /** The parsed JSON body; undefined when the body is not JSON. */
  body: any;
  isJson: boolean;
}

/** Long enough for any honest request, short enough that a hang fails the test instead of stalling the run. */
const HANG_LIMIT_MS = 20_000;

function requestBody(request: RawRequest, headers: Record<string, string>): RequestInit['body'] {
  if (request.form) {
    const form = new FormData();
    for (const part of request.form) {
      if (part.filename === undefined) form.append(part.name, String(part.content));
      else form.append(part.name, new Blob([new Uint8Array(typeof part.content === 'string' ? Buffer.from(part.content) : part.content)]), part.filename);
    }
    return form;
  }
  const text = request.json !== undefined ? JSON.stringify(request.json) : request.raw;
  if (text !== undefined) headers['content-type'] ??= 'application/json';
  return text;
}

/** Sends one request to the public API and reads the whole answer, failing if it does not come. */
export async function send(api: string, defaultKey: string, request: RawRequest): Promise<Answer> {
  const key = request.auth === undefined ? defaultKey : request.auth;
  const headers: Record<string, string> = { ...(key === null ? {} : { authorization: key }), ...request.headers };
  const body = requestBody(request, headers);
  const what = `${request.method} ${request.path.slice(0, 120)}`;
  let response: Response;
  let text: string;
  try {
    response = await fetch(api + request.path, { method: request.method, headers, body, signal: AbortSignal.timeout(HANG_LIMIT_MS) });
    text = await response.text();
  } catch (err) {
    throw new Error(`${what}: no complete answer (${(err as Error).name}: ${(err as Error).message})`);
  }
  try {
    return { status: response.status, headers: response.headers, text, body: JSON.parse(text), isJson: true };
  } catch {
    return { status: response.status, headers: response.headers, text, body: undefined, isJson: false };
  }
}

/** The contract's error body: { statusCode, error, message, msg, code, errors: [{ path, message }] }, as JSON. */
export function assertContractError(answer: Answer, status: number, what: string): void {
  assert.ok(answer.isJson, `${what}: answered ${answer.status} ${answer.text.slice(0, 400)}\n(the body must be JSON)`);
  try {
    assertError(answer, status);
  } catch (err) {
    (err as Error).message = `${what}: ${(err as Error).message}`;
    throw err;
  }
}

/** The answer names the field: one of errors[].path matches, and/or the message carries the fragment. */
export function assertNames(answer: Answer, expected: { field?: string | RegExp; message?: string | RegExp }, what: string): void {
  assert.ok(expected.field !== undefined || expected.message !== undefined, `${what}: a case must say which field the error names`);
  if (expected.field !== undefined) {
    const paths: string[] = answer.body.errors.map((p: { path: string }) => p.path);
    const field = expected.field;
    const hit = paths.some((p) => (typeof field === 'string' ? p === field : field.test(p)));
    assert.ok(hit, `${what}: errors[].path should name ${String(field)}; got ${JSON.stringify(paths)} (${answer.body.message})`);
  }
  if (expected.message !== undefined) {
    const fragment = expected.message;
    const hit = typeof fragment === 'string' ? answer.body.message.includes(fragment) : fragment.test(answer.body.message);
    assert.ok(hit, `${what}: message should mention ${String(fragment)}; got ${JSON.stringify(answer.body.message)}`);
  }
}

/** Bookkeeping a request may legitimately touch: the rate counters count requests, even refused ones. */
export const COUNTERS = ['rate_counters'];

/** Columns that record use, not content. */
const BOOKKEEPING_COLUMNS: Record<string, string[]> = { api_keys: ['last_used_at'] };

function filesUnder(root: string, dir = root): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return filesUnder(root, full);
    return [`${path.relative(root, full)} (${fs.statSync(full).size} bytes)`];
  });
}

export type StateSnapshot = Record<string, string[]>;

/**
 * Every row of every table (found by introspection, so new tables are covered)
 * except `exclude`, plus the media files on disk. Rows are compared whole, so an
 * update counts as a change, not only inserts and deletes.
 */
export async function snapshotState(herald: TestHerald, exclude: string[] = COUNTERS): Promise<StateSnapshot> {
  const db = herald.services.store.db;
  const tables = (await db.introspection.getTables()).map((t) => t.name).filter((name) => !exclude.includes(name));
  const state: StateSnapshot = {};
  for (const table of tables.sort()) {
    const rows = await db
      .selectFrom(table as never)
      .selectAll()
      .execute();
    const skip = BOOKKEEPING_COLUMNS[table] ?? [];
    state[table] = rows.map((row) => JSON.stringify(Object.fromEntries(Object.entries(row as object).filter(([column]) => !skip.includes(column))))).sort();
  }
  state['(media files)'] = filesUnder(herald.services.storage.root).sort();
  return state;
}

/** Names the tables whose rows differ, with a few of the differing rows. */
export function assertSameState(before: StateSnapshot, after: StateSnapshot, what: string): void {
  const changed = Object.keys({ ...before, ...after }).filter((t) => JSON.stringify(before[t]) !== JSON.stringify(after[t]));
  if (changed.length === 0) return;
  const details = changed.map((t) => {
    const old = new Set(before[t] ?? []);
    const now = new Set(after[t] ?? []);
    const added = [...now].filter((r) => !old.has(r)).slice(0, 3);
    const removed = [...old].filter((r) => !now.has(r)).slice(0, 3);
    return `${t}: +${JSON.stringify(added).slice(0, 600)} -${JSON.stringify(removed).slice(0, 600)}`;
  });
  assert.fail(`${what} changed stored state:\n${details.join('\n')}`);
}
