/**
 * Turns what came back from a network's HTTP API into the failure classes of
 * PublishError. Shared by every adapter so the rules live in one place.
 */
import { OutboundRefused } from '../lib/outbound.ts';
import { PublishError } from './types.ts';

/** Errors raised before any byte of the request could have reached the server. */
const NOT_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT']);

function errorCode(err: unknown): string | undefined {
  const e = err as { code?: string; cause?: { code?: string; errors?: { code?: string }[] } };
  return e.cause?.code ?? e.cause?.errors?.[0]?.code ?? e.code;
}

/** Classifies an exception thrown by fetch. */
export function classifyFetchError(err: unknown, network: string): PublishError {
  if (err instanceof PublishError) return err;
  if (err instanceof OutboundRefused) return new PublishError('refused', `${network} address refused: ${err.reason}`);
  const code = errorCode(err);
  if (code && NOT_SENT.has(code)) return new PublishError('retryable', `${network} could not be reached (${code})`);
  const name = (err as Error)?.name;
  const what = name === 'TimeoutError' || name === 'AbortError' ? 'timed out' : `failed (${code ?? (err as Error)?.message ?? 'unknown error'})`;
  return new PublishError(
    'unknown',
    `The request to ${network} ${what} after it was sent, so it may have been published. Check the channel before retrying.`,
  );
}

/** Parses Retry-After (seconds or an HTTP date) into milliseconds. */
export function retryAfterMs(header: string | null, now = Date.now()): number | undefined {
  if (!header) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** Classifies a non-2xx HTTP answer; `detail` is the network's own message. */
export function classifyStatus(status: number, detail: string, retryAfter: string | null, network: string): PublishError {
  const message = `${network} answered ${status}${detail ? `: ${detail}` : ''}`;
  if (status === 429 || status === 503 || status === 502 || status === 504 || status === 408) {
    return new PublishError('retryable', message, retryAfterMs(retryAfter));
  }
  return new PublishError('refused', message);
}

/** Reads at most `limit` characters of a response body for an error message. */
export async function readDetail(response: { text(): Promise<string> }, limit = 500): Promise<string> {
  const text = (await response.text().catch(() => '')).trim();
  return text.length > limit ? `${text.slice(0, limit)}…` : text;
}

/** An error answer's body: the text (cut at `limit`) and, when it is JSON, the parsed value (else the text). */
export async function readErrorBody(response: { text(): Promise<string> }, limit = 2000): Promise<{ raw: string; body: any }> {
  const raw = await readDetail(response, limit);
  try {
    return { raw, body: JSON.parse(raw) };
  } catch {
    return { raw, body: raw };
  }
}
