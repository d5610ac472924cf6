/**
 * Turns what came back from a network's HTTP API into the failure classes of
 * PublishError. Shared by every adapter so the rules live in one place.
 */
import { OutboundRefused } from '../../lib/outbound.ts';
import { PublishError, type FailureKind } from '../errors.ts';

/** Errors raised before any byte of the request could have reached the server. */
const NOT_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT']);

function errorCode(err: unknown): string | undefined {
  const e = err as { code?: string; cause?: { code?: string; errors?: { code?: string }[] } };
  return e.cause?.code ?? e.cause?.errors?.[0]?.code ?? e.code;
}

/** Classifies an exception thrown by fetch; after sending, only a request safe to repeat is retried. */
export function classifyFetchError(err: unknown, network: string, repeatable = false): PublishError {
  if (err instanceof PublishError) return err;
  if (err instanceof OutboundRefused) return new PublishError('refused', `${network} address refused: ${err.reason}`);
  const code = errorCode(err);
  if (code && NOT_SENT.has(code)) return new PublishError('retryable', `${network} could not be reached (${code})`);
  const name = (err as Error)?.name;
  const what = name === 'TimeoutError' || name === 'AbortError' ? 'timed out' : `failed (${code ?? (err as Error)?.message ?? 'unknown error'})`;
  if (repeatable) return new PublishError('retryable', `The request to ${network} ${what}.`);
  return new PublishError('unknown', `The request to ${network} ${what} after it was sent, so it may have been published. Check the channel before retrying.`);
}

/** Parses Retry-After (seconds or an HTTP date) into milliseconds. */
export function retryAfterMs(header: string | null, now = Date.now()): number | undefined {
  if (!header) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** A network's answer, as readers and the common rules see it. */
export interface NetworkAnswer {
  /** Where the request went. */
  url: string;
  status: number;
  ok: boolean;
  headers: Headers;
  /** The body parsed when it is JSON, else its text. */
  body: any;
  isJson: boolean;
  /** The body's text. */
  raw: string;
  /** The body's text cut for an error message. */
  detail: string;
}

/**
 * What a network says of one of its answers, read from its own error fields.
 * Anything left out is decided by the common rules (`classifyAnswer`).
 */
export interface Verdict {
  /**
   * The failure class; 'server' means the network failed while handling the
   * request (a 5xx, or its in-body equivalent): whether it took the post is unknown.
   */
  kind?: FailureKind | 'server';
  /** The network's own words, read after "<network> answered <status>". */
  detail?: string;
  /** The network's error code, for adapters that act on one (PublishError.code). */
  code?: string | number;
  retryAfterMs?: number;
}

/**
 * A network's reading of its answers: a Verdict for a failure (also one a 2xx
 * answer carries in its body, as Slack and TikTok do), undefined for a success
 * or to leave a non-2xx answer to the common rules.
 */
export type AnswerReader = (answer: NetworkAnswer) => Verdict | undefined;

/** The failure class a status alone says. */
function statusKind(status: number): FailureKind | 'server' {
  if (status === 401) return 'auth';
  // 429 and 408 refuse the request before handling it.
  if (status === 429 || status === 408) return 'retryable';
  // Every 5xx, 503 with Retry-After too: a network may store the post and then answer one.
  if (status >= 500) return 'server';
  return 'refused';
}

/**
 * The one place that turns a failed answer into a PublishError. A server error
 * (any 5xx, 503 with Retry-After included) after a request that is safe to
 * repeat (a read, an upload before anything is published, a create the network
 * de-duplicates) is retried; after any other request the network may have taken
 * it, so the outcome is unknown and the engine looks the post up instead of
 * sending it twice. A 5xx a network's reading calls "retry" or "refused" is a
 * server error all the same: only a repeatable request is retried after one.
 */
export function classifyAnswer(
  network: string,
  answer: Pick<NetworkAnswer, 'status' | 'headers' | 'body' | 'detail'>,
  verdict: Verdict,
  repeatable: boolean,
): PublishError {
  const detail = (verdict.detail ?? errorMessage(answer.body) ?? answer.detail).slice(0, 500);
  // An error a 2xx answer carries in its body (Slack, TikTok) reads without the status.
  const message = answer.status < 300 ? `${network}: ${detail}` : `${network} answered ${answer.status}${detail ? `: ${detail}` : ''}`;
  const read = verdict.kind ?? statusKind(answer.status);
  // A 5xx says the network failed while handling the request, whatever its body reads as: the request had reached it.
  const kind = answer.status >= 500 && (read === 'retryable' || read === 'refused') ? 'server' : read;
  const wait = verdict.retryAfterMs ?? retryAfterMs(answer.headers.get('retry-after'));
  if (kind === 'server') {
    if (repeatable) return new PublishError('retryable', message, wait, verdict.code);
    return new PublishError(
      'unknown',
      `${message}. The request had reached ${network}, so it may have been published. Check the channel before retrying.`,
      undefined,
      verdict.code,
    );
  }
  return new PublishError(kind, message, kind === 'retryable' ? wait : undefined, verdict.code);
}

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

/** Reads at most `limit` characters of a response body for an error message. */
export async function readDetail(response: { text(): Promise<string> }, limit = 500): Promise<string> {
  const text = (await response.text().catch(() => '')).trim();
  return text.length > limit ? `${text.slice(0, limit)}…` : text;
}
