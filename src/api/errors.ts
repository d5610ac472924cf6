/**
 * Every non-2xx answer is JSON of one shape (existing SDKs parse every body):
 * { statusCode, error, message, msg, code, errors: [{ path, message }] }.
 * `msg` repeats `message` for older clients that display it.
 */
import http from 'node:http';
import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { ApiError, type FieldProblem } from '../domain/errors.ts';

export function errorBody(statusCode: number, code: string, message: string, errors: FieldProblem[] = []) {
  return { statusCode, error: http.STATUS_CODES[statusCode] ?? 'Error', message, msg: message, code, errors };
}

export function sendError(reply: FastifyReply, err: ApiError): FastifyReply {
  return reply.code(err.statusCode).headers(err.headers).send(errorBody(err.statusCode, err.code, err.message, err.errors));
}

/** Fastify's own 4xx errors, by code, with the name we give them. */
const FASTIFY_CODES: Record<string, string> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'unsupported_content_type',
  FST_ERR_CTP_BODY_TOO_LARGE: 'body_too_large',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'invalid_json',
  FST_ERR_CTP_INVALID_JSON_BODY: 'invalid_json',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'invalid_content_length',
  FST_INVALID_MULTIPART_CONTENT_TYPE: 'not_multipart',
  FST_REQ_FILE_TOO_LARGE: 'file_too_large',
  FST_PARTS_LIMIT: 'too_many_parts',
  FST_FILES_LIMIT: 'too_many_files',
  FST_FIELDS_LIMIT: 'too_many_fields',
};

function validationProblems(err: FastifyError & { validation: { instancePath: string; message?: string }[]; validationContext?: string }): FieldProblem[] {
  return err.validation.map((v) => {
    const path = v.instancePath.replace(/^\//, '').replace(/\//g, '.');
    return { path: path || (err.validationContext ?? 'body'), message: v.message ?? 'is invalid' };
  });
}

export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError, request, reply) => {
    if (err instanceof ApiError) return sendError(reply, err);
    if (hasZodFastifySchemaValidationErrors(err)) {
      const problems = validationProblems(err as never);
      const where = (err as { validationContext?: string }).validationContext ?? 'body';
      const message = problems.map((p) => `${p.path}: ${p.message}`).join('; ');
      return reply.code(400).send(errorBody(400, where === 'body' ? 'invalid_body' : `invalid_${where === 'querystring' ? 'query' : where}`, message, problems));
    }
    const status = err.statusCode ?? 500;
    if (status >= 400 && status < 500) {
      const code = FASTIFY_CODES[err.code] ?? 'bad_request';
      return reply.code(status).send(errorBody(status, code, err.message));
    }
    request.log.error({ err }, 'request failed');
    return reply.code(500).send(errorBody(500, 'internal_error', 'Something went wrong on our side; the request was not completed.'));
  });

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0].replace(/\/{2,}/g, '/');
    if (path.startsWith('/public/')) {
      const message = 'Not found. The API lives under /api: set the API URL to include the /api prefix (e.g. http://host:5000/api), then /public/v1/... is appended to it.';
      return reply.code(404).send(errorBody(404, 'missing_api_prefix', message));
    }
    return reply.code(404).send(errorBody(404, 'route_not_found', `No route ${request.method} ${path}`));
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
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = (body as string).trim();
    if (text === '') return done(null, undefined);
    try {
      request.rawJson = JSON.parse(text);
      done(null, request.rawJson);
    } catch (err) {
      done(new ApiError(400, 'invalid_json', `body: is not valid JSON (${(err as Error).message})`, [{ path: 'body', message: 'must be valid JSON' }]), undefined);
    }
  });
}
