/**
 * HTTP to a network's API for adapters, the one way every adapter calls its
 * network: every request goes through the outbound guard, the network's own
 * reading of its answers (`AnswerReader`) and the common rules of
 * `http-failures.ts` turn failures into PublishError of the right class, and the
 * network's own error text is what the user reads. Adapters stay about the
 * network's API.
 */
import type { OutboundBody, OutboundGuard } from '../../lib/outbound.ts';
import { readAtMost } from '../../lib/bounded-body.ts';
import { deadline } from '../../lib/deadline.ts';
import { classifyAnswer, classifyFetchError, type AnswerReader, type NetworkAnswer } from './http-failures.ts';
import { PublishError } from '../errors.ts';

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
  /**
   * Whether sending this request twice cannot publish twice: reads, uploads made
   * before anything is published, creates the network de-duplicates by a key.
   * It decides what a server error means (`classifyAnswer`). By default GET,
   * HEAD, PUT and DELETE are; POST and PATCH are not.
   */
  repeatable?: boolean;
  /** Reads a JSON body where JSON.parse would lose something (TikTok's int64 ids as numbers). */
  parseJson?: (raw: string) => unknown;
}

const DEFAULT_TIMEOUT_MS = 30_000;
/** The most of a network's answer Herald reads: API answers are kilobytes, and one this large is not an answer to parse. */
export const LARGEST_ANSWER_BYTES = 8 * 1024 * 1024;
const ONCE = new Set(['POST', 'PATCH']);

function methodOf(request: NetworkRequest): string {
  return request.method ?? (request.body === undefined && request.json === undefined && !request.form ? 'GET' : 'POST');
}

function isRepeatable(request: NetworkRequest): boolean {
  return request.repeatable ?? !ONCE.has(methodOf(request).toUpperCase());
}

export function withQuery(url: string, query: NetworkRequest['query']): string {
  if (!query) return url;
  const u = new URL(url);
  for (const [k, v] of Object.entries(query)) if (v !== undefined) u.searchParams.set(k, String(v));
  return u.toString();
}

/** Longest part of a body quoted in an error message. */
const DETAIL_LIMIT = 2000;

export class NetworkHttp {
  constructor(
    private readonly outbound: OutboundGuard,
    /** The network's name, as the user reads it in errors. */
    readonly network: string,
    private readonly signal: AbortSignal,
    /** How the network reports its own failures; the common rules apply where it says nothing. */
    private readonly reader?: AnswerReader,
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
      return (await this.outbound.fetch(withQuery(url, request.query), {
        method: methodOf(request),
        headers,
        body,
        signal,
        maxRedirects: 0,
      })) as unknown as Response;
    } catch (err) {
      throw classifyFetchError(err, this.network, isRepeatable(request));
    }
  }

  /**
   * Sends the request and returns the answer of a success, its body parsed when
   * it is JSON. A failure (a non-2xx status, or an error the network puts in a
   * 2xx body) throws, classified.
   */
  async call(url: string, request: NetworkRequest = {}): Promise<NetworkAnswer> {
    const response = await this.send(url, request);
    let read: Awaited<ReturnType<typeof readAtMost>>;
    try {
      read = await readAtMost(response.body as AsyncIterable<Uint8Array> | null, LARGEST_ANSWER_BYTES);
    } catch (err) {
      throw classifyFetchError(err, this.network, isRepeatable(request));
    }
    if (!read.whole) {
      const what = `${this.network} answered ${response.status} with more than ${LARGEST_ANSWER_BYTES / 1024 / 1024} MB`;
      // Taken or not, the answer cannot be read: after a create, the outcome is unknown (a 5xx's too).
      if (isRepeatable(request) || (!response.ok && response.status < 500)) throw new PublishError('retryable', `${what}, which Herald does not read.`);
      throw new PublishError('unknown', `${what}, which Herald does not read, so the outcome is unknown. Check the channel before retrying.`);
    }
    const answer = readAnswer(url, response, read.bytes.toString('utf8'), request.parseJson);
    const verdict = this.reader?.(answer);
    if (!response.ok || verdict) throw classifyAnswer(this.network, answer, verdict ?? {}, isRepeatable(request));
    return answer;
  }

  /** `call`, for a JSON answer: its parsed body (undefined for an empty one). */
  async json<T = any>(url: string, request: NetworkRequest = {}): Promise<T> {
    const answer = await this.call(url, request);
    if (answer.raw === '') return undefined as T;
    if (!answer.isJson) {
      // Taken, but the answer is unreadable: a create may have happened.
      if (isRepeatable(request)) throw new PublishError('retryable', `${this.network} answered ${answer.status} with a body that is not JSON.`);
      throw new PublishError(
        'unknown',
        `${this.network} answered ${answer.status} with a body that is not JSON, so the outcome is unknown. Check the channel before retrying.`,
      );
    }
    return answer.body as T;
  }

  /** The classified failure of a non-2xx answer to a `send` (for answers read by status, like an upload's 308). */
  async failure(url: string, response: Response, request: NetworkRequest): Promise<PublishError> {
    const read = await readAtMost(response.body as AsyncIterable<Uint8Array> | null, LARGEST_ANSWER_BYTES).catch(() => undefined);
    const answer = readAnswer(url, response, read?.bytes.toString('utf8') ?? '', request.parseJson);
    return classifyAnswer(this.network, answer, this.reader?.(answer) ?? {}, isRepeatable(request));
  }
}

function readAnswer(url: string, response: Response, text: string, parseJson: (raw: string) => unknown = JSON.parse): NetworkAnswer {
  const raw = text.trim();
  let body: unknown = raw;
  let isJson = false;
  if (raw !== '') {
    try {
      body = parseJson(raw);
      isJson = true;
    } catch {
      /* kept as text */
    }
  }
  return {
    url,
    status: response.status,
    ok: response.ok,
    headers: response.headers,
    body,
    isJson,
    raw,
    detail: raw.length > DETAIL_LIMIT ? `${raw.slice(0, DETAIL_LIMIT)}…` : raw,
  };
}
