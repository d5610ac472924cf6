/**
 * POST /api/oauth/register: dynamic client registration (RFC 7591) for MCP
 * clients. Open to anyone, so limited per address (sliding window) and in how
 * many unused registrations may wait (dynamic-clients.ts). Errors are RFC 7591
 * section 3.2.2 bodies ({ error, error_description }) plus the fields every
 * Herald error has, naming the metadata field at fault.
 */
import http from 'node:http';
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import type { Services } from '../../services.ts';
import { oauthTokenRoutes } from '../../contract/routes/visitors.ts';
import { RegistrationError, REGISTRATION_WINDOW_MS, REGISTRATIONS_PER_ADDRESS } from '../../domain/dynamic-clients.ts';
import { ApiError } from '../../domain/errors.ts';
import { serve } from '../serve.ts';

function sendRegistrationError(reply: FastifyReply, status: number, error: string, description: string, field?: string): FastifyReply {
  return reply
    .code(status)
    .header('cache-control', 'no-store')
    .send({
      error,
      error_description: description,
      statusCode: status,
      message: `${error}: ${description}`,
      msg: `${error}: ${description}`,
      code: error,
      errors: field ? [{ path: field, message: description }] : [],
    });
}

export function registrationRoutes(services: Services): FastifyPluginAsync {
  const { oauth, rateLimiter } = services;
  return async (app) => {
    app.setErrorHandler((err, _request, reply) => {
      if (err instanceof RegistrationError) return sendRegistrationError(reply, err.status, err.error, err.description, err.field);
      if (err instanceof ApiError) {
        reply.headers(err.headers);
        // The limiter's 429 keeps its own name; a body Herald could not read is bad client metadata.
        const name = err.code === 'rate_limited' || err.statusCode >= 500 ? err.code : 'invalid_client_metadata';
        return sendRegistrationError(reply, err.statusCode, name, err.message);
      }
      // Unparseable or oversized bodies still answer in RFC 7591's terms.
      const status = (err as { statusCode?: number }).statusCode ?? 500;
      if (status >= 400 && status < 500)
        return sendRegistrationError(
          reply,
          status,
          'invalid_client_metadata',
          `the body must be a JSON object of client metadata (${http.STATUS_CODES[status]})`,
        );
      throw err;
    });

    serve(app, oauthTokenRoutes.routes.register, {
      hide: true,
      handler: async (request, reply) => {
        await rateLimiter.consumeSliding(
          `oauth-register:${request.ip}`,
          REGISTRATIONS_PER_ADDRESS,
          REGISTRATION_WINDOW_MS,
          'Client registrations from this address',
        );
        const registered = await oauth.agents.register(request.body);
        return reply.code(201).header('cache-control', 'no-store').send(registered);
      },
    });
  };
}
