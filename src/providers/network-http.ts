/**
 * HTTP to a network's API for adapters: every request goes through the outbound
 * guard, failures become PublishError of the right class, and the network's own
 * error text is what the user reads. Adapters stay about the network's API.
 */
import type { OutboundBody, OutboundGuard } from '../lib/outbound.ts';
import { deadline } from '../lib/deadline.ts';
import { classifyFetchError, classifyStatus, readErrorBody } from './http-failures.ts';
import { PublishError } from './types.ts';

export interface NetworkRequest {
  method?: string;
  headers?: Record<string, string>;
  /** Added to the URL's query string; undefined values are left out. */
  query?: Record<string, string | number | boolean | undefined>;
  /** Sent as JSON. */
  json?: unknown;
  /** Sent as application/x-www-form-urlencoded. */
  form?: Record<string, string | undefined>;
  /** Sent as is (bytes, multipart FormData, a stream). */
  body?: OutboundBody;
  /** Longest wait for this request; the publish's own deadline still applies. */
  timeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 30_000;

/** Finds the human message in the error shapes networks use. */
export function errorMessage(body: unknown): string | undefined {
  if (typeof body === 'string') return body || undefined;
  if (!body || typeof body !== 'object') return undefined;
  const b = body as Record<string, any>;
  const candidates = [
    b.error_description,
    b.error?.message,
    b.error?.error_user_msg,
    b.errors?.[0]?.message,
    b.errors?.[0]?.detail,
    b.detail,
    b.message,
    b.description,
    b.title,
    typeof b.error === 'string' ? b.error : undefined,
  ];
  return candidates.find((c) => typeof c === 'string' && c.length > 0);
}

export function withQuery(url: string, query: NetworkRequest['query']): string {
  if (!query) return url;
  const u = new URL(url);
  for (const [k, v] of Object.entries(query)) if (v !== undefined) u.searchParams.set(k, String(v));
  return u.toString();
}

export class NetworkHttp {
  constructor(
    private readonly outbound: OutboundGuard,
    /** The network's name, as the user reads it in errors. */
    readonly network: string,
    private readonly signal: AbortSignal,
  ) {}

  /** Sends the request; throws only when no answer came (classified). Any status is returned. */
  async send(url: string, request: NetworkRequest = {}): Promise<Response> {
    const headers: Record<string, string> = { 'user-agent': 'Herald/1', ...request.headers };
    let body = request.body;
    if (request.json !== undefined) {
      headers['content-type'] ??= 'application/json';
      body = JSON.stringify(request.json);
    } else if (request.form) {
      headers['content-type'] ??= 'application/x-www-form-urlencoded';
      body = new URLSearchParams(Object.entries(request.form).filter((e): e is [string, string] => e[1] !== undefined)).toString();
    }
    // Not AbortSignal.any(…, AbortSignal.timeout()): on Node 20 the composite holds its
    // sources weakly, so a collected timeout signal never fires. The timer here keeps
    // its controller alive; it covers reading the body too, and aborting after the
    // exchange is over does nothing.
    const { signal } = deadline(request.timeoutMs ?? DEFAULT_TIMEOUT_MS, this.signal);
    try {
      return (await this.outbound.fetch(withQuery(url, request.query), { method: request.method ?? (body === undefined ? 'GET' : 'POST'), headers, body, signal, maxRedirects: 0 })) as unknown as Response;
    } catch (err) {
      throw classifyFetchError(err, this.network);
    }
  }

  /** Sends the request and returns the parsed JSON of a 2xx answer; other statuses throw `failure()`. */
  async json<T = any>(url: string, request: NetworkRequest = {}): Promise<T> {
    const response = await this.send(url, request);
    if (!response.ok) throw await this.failure(response);
    const text = await response.text();
    if (text === '') return undefined as T;
    try {
      return JSON.parse(text) as T;
    } catch {
      // The network took the request but its answer is unreadable: the post may exist.
      throw new PublishError('unknown', `${this.network} answered ${response.status} with a body that is not JSON, so the outcome is unknown. Check the channel before retrying.`);
    }
  }

  /**
   * The failure class of a non-2xx answer: 401 means the token is no longer good;
   * the rest as `classifyStatus` says.
   */
  async failure(response: Response): Promise<PublishError> {
    const { raw, body } = await readErrorBody(response);
    const detail = (errorMessage(body) ?? raw).slice(0, 500);
    if (response.status === 401) return new PublishError('auth', `${this.network} answered 401${detail ? `: ${detail}` : ''}`);
    return classifyStatus(response.status, detail, response.headers.get('retry-after'), this.network);
  }
}
