/**
 * POST /api/oauth/token (authorization_code and refresh_token grants) and
 * POST /api/oauth/revoke (RFC 7009). Both take form or JSON bodies and client
 * credentials in the body or in HTTP Basic authentication; errors are
 * RFC 6749 section 5.2 bodies ({ error, error_description }) plus the fields
 * every Herald error has.
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../../services.ts';
import { OAuthError } from '../../domain/oauth.ts';
import { oauthTokenRoutes } from '../../contract/routes/visitors.ts';
import { installFormParser } from '../form-body.ts';
import { serve } from '../serve.ts';

function sendOAuthError(reply: FastifyReply, err: OAuthError): FastifyReply {
  if (err.status === 401) reply.header('www-authenticate', 'Basic realm="herald"');
  return reply
    .code(err.status)
    .header('cache-control', 'no-store')
    .send({
      error: err.error,
      error_description: err.description,
      statusCode: err.status,
      message: `${err.error}: ${err.description}`,
      msg: `${err.error}: ${err.description}`,
      code: err.error,
      errors: [],
    });
}

/** Body fields as strings (a field sent twice or as a non-string is refused). */
function fields(request: FastifyRequest): Record<string, string | undefined> {
  const body = request.body;
  if (body === undefined || body === null) return {};
  if (typeof body !== 'object' || Array.isArray(body)) throw new OAuthError('invalid_request', 'the body must be a form or a JSON object');
  const out: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(body)) {
    if (v === undefined || v === null || v === '') continue;
    if (typeof v !== 'string') throw new OAuthError('invalid_request', `${k} must be a string`);
    out[k] = v;
  }
  return out;
}

/** RFC 6749 2.3.1 percent-encodes both parts before Basic encoding them; bad encoding is the client's error. */
function basicPart(encoded: string): string {
  try {
    return decodeURIComponent(encoded);
  } catch {
    throw new OAuthError('invalid_client', 'the Basic credentials are not valid percent-encoding (client_id and client_secret are form-encoded)');
  }
}

/** client_id and client_secret from HTTP Basic (RFC 6749 2.3.1) or the body; both ways at once is an error. */
function clientCredentials(request: FastifyRequest, body: Record<string, string | undefined>): { clientId?: string; clientSecret?: string } {
  const header = request.headers.authorization;
  if (header && /^Basic\s+/i.test(header)) {
    if (body.client_secret !== undefined)
      throw new OAuthError('invalid_request', 'send the client credentials either in Authorization: Basic or in the body, not both');
    const decoded = Buffer.from(header.replace(/^Basic\s+/i, ''), 'base64').toString('utf8');
    const at = decoded.indexOf(':');
    if (at < 0) throw new OAuthError('invalid_client', 'the Basic credentials must be client_id:client_secret');
    const clientId = basicPart(decoded.slice(0, at));
    if (body.client_id !== undefined && body.client_id !== clientId)
      throw new OAuthError('invalid_request', 'client_id differs between the body and the Authorization header');
    return { clientId, clientSecret: basicPart(decoded.slice(at + 1)) };
  }
  return { clientId: body.client_id, clientSecret: body.client_secret };
}

export function tokenRoutes(services: Services): FastifyPluginAsync {
  const { oauth } = services;
  return async (app) => {
    installFormParser(app);
    app.setErrorHandler((err, _request, reply) => {
      if (err instanceof OAuthError) return sendOAuthError(reply, err);
      // Unparseable bodies and the like still answer in OAuth's terms.
      const status = (err as { statusCode?: number }).statusCode ?? 500;
      if (status >= 400 && status < 500) return sendOAuthError(reply, new OAuthError('invalid_request', (err as Error).message, status));
      throw err;
    });

    serve(app, oauthTokenRoutes.routes.token, {
      hide: true,
      handler: async (request, reply) => {
        const body = fields(request);
        const client = clientCredentials(request, body);
        let answer;
        switch (body.grant_type) {
          case 'authorization_code':
            answer = await oauth.exchangeCode({
              code: body.code,
              codeVerifier: body.code_verifier,
              redirectUri: body.redirect_uri,
              resource: body.resource,
              ...client,
            });
            break;
          case 'refresh_token':
            answer = await oauth.refresh({ refreshToken: body.refresh_token, scope: body.scope, resource: body.resource, ...client });
            break;
          case undefined:
            throw new OAuthError('invalid_request', 'grant_type is required');
          default:
            throw new OAuthError('unsupported_grant_type', `grant_type "${body.grant_type}" is not supported; use authorization_code or refresh_token`);
        }
        return reply.header('cache-control', 'no-store').header('pragma', 'no-cache').send(answer);
      },
    });

    serve(app, oauthTokenRoutes.routes.revoke, {
      hide: true,
      handler: async (request, reply) => {
        const body = fields(request);
        await oauth.revokeByClient({ token: body.token, ...clientCredentials(request, body) });
        return reply.header('cache-control', 'no-store').send({ revoked: true });
      },
    });
  };
}
