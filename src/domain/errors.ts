/**
 * The one error type the domain throws. The HTTP layer turns it into the
 * contract's JSON body; `errors` names each offending field and its rule.
 */
import type { ErrorCode } from './error-codes.ts';

export interface FieldProblem {
  path: string;
  message: string;
}

export class ApiError extends Error {
  constructor(
    readonly statusCode: number,
    readonly code: ErrorCode,
    message: string,
    readonly errors: FieldProblem[] = [],
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

/** 400 for one field that breaks one rule. */
export function invalidField(path: string, message: string, code: ErrorCode = 'invalid_body'): ApiError {
  return new ApiError(400, code, `${path}: ${message}`, [{ path, message }]);
}

/** 400 listing every problem found, so a caller can fix them all at once. */
export function invalidFields(problems: FieldProblem[], code: ErrorCode = 'invalid_body'): ApiError {
  const message = problems.map((p) => (p.path ? `${p.path}: ${p.message}` : p.message)).join('; ');
  return new ApiError(400, code, message, problems);
}

export function notFound(what: string, id: string): ApiError {
  return new ApiError(404, 'not_found', `${what} ${JSON.stringify(id)} does not exist in this account`);
}

export function conflict(code: ErrorCode, message: string): ApiError {
  return new ApiError(409, code, message);
}
