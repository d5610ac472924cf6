/**
 * Every non-2xx answer is JSON of one shape (existing SDKs parse every body):
 * { statusCode, error, message, msg, code, errors: [{ path, message }] }.
 * `msg` repeats `message` for older clients that display it.
 */
import http from 'node:http';
import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { ApiError, type FieldProblem } from '../domain/errors.ts';
import { ERROR_CODES, type ErrorCode } from '../domain/error-codes.ts';
import { isStoreUnavailable, STORE_RETRY_AFTER_SECONDS } from '../db/unavailable.ts';
import { DISK_FULL_RETRY_AFTER_SECONDS, isDiskFull } from '../lib/disk-space.ts';

/**
 * The body of an error answer; its status is the code's in the catalogue, except where the
 * framework decided it (Fastify's own 4xx, say 414 for a path segment too long).
 */
export function errorBody(code: ErrorCode, message: string, errors: FieldProblem[] = [], statusCode: number = ERROR_CODES[code].status) {
  return { statusCode, error: http.STATUS_CODES[statusCode] ?? 'Error', message, msg: message, code, errors };
}

export function sendError(reply: FastifyReply, err: ApiError): FastifyReply {
  return reply
    .code(err.statusCode)
    .headers(err.headers)
    .send(errorBody(err.code, err.message, err.errors));
}

/** The code of a failed schema validation, by the part of the request that failed it. */
const VALIDATION_CODES: Record<string, ErrorCode> = {
  body: 'invalid_body',
  querystring: 'invalid_query',
  params: 'invalid_params',
  headers: 'invalid_headers',
};

/** Fastify's own 4xx errors, by code: the name we give them and the part of the request at fault. */
const FASTIFY_CODES: Record<string, { code: ErrorCode; path: string; rule: string }> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: {
    code: 'unsupported_content_type',
    path: 'headers.content-type',
    rule: 'must be application/json (multipart/form-data for uploads)',
  },
  FST_ERR_CTP_BODY_TOO_LARGE: { code: 'body_too_large', path: 'body', rule: 'is larger than this server accepts' },
  FST_ERR_CTP_EMPTY_JSON_BODY: { code: 'invalid_json', path: 'body', rule: 'must be valid JSON' },
  FST_ERR_CTP_INVALID_JSON_BODY: { code: 'invalid_json', path: 'body', rule: 'must be valid JSON' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { code: 'invalid_content_length', path: 'headers.content-length', rule: 'must match the body' },
  FST_INVALID_MULTIPART_CONTENT_TYPE: { code: 'not_multipart', path: 'headers.content-type', rule: 'must be multipart/form-data' },
  FST_REQ_FILE_TOO_LARGE: { code: 'file_too_large', path: 'file', rule: 'is larger than this server accepts' },
  FST_PARTS_LIMIT: { code: 'too_many_parts', path: 'body', rule: 'has too many multipart parts' },
  FST_FILES_LIMIT: { code: 'too_many_files', path: 'body', rule: 'must carry one file' },
  FST_FIELDS_LIMIT: { code: 'too_many_fields', path: 'body', rule: 'has too many multipart fields' },
  FST_ERR_BAD_URL: { code: 'invalid_url', path: 'url', rule: 'is not a valid URL (bad percent-encoding)' },
  FST_ERR_MAX_PARAM_LENGTH: { code: 'invalid_url', path: 'url', rule: 'has a path segment that is too long' },
};

/** The contract body for an error Fastify raised itself (bad content type, body too large...). */
export function sendFrameworkError(reply: FastifyReply, err: FastifyError): FastifyReply {
  const status = err.statusCode ?? 400;
  const known = FASTIFY_CODES[err.code];
  const problems = known ? [{ path: known.path, message: known.rule }] : [];
  return reply
    .code(status)
    .send(errorBody(known?.code ?? 'bad_request', known ? `${known.path}: ${known.rule} (${err.message})` : err.message, problems, status));
}

function validationProblems(err: FastifyError & { validation: { instancePath: string; message?: string }[]; validationContext?: string }): FieldProblem[] {
  return err.validation.map((v) => {
    const path = v.instancePath.replace(/^\//, '').replace(/\//g, '.');
    return { path: path || (err.validationContext ?? 'body'), message: v.message ?? 'is invalid' };
  });
}

/** `onDiskFull`: told when a request failed for lack of disk space (readiness reports it). */
export function installErrorHandling(app: FastifyInstance, options: { onDiskFull?: () => void } = {}): void {
  app.setErrorHandler((err: FastifyError, request, reply) => {
    if (err instanceof ApiError) return sendError(reply, err);
    if (hasZodFastifySchemaValidationErrors(err)) {
      const problems = validationProblems(err as never);
      const where = (err as { validationContext?: string }).validationContext ?? 'body';
      const message = problems.map((p) => `${p.path}: ${p.message}`).join('; ');
      return sendError(reply, new ApiError(VALIDATION_CODES[where] ?? 'invalid_body', message, problems));
    }
    const status = err.statusCode ?? 500;
    if (status >= 400 && status < 500) return sendFrameworkError(reply, err);
    if (isDiskFull(err)) {
      // Before the store's check (a full disk is also a store that cannot write): the cause, not a symptom, is what to fix.
      // The upload's temporary file is removed and a failed write rolled back, so the same request works once space is freed.
      options.onDiskFull?.();
      request.log.error({ err: { message: err.message, code: err.code } }, 'no space left on the disk');
      const message = `The server's disk is full; nothing was changed. Try again once space is freed (in ${DISK_FULL_RETRY_AFTER_SECONDS} s or later).`;
      return sendError(reply, new ApiError('storage_full', message, [], { 'Retry-After': String(DISK_FULL_RETRY_AFTER_SECONDS) }));
    }
    if (isStoreUnavailable(err)) {
      // Nothing was changed (a write that failed is rolled back): the client may simply send it again.
      request.log.warn({ err: { message: err.message, code: err.code } }, 'store unavailable');
      const message = `The database is unavailable right now; nothing was changed. Try again in ${STORE_RETRY_AFTER_SECONDS} s.`;
      return sendError(reply, new ApiError('store_unavailable', message, [], { 'Retry-After': String(STORE_RETRY_AFTER_SECONDS) }));
    }
    request.log.error({ err }, 'request failed');
    return sendError(reply, new ApiError('internal_error', 'Something went wrong on our side; the request was not completed.'));
  });

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0].replace(/\/{2,}/g, '/');
    if (path.startsWith('/public/')) {
      // The hint names this server's own address, whatever port or host it runs on.
      const apiUrl = `${request.protocol}://${request.host}/api`;
      const message =
        'Not found. The API lives under /api: ' + `set the API URL to include the /api prefix (here ${apiUrl}), then /public/v1/... is appended to it.`;
      return sendError(reply, new ApiError('missing_api_prefix', message));
    }
    return sendError(reply, new ApiError('route_not_found', `No route ${request.method} ${path}`));
  });
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The JSON body as sent, before validation transformed it (fingerprinted for Idempotency-Key). */
    rawJson?: unknown;
  }
}

/** JSON bodies; an empty body is "no body" (clients send Content-Type: application/json on GET and DELETE). */
export function installJsonParser(app: FastifyInstance): void {
  app.removeContentTypeParser('application/json');
  // Every body route takes JSON (or multipart for uploads); plain text gets 415 instead of a confusing type error.
  app.removeContentTypeParser('text/plain');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = (body as string).trim();
    if (text === '') return done(null, undefined);
    try {
      request.rawJson = JSON.parse(text);
      done(null, request.rawJson);
    } catch (err) {
      done(new ApiError('invalid_json', `body: is not valid JSON (${(err as Error).message})`, [{ path: 'body', message: 'must be valid JSON' }]), undefined);
    }
  });
}

/** Deeper JSON than any client sends; recursive code (JSON.stringify, validation) must never overflow the stack. */
export const MAX_INPUT_DEPTH = 64;

/**
 * The first value in `input` no store can take safely: a string with U+0000
 * (PostgreSQL text refuses it) or nesting deeper than MAX_INPUT_DEPTH. Walks
 * without recursion, so the walk itself cannot overflow.
 */
export function unsafeInput(input: unknown): FieldProblem | undefined {
  const pending: [unknown, string, number][] = [[input, '', 0]];
  while (pending.length > 0) {
    const [value, path, depth] = pending.pop()!;
    if (typeof value === 'string') {
      if (value.includes('\u0000')) return { path, message: 'must not contain the NUL character (U+0000)' };
    } else if (value !== null && typeof value === 'object') {
      if (depth >= MAX_INPUT_DEPTH) return { path, message: `nests deeper than ${MAX_INPUT_DEPTH} levels` };
      for (const [key, child] of Object.entries(value)) {
        const at = path ? `${path}.${key}` : key;
        if (key.includes('\u0000')) return { path: at, message: 'names a field with the NUL character (U+0000)' };
        pending.push([child, at, depth + 1]);
      }
    }
  }
  return undefined;
}

/** Rejects unsafe path parameters, query values and JSON bodies with a 400 naming the field, before validation runs. */
export function installInputGuard(app: FastifyInstance): void {
  app.addHook('preValidation', async (request) => {
    const parts = [
      ['params', request.params],
      ['query', request.query],
      ['body', request.body],
    ] as const;
    for (const [where, input] of parts) {
      const problem = unsafeInput(input);
      if (!problem) continue;
      const path = problem.path || where;
      throw new ApiError(`invalid_${where}`, `${path}: ${problem.message}`, [{ path, message: problem.message }]);
    }
  });
}

/** Socket-level failures by Node's error code: status, our code and the rule broken. */
const CLIENT_ERRORS: Record<string, [code: ErrorCode, message: string]> = {
  HPE_HEADER_OVERFLOW: ['headers_too_large', 'headers: are larger than this server accepts'],
  ERR_HTTP_REQUEST_TIMEOUT: ['request_timeout', 'the request took too long to arrive'],
};

/**
 * Requests too broken for Fastify to route (headers too large, garbled HTTP)
 * still get the contract's JSON body, then the connection closes.
 */
export function clientErrorHandler(err: Error & { code?: string }, socket: import('node:net').Socket): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const [code, message] = CLIENT_ERRORS[err.code ?? ''] ?? ['bad_request', 'the request is not valid HTTP'];
  const { status } = ERROR_CODES[code];
  const body = JSON.stringify(errorBody(code, message));
  socket.end(
    `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
