/**
 * Small builders and checks shared by the public API suites: adding a webhook
 * channel, building POST /posts bodies, asserting the contract's error body, and
 * the list of every route that takes an id.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import type { AnswerOf, BodyOf, Method } from '../../src/contract/route.ts';
import type { publicRoutes } from '../../src/contract/routes/public.ts';
import type { CallResult, TestAccount, TestHerald } from './herald.ts';

/** What POST /posts takes, as a client sends it. */
export type PostsBody = BodyOf<(typeof publicRoutes.routes)['createPosts']>;
/** One posts[] entry of POST /posts. */
export type PostEntry = PostsBody['posts'][number];
/** One post of GET /posts. */
export type ListedPost = AnswerOf<(typeof publicRoutes.routes)['posts']>['posts'][number];

export interface Channel {
  id: string;
  name: string;
  identifier: string;
  timeZone: string;
  postingTimes: string[];
  customer: { id: string; name: string } | null;
  secrets?: { signingSecret: string };
}

/**
 * Adds a webhook channel. A webhook channel is identified by its URL, so each call
 * gets its own URL unless one is given (nothing is delivered while the engine is off).
 */
export async function addWebhookChannel(account: TestAccount, extra: Record<string, unknown> = {}, url?: string): Promise<Channel> {
  const target = url ?? `http://127.0.0.1:9/hook/${crypto.randomUUID()}`;
  // `extra` may carry any field of the body (a customer, a picture...): sent as it is.
  const added = await account.callRaw('POST', '/integrations', { identifier: 'webhook', credentials: { url: target }, ...extra });
  assert.equal(added.status, 201, JSON.stringify(added.body));
  return added.body as Channel;
}

export interface ItemInput {
  content: string;
  image?: { id?: string; path: string }[];
  delay?: number;
  id?: string;
}

/** One posts[] entry: a channel and its thread. */
export function entry(channelId: string, items: (string | ItemInput)[], more: Partial<PostEntry> = {}): PostEntry {
  return {
    integration: { id: channelId },
    value: items.map((i) => (typeof i === 'string' ? { content: i, image: [] } : { image: [], ...i })),
    ...more,
  };
}

/** A POST /posts body in the shape the clients send (date, shortLink, tags and posts always present). */
export function postBody(type: PostsBody['type'], entries: PostEntry[], more: Partial<PostsBody> = {}): PostsBody {
  return { type, date: FUTURE, shortLink: false, tags: [], posts: entries, ...more };
}

/** A fixed instant well in the future, so scheduled posts stay in the queue. */
export const FUTURE = '2031-03-04T10:00:00.000Z';

/** A valid POST /posts body scheduling one thread (one item per text) a day ahead. */
export function scheduledPost(channelId: string, texts: string | string[], more: Partial<PostsBody> = {}): PostsBody {
  const date = new Date(Date.now() + 86_400_000).toISOString();
  return postBody('schedule', [entry(channelId, Array.isArray(texts) ? texts : [texts])], { date, ...more });
}

/** Rows of `table` belonging to the account (every counted table has account_id). */
export async function countRows(herald: TestHerald, table: 'posts' | 'media' | 'short_links' | 'idempotency_keys', accountId: string): Promise<number> {
  const { rows } = await sql<{ n: number | string }>`SELECT COUNT(*) AS n FROM ${sql.table(table)} WHERE account_id = ${accountId}`.execute(
    herald.services.store.db,
  );
  return Number(rows[0].n);
}

/** Creates posts and returns the answer, failing the test on anything but 201. */
export async function createPosts(account: TestAccount, body: PostsBody): Promise<{ postId: string; integration: string }[]> {
  const created = await account.call('POST', '/posts', body);
  assert.equal(created.status, 201, JSON.stringify(created.body));
  return created.body;
}

/** Schedules a one-item post on a channel and returns its id. */
export async function schedulePost(account: TestAccount, channelId: string, content: string, date = FUTURE): Promise<string> {
  const [created] = await createPosts(account, postBody('schedule', [entry(channelId, [content])], { date }));
  return created.postId;
}

/** Asserts the contract's error body: {statusCode, error, message, msg, code, errors[{path, message}]}. */
export function assertError(result: CallResult, status: number, expect: { code?: string; path?: string; message?: RegExp } = {}): void {
  // Any answer may come here: its body is checked field by field below.
  const body = result.body as { [field: string]: unknown } | null | undefined;
  const shown = JSON.stringify(body)?.slice(0, 400);
  assert.equal(result.status, status, shown);
  assert.match(result.headers.get('content-type') ?? '', /^application\/json/, shown);
  assert.ok(body && typeof body === 'object' && !Array.isArray(body), 'error answers have a JSON object body');
  assert.equal(body.statusCode, status, shown);
  assert.ok(typeof body.error === 'string' && body.error.length > 0, `error names the status: ${shown}`);
  assert.ok(typeof body.message === 'string' && body.message.length > 0, `message explains: ${shown}`);
  assert.equal(body.msg, body.message, 'msg repeats message');
  assert.match(String(body.code), /^[a-z][a-z0-9_]*$/, `code is a snake_case name: ${shown}`);
  assert.ok(Array.isArray(body.errors), 'Array.isArray(body.errors)');
  for (const e of body.errors as { [field: string]: unknown }[]) {
    assert.deepEqual(Object.keys(e).sort(), ['message', 'path']);
    assert.ok(typeof e.path === 'string' && typeof e.message === 'string' && e.message.length > 0, `each problem states its rule: ${shown}`);
  }
  if (expect.code) assert.equal(body.code, expect.code);
  if (expect.path)
    assert.ok(
      (body.errors as { path: string }[]).some((e) => e.path === expect.path),
      `errors[] names ${expect.path}: ${JSON.stringify(body.errors)}`,
    );
  if (expect.message) assert.match(body.message, expect.message);
}

/** Every route that takes a channel, post or group id, with a body that is valid apart from the id. */
export function idRoutes(ids: { channel: string; post: string; group: string }): [Method, string, unknown?][] {
  return [
    ['PATCH', `/integrations/${ids.channel}`, { name: 'renamed' }],
    ['GET', `/find-slot/${ids.channel}`],
    ['GET', `/integration-settings/${ids.channel}`],
    ['POST', `/integration-trigger/${ids.channel}`, { methodName: 'sendTest' }],
    ['GET', `/analytics/${ids.channel}`],
    ['GET', `/analytics/post/${ids.post}`],
    ['GET', `/posts/${ids.post}`],
    ['PUT', `/posts/${ids.post}/status`, { status: 'draft' }],
    ['PUT', `/posts/${ids.post}/settings`, { settings: { extra: 1 } }],
    ['PUT', `/posts/${ids.post}/release-id`, { releaseId: 'manual-1' }],
    ['GET', `/posts/${ids.post}/missing`],
    ['POST', `/posts/${ids.post}/retry`],
    ['DELETE', `/posts/${ids.post}`],
    ['DELETE', `/posts/group/${ids.group}`],
    ['DELETE', `/integrations/${ids.channel}`],
  ];
}

/** GET /posts over a range wide enough for every post a suite creates. */
export async function listPosts(account: TestAccount, query = ''): Promise<ListedPost[]> {
  const listed = await account.call('GET', `/posts?startDate=2000-01-01T00:00:00Z&endDate=2100-01-01T00:00:00Z${query}`);
  assert.equal(listed.status, 200, JSON.stringify(listed.body));
  return listed.body.posts;
}

export interface FileServer {
  url: string;
  close(): Promise<void>;
}

/** Serves fixed bytes at /file.png (and 404 elsewhere) on 127.0.0.1, for upload-from-url. */
export async function startFileServer(bytes: Buffer, type = 'image/png'): Promise<FileServer> {
  const server = http.createServer((req, res) => {
    if (req.url?.startsWith('/file.png')) {
      res.writeHead(200, { 'content-type': type, 'content-length': bytes.length });
      res.end(bytes);
    } else {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('not here');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
