/**
 * The base of every fake network: a local HTTP server that records each request
 * (method, path, query, headers, raw body, parsed JSON / form / multipart) and
 * answers through routes the fake declares. A fake for a new network is a list of
 * routes; tests read `requests` to assert exactly what the adapter sent, and
 * `failNext` to inject a failure at a route. Every network's fake declares its
 * create endpoint (`create`), so `storeThenFail` can make it store a post and
 * then answer the network's own 5xx.
 *
 * It also plays the user at the network's consent screen: `authorize` routes
 * answer 302 to the redirect_uri with a code, as the network would after the
 * user clicked "Allow".
 */
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: http.IncomingHttpHeaders;
  raw: Buffer;
  /** Parsed when the body is JSON. */
  json?: any;
  /** Parsed when the body is a URL-encoded form. */
  form?: Record<string, string>;
  /** Parsed when the body is multipart/form-data: fields and files. */
  multipart?: { fields: Record<string, string>; files: { name: string; filename: string; type: string; data: Buffer }[] };
  /** Path parameters of the matching route (":id" segments). */
  params: Record<string, string>;
  at: number;
}

export interface FakeAnswer {
  status?: number;
  /** Sent as JSON unless it is a string or Buffer. */
  body?: unknown;
  headers?: Record<string, string>;
  /** Wait before answering (to trip a client timeout). */
  delayMs?: number;
  /** Never answer: the request was received, the client sees a timeout. */
  hang?: boolean;
  /** Do what the route does (store the post), then never answer: the client cannot know it went out. */
  handleThenHang?: boolean;
  /** Do what the route does (store the post), then give this answer instead (a gateway error after the network took it). */
  handleFirst?: boolean;
}

export type Handler = (request: RecordedRequest, fake: NetworkFake) => FakeAnswer | Promise<FakeAnswer>;

/** Where a fake's network creates a post, and how it answers a server error there (for `storeThenFail`). */
export interface CreateEndpoint {
  /** The route that creates a post ("POST /2/tweets"). */
  route: string;
  /** The network's own answer of a server error `status` (500, 502, 503…) at `route`: the error body its docs show. */
  serverError(status: number, route: string): FakeAnswer;
}

/** "POST /2/tweets" or "GET /api/v1/accounts/:id". */
export type Routes = Record<string, Handler>;

export interface NetworkFake {
  url: string;
  requests: RecordedRequest[];
  /** Requests to one route ("POST /2/tweets"). */
  calls(route: string): RecordedRequest[];
  /** The next `times` requests to `route` get `answer` instead of the route's own. */
  failNext(route: string, answer: FakeAnswer, times?: number): void;
  /** Replaces or adds routes. */
  route(routes: Routes): void;
  /** The fake's create endpoint, declared by each network's fake: what `storeThenFail` fails. */
  create?: CreateEndpoint;
  /**
   * "Store, then answer a 5xx", on the create endpoint: the next request there is
   * handled (the network stores the post) and then answered with the network's
   * own server error `status`, with `Retry-After: retryAfterSeconds` when given: a
   * network that took the post and failed after. `route` fails another create
   * endpoint of the network with the same error.
   */
  storeThenFail(status: number, options?: { retryAfterSeconds?: number; route?: string }): void;
  /** Any state the fake keeps (tokens issued, posts stored...). */
  state: Record<string, any>;
  close(): Promise<void>;
}

function parseMultipart(raw: Buffer, boundary: string): NonNullable<RecordedRequest['multipart']> {
  const fields: Record<string, string> = {};
  const files: { name: string; filename: string; type: string; data: Buffer }[] = [];
  const delimiter = Buffer.from(`--${boundary}`);
  let start = raw.indexOf(delimiter);
  while (start !== -1) {
    const next = raw.indexOf(delimiter, start + delimiter.length);
    if (next === -1) break;
    const part = raw.subarray(start + delimiter.length + 2, next - 2);
    const split = part.indexOf('\r\n\r\n');
    if (split !== -1) {
      const head = part.subarray(0, split).toString('utf8');
      const data = part.subarray(split + 4);
      const name = /name="([^"]*)"/.exec(head)?.[1] ?? '';
      const filename = /filename="([^"]*)"/.exec(head)?.[1];
      const type = /content-type:\s*([^\r\n]+)/i.exec(head)?.[1] ?? '';
      if (filename !== undefined) files.push({ name, filename, type, data: Buffer.from(data) });
      else fields[name] = data.toString('utf8');
    }
    start = next;
  }
  return { fields, files };
}

function compile(route: string): { method: string; pattern: RegExp; names: string[] } {
  const [method, path] = route.split(' ');
  const names: string[] = [];
  const pattern = new RegExp(
    `^${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:(\w+)/g, (_m, name) => {
      names.push(name);
      return '([^/]+)';
    })}$`,
  );
  return { method, pattern, names };
}

export async function startNetworkFake(routes: Routes = {}): Promise<NetworkFake> {
  const table = new Map<string, { compiled: ReturnType<typeof compile>; handler: Handler }>();
  const failures = new Map<string, { answer: FakeAnswer; times: number }>();
  const requests: RecordedRequest[] = [];
  const hanging = new Set<http.ServerResponse>();
  const add = (more: Routes) => {
    for (const [route, handler] of Object.entries(more)) table.set(route, { compiled: compile(route), handler });
  };
  add(routes);

  const fake: NetworkFake = {
    url: '',
    requests,
    state: {},
    calls: (route) => {
      const { method, pattern } = compile(route);
      return requests.filter((r) => r.method === method && pattern.test(r.path));
    },
    failNext(route, answer, times = 1) {
      failures.set(route, { answer, times });
    },
    route: add,
    storeThenFail(status, options = {}) {
      if (!fake.create) throw new Error('this fake declares no create endpoint (fake.create)');
      const route = options.route ?? fake.create.route;
      const answer = fake.create.serverError(status, route);
      const headers = options.retryAfterSeconds === undefined ? answer.headers : { ...answer.headers, 'retry-after': String(options.retryAfterSeconds) };
      fake.failNext(route, { ...answer, headers, handleFirst: true });
    },
    close: () =>
      new Promise((resolve) => {
        for (const res of hanging) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', async () => {
      const raw = Buffer.concat(chunks);
      const url = new URL(req.url ?? '/', 'http://fake');
      const type = req.headers['content-type'] ?? '';
      const recorded: RecordedRequest = {
        method: req.method ?? 'GET',
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        headers: req.headers,
        raw,
        params: {},
        at: Date.now(),
      };
      if (type.includes('json')) {
        try {
          recorded.json = JSON.parse(raw.toString('utf8'));
        } catch {
          /* left undefined: the test sees it */
        }
      } else if (type.includes('application/x-www-form-urlencoded')) {
        recorded.form = Object.fromEntries(new URLSearchParams(raw.toString('utf8')));
      } else if (type.includes('multipart/form-data')) {
        const boundary = /boundary=("?)([^";]+)\1/.exec(type)?.[2];
        if (boundary) recorded.multipart = parseMultipart(raw, boundary);
      }
      requests.push(recorded);

      let answer: FakeAnswer = { status: 404, body: { error: `the fake has no route ${recorded.method} ${recorded.path}` } };
      for (const [route, { compiled, handler }] of table) {
        const match = compiled.method === recorded.method ? compiled.pattern.exec(recorded.path) : null;
        if (!match) continue;
        compiled.names.forEach((name, i) => {
          recorded.params[name] = decodeURIComponent(match[i + 1]);
        });
        const failure = failures.get(route);
        if (failure && failure.times > 0 && (failure.answer.handleThenHang || failure.answer.handleFirst)) {
          failure.times--;
          await handler(recorded, fake);
          answer = failure.answer.handleThenHang ? { hang: true } : failure.answer;
        } else if (failure && failure.times > 0) {
          failure.times--;
          answer = failure.answer;
        } else {
          try {
            answer = await handler(recorded, fake);
          } catch (err) {
            answer = { status: 500, body: { error: `fake handler failed: ${(err as Error).message}` } };
          }
        }
        break;
      }
      if (answer.hang) {
        hanging.add(res);
        return;
      }
      const send = () => {
        const isRaw = typeof answer.body === 'string' || Buffer.isBuffer(answer.body);
        const headers = { ...(isRaw || answer.body === undefined ? {} : { 'content-type': 'application/json' }), ...answer.headers };
        res.writeHead(answer.status ?? 200, headers);
        res.end(answer.body === undefined ? undefined : isRaw ? (answer.body as string | Buffer) : JSON.stringify(answer.body));
      };
      if (answer.delayMs) setTimeout(send, answer.delayMs);
      else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return fake;
}

/**
 * An OAuth 2 consent screen that always allows: answers 302 to redirect_uri with
 * `code` and the client's `state`, remembering the request for the token route.
 */
export function consentAllows(code = 'code-123'): Handler {
  return (request, fake) => {
    fake.state.authorize = request.query;
    const target = new URL(request.query.redirect_uri);
    target.searchParams.set('code', code);
    if (request.query.state) target.searchParams.set('state', request.query.state);
    return { status: 302, headers: { location: target.toString() } };
  };
}

/**
 * Whether a token request redeems what `consentAllows(code)` handed out: that
 * code, for the same redirect_uri, and (with PKCE) the verifier of its challenge.
 */
export function redeemsConsent(fake: NetworkFake, params: Record<string, string | undefined>, code: string): boolean {
  const pending = fake.state.authorize;
  const challenge = params.code_verifier ? crypto.createHash('sha256').update(params.code_verifier).digest('base64url') : undefined;
  return params.code === code && params.redirect_uri === pending?.redirect_uri && challenge === pending?.code_challenge;
}
