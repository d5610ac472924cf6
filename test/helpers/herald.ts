/**
 * Starts a real Herald (HTTP server on 127.0.0.1, real store) for a test, with
 * its own data folder or PostgreSQL database, and small helpers to call it.
 */
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { loadConfig } from '../../src/config.ts';
import { createServices, startWorkers } from '../../src/app.ts';
import type { Services } from '../../src/services.ts';
import { buildServer } from '../../src/server.ts';
import type { Engine, EngineOptions } from '../../src/scheduler/engine.ts';
import type { WebhookDispatcher, WebhookDispatcherOptions } from '../../src/scheduler/webhook-dispatcher.ts';
import type { Lookup } from '../../src/lib/outbound.ts';
import type { MailSender, MailSenderOptions } from '../../src/scheduler/mail-sender.ts';
import assert from 'node:assert/strict';
import type { AnswersFor, BodyArgument, PathsOf } from '../../src/contract/calls.ts';
import { pathOf, type AnswerOf, type Method, type RouteEntry, type RouteInput } from '../../src/contract/route.ts';
import type { publicRoutes } from '../../src/contract/routes/public.ts';
import { createTestDatabase, type StoreKind } from './stores.ts';

export interface TestHerald {
  store: StoreKind;
  /** http://127.0.0.1:PORT */
  url: string;
  /** http://127.0.0.1:PORT/api/public/v1 */
  api: string;
  services: Services;
  server: FastifyInstance;
  engine?: Engine;
  /** Sends account webhook deliveries, when started with `webhooks`. */
  dispatcher?: WebhookDispatcher;
  /** Sends the mail outbox, when started with `mail` and HERALD_SMTP_URL. */
  mailer?: MailSender;
  dataDir: string;
  /** Creates an account (or uses the owner) and returns a fresh API key for it. */
  newAccount(name?: string): Promise<TestAccount>;
  close(): Promise<void>;
}

export interface TestAccount {
  id: string;
  key: string;
  /** Calls a public route with the account's key, typed by the route table (see Caller). */
  call: Caller;
  /** The escape hatch for bad input on purpose (see RawCaller): the same as `call.raw`. */
  callRaw: RawCaller;
  /** @deprecated The old untyped caller, for the test files not yet moved onto `call`: answers `any`. */
  callUntyped: UntypedCaller;
}

export interface CallResult<T = unknown> {
  status: number;
  headers: Headers;
  body: T;
}

type PublicRoutes = typeof publicRoutes.routes;

/** Headers a call adds (an idempotency key, another authorization...), after its body. */
type CallArguments<R extends Record<string, RouteEntry>, M extends Method, P extends string> = [...BodyArgument<R, M, P>, headers?: Record<string, string>];

/** Every answer of the route a call reaches, one per status it declares, with the response's headers. */
export type TypedResult<R extends Record<string, RouteEntry>, M extends Method, P extends string> = AnswersFor<R, M, P> & { headers: Headers };

/**
 * Calls a public route by its method and path (a `${id}` stands for its :id),
 * as the web application's api() does: the path must name a route of the
 * table (src/contract/routes/public.ts), the body is checked against the
 * route's body schema, and the answer is the union of the route's answers by
 * status, so a test narrows on `status` (an `assert.equal(answer.status, 201)`
 * does) before it reads the body. A call that sends what no route takes on
 * purpose (a bad path, a malformed body) goes through `raw` instead.
 */
export interface Caller {
  <M extends Method, P extends PathsOf<PublicRoutes, M>>(
    method: M,
    path: P,
    ...rest: CallArguments<PublicRoutes, M, P>
  ): Promise<TypedResult<PublicRoutes, M, P>>;
  raw: RawCaller;
}

/** Any method, path and body, answering a body of unknown shape: for tests that send bad input on purpose. */
export type RawCaller = (method: string, path: string, body?: unknown, headers?: Record<string, string>) => Promise<CallResult<unknown>>;

/** @deprecated Answers `any`: only for the test files not yet moved onto the typed Caller. */
export type UntypedCaller = (method: string, path: string, body?: unknown, headers?: Record<string, string>) => Promise<CallResult<any>>;

/** @deprecated The answer of an UntypedCaller (`any` body): only for the test files not yet moved onto the typed Caller. */
export type UntypedResult = CallResult<any>;

/**
 * A call typed by its entry in the route table (src/contract/routes): the
 * parameters and body the route takes, and its success answer as `body` (an
 * error status carries the contract's error body instead: check `status`).
 */
export async function callRoute<E extends RouteEntry>(
  call: Caller | RawCaller,
  entry: E,
  input: RouteInput<E>,
  headers?: Record<string, string>,
): Promise<CallResult<AnswerOf<E>>> {
  const raw = 'raw' in call ? call.raw : call;
  return (await raw(entry.method, pathOf(entry, input), input.body, headers)) as CallResult<AnswerOf<E>>;
}

/** Asserts the answer's status and returns its body, typed by that status: `expectStatus(await account.call(...), 201)`. */
export function expectStatus<A extends { status: number; body: unknown }, S extends A['status']>(answer: A, status: S): Extract<A, { status: S }>['body'] {
  assert.equal(answer.status, status, JSON.stringify(answer.body)?.slice(0, 1000));
  return answer.body as Extract<A, { status: S }>['body'];
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

/** Calls the API; JSON in and out. Every answer of Herald must be JSON, so parsing failures surface. */
export function rawCaller(api: string, key?: string): RawCaller {
  return async (method, route, body, headers = {}) => {
    const init: RequestInit = { method, headers: { ...(key ? { authorization: key } : {}), ...headers } };
    if (body !== undefined) {
      (init.headers as Record<string, string>)['content-type'] ??= 'application/json';
      init.body = typeof body === 'string' || body instanceof FormData ? (body as string) : JSON.stringify(body);
      if (body instanceof FormData) delete (init.headers as Record<string, string>)['content-type'];
    }
    const response = await fetch(api + route, init);
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      throw new Error(`${method} ${route} answered ${response.status} with a body that is not JSON: ${text.slice(0, 200)}`);
    }
    return { status: response.status, headers: response.headers, body: parsed };
  };
}

/** The public API's caller (`api` is its base, /api/public/v1 of a Herald), typed by the route table: see Caller. */
export function caller(api: string, key?: string): Caller {
  const raw = rawCaller(api, key);
  // The types are the table's; what goes on the wire is the same as a raw call's.
  return Object.assign((method: string, path: string, ...rest: unknown[]) => raw(method, path, ...(rest as [unknown?, Record<string, string>?])), {
    raw,
  }) as unknown as Caller;
}

/** @deprecated The old untyped caller (answers `any`), for the test files not yet moved onto caller(). */
export function untypedCaller(api: string, key?: string): UntypedCaller {
  return rawCaller(api, key);
}

/** A test account on the public API of `api`, from its id and key. */
export function testAccount(api: string, id: string, key: string): TestAccount {
  const call = caller(api, key);
  return { id, key, call, callRaw: call.raw, callUntyped: call.raw };
}

export async function startHerald(
  store: StoreKind,
  /**
   * databaseUrl, dataDir: share the PostgreSQL database or the data folder (and so the
   * SQLite file) of another test Herald, which creates and removes it.
   */
  options: {
    env?: Record<string, string>;
    engine?: boolean | EngineOptions;
    webhooks?: boolean | WebhookDispatcherOptions;
    mail?: boolean | MailSenderOptions;
    lookup?: Lookup;
    databaseUrl?: string;
    dataDir?: string;
  } = {},
): Promise<TestHerald> {
  const dataDir = options.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'herald-test-'));
  const shared = options.databaseUrl ? { url: options.databaseUrl, drop: async () => {} } : undefined;
  const database = shared ?? (store === 'postgres' ? await createTestDatabase() : undefined);
  const port = await freePort();
  const config = loadConfig({
    HERALD_PORT: String(port),
    HERALD_PUBLIC_URL: `http://127.0.0.1:${port}`,
    HERALD_DATA_DIR: dataDir,
    HERALD_SECRET: 'test-secret-2f9c4e7a1b3d5f8e0a6c9b2d4f7e1a3c',
    HERALD_ALLOW_PRIVATE_HOSTS: '127.0.0.1',
    // Tests read the engine's outcomes from the store; its log lines would only crowd their output.
    HERALD_LOG_LEVEL: 'error',
    ...(database ? { HERALD_DATABASE_URL: database.url } : {}),
    ...options.env,
  });
  const services = await createServices(config, { lookup: options.lookup });
  // Every answer of the API tests is held to the response schema its route declares.
  const offSchema: string[] = [];
  const server = await buildServer(services, { logger: false, checkResponses: (problem) => offSchema.push(problem) });
  await server.listen({ port, host: '127.0.0.1' });
  // Tests look at the queues often, so what they wait for happens soon.
  const { engine, dispatcher, mailer } = startWorkers(services, {
    engine: options.engine ? { pollMs: 200, ...(typeof options.engine === 'object' ? options.engine : {}) } : false,
    webhooks: options.webhooks ? { pollMs: 200, ...(typeof options.webhooks === 'object' ? options.webhooks : {}) } : false,
    mail: options.mail ? { pollMs: 200, ...(typeof options.mail === 'object' ? options.mail : {}) } : false,
  });
  const url = `http://127.0.0.1:${port}`;
  const api = `${url}/api/public/v1`;
  return {
    store,
    url,
    api,
    services,
    server,
    engine,
    dispatcher,
    mailer,
    dataDir,
    async newAccount(name = 'Test account') {
      const id = await services.accounts.create(name);
      const { key } = await services.accounts.createKey(id, 'test');
      return testAccount(api, id, key);
    },
    async close() {
      await server.close();
      await engine?.stop();
      await dispatcher?.stop();
      await mailer?.stop();
      await services.close();
      await database?.drop();
      if (!options.dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
      if (offSchema.length > 0) throw new Error(`answers off their response schema:\n${[...new Set(offSchema)].join('\n')}`);
    },
  };
}

/** Polls `check` until it returns a value other than undefined, or fails after `ms`. */
export async function eventually<T>(check: () => Promise<T | undefined>, ms = 5000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + ms;
  // Soon at first, then less often: a long wait must not spend the API's request limit.
  for (let wait = 25; ; wait = Math.min(wait * 1.5, 200)) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, wait));
  }
}

/** A 1x1 PNG (one opaque white pixel), real bytes that decoders accept: checksums right, pixel data complete. */
export const PNG_1x1 = Buffer.from(
  '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000b4944415478da63f80f040009fb03fd68fa1ccc' + '0000000049454e44ae426082',
  'hex',
);

/** Uploads bytes as multipart part "file" (a body the table does not describe: it is multipart), answering as POST /upload does. */
export async function upload(account: TestAccount, _api: string, bytes: Buffer, filename = 'image.png', headers: Record<string, string> = {}) {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(bytes)]), filename);
  return (await account.callRaw('POST', '/upload', form, headers)) as TypedResult<PublicRoutes, 'POST', '/upload'>;
}

/** @deprecated upload() answering `any`, for the test files not yet moved onto the typed caller. */
export async function uploadUntyped(
  account: TestAccount,
  api: string,
  bytes: Buffer,
  filename = 'image.png',
  headers: Record<string, string> = {},
): Promise<UntypedResult> {
  return upload(account, api, bytes, filename, headers);
}
