/**
 * The one error type the domain throws. The HTTP layer turns it into the
 * contract's JSON body; `errors` names each offending field and its rule. Its
 * HTTP status is the code's, from the catalogue (error-codes.ts): a code's
 * status is written there only.
 */
import { ERROR_CODES, type ErrorCode } from './error-codes.ts';

export interface FieldProblem {
  path: string;
  message: string;
}

/** What follows the code: the message, the field problems, extra headers (Retry-After). */
type Details = [message: string, errors?: FieldProblem[], headers?: Record<string, string>];

export class ApiError extends Error {
  /** The code's status in the catalogue. */
  readonly statusCode: number;
  readonly code: ErrorCode;
  readonly errors: FieldProblem[];
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, ...[message, errors = [], headers = {}]: Details) {
    super(message);
    this.statusCode = ERROR_CODES[code].status;
    this.code = code;
    this.errors = errors;
    this.headers = headers;
  }
}

/** One field that breaks one rule (400: every code used so is a 400 in the catalogue). */
export function invalidField(path: string, message: string, code: ErrorCode = 'invalid_body'): ApiError {
  return new ApiError(code, `${path}: ${message}`, [{ path, message }]);
}

/** Every problem found, so a caller can fix them all at once (400, as for invalidField). */
export function invalidFields(problems: FieldProblem[], code: ErrorCode = 'invalid_body'): ApiError {
  const message = problems.map((p) => (p.path ? `${p.path}: ${p.message}` : p.message)).join('; ');
  return new ApiError(code, message, problems);
}

export function notFound(what: string, id: string): ApiError {
  return new ApiError('not_found', `${what} ${JSON.stringify(id)} does not exist in this account`);
}

/** The resource is in a state that forbids this (409: every code used so is a 409 in the catalogue). */
export function conflict(code: ErrorCode, message: string): ApiError {
  return new ApiError(code, message);
}
