/** Errors the SDK throws: the server said no (HeraldApiError) or could not be reached (HeraldConnectionError). */
import type { ErrorBody } from './types.ts';

/** A non-2xx answer, thrown when the client was made with `throwOnError: true`. */
export class HeraldApiError extends Error {
  readonly status: number;
  /** The stable error code of the body (`invalid_api_key`, `not_found`...), or `http_<status>`. */
  readonly code: string;
  /** Each offending field and the rule it broke. */
  readonly errors: { path: string; message: string }[];
  /** The parsed body (or its text when it was not JSON). */
  readonly body: unknown;
  /** A hint about the client's configuration, when the answer suggests one. */
  readonly hint?: string;

  constructor(status: number, body: unknown, hint?: string) {
    const error = (typeof body === 'object' && body !== null ? body : {}) as Partial<ErrorBody>;
    const text = typeof body === 'string' ? body.trim().slice(0, 200) : '';
    super(error.message || error.msg || text || `HTTP ${status}`);
    this.name = 'HeraldApiError';
    this.status = status;
    this.code = error.code || `http_${status}`;
    this.errors = Array.isArray(error.errors) ? error.errors : [];
    this.body = body;
    this.hint = hint;
  }
}

/** The request never got an answer: nothing listens there, DNS failed, the connection broke. */
export class HeraldConnectionError extends Error {
  readonly url: string;
  constructor(url: string, cause: unknown) {
    const reason = describeNetworkFailure(cause);
    super(`cannot reach ${url}: ${reason}`, { cause });
    this.name = 'HeraldConnectionError';
    this.url = url;
  }
}

function describeNetworkFailure(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } })?.cause;
  const code = cause?.code ?? (error as { code?: string })?.code;
  if (code === 'ECONNREFUSED') return 'connection refused (is Herald running there?)';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'unknown host';
  if (code === 'ECONNRESET') return 'the connection was reset';
  return cause?.message || (error as Error)?.message || String(error);
}
