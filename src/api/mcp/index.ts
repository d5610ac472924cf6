/**
 * Herald's MCP endpoint, /api/mcp: the Model Context Protocol over Streamable
 * HTTP, stateless (every POST carries its credential and gets its own server, so
 * any process of a deployment answers any request). Authenticated as the public
 * API is (an API key or an OAuth access token in Authorization) and counted
 * against the same per-key request limit; the tools then apply the scopes.
 * Refused credentials get a 401 whose WWW-Authenticate points to the protected
 * resource metadata (RFC 9728), from where an MCP client finds Herald's OAuth
 * server and signs in by itself (well-known.ts).
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../../services.ts';
import { authenticate } from '../auth.ts';
import { errorBody, sendError } from '../errors.ts';
import { ApiError } from '../../domain/errors.ts';
import { log } from '../../lib/log.ts';
import { mcpServer } from './server.ts';
import { MCP_PATH, protectedResourceMetadataUrl } from '../oauth/well-known.ts';

export { MCP_PATH };

/** The credential check of /api/mcp; a 401 names where to learn how to get a token (RFC 9728 section 5.1). */
async function authenticateForMcp(request: FastifyRequest, services: Services) {
  try {
    return await authenticate(request, services, 'mcp');
  } catch (err) {
    if (!(err instanceof ApiError) || err.statusCode !== 401) throw err;
    const metadata = protectedResourceMetadataUrl(services.config.publicUrl);
    const challenge =
      err.code === 'missing_api_key' ? `Bearer resource_metadata="${metadata}"` : `Bearer error="invalid_token", resource_metadata="${metadata}"`;
    throw new ApiError(err.code, err.message, err.errors, { ...err.headers, 'www-authenticate': challenge });
  }
}

/** The SDK's HTTP transport, loaded on the first call (see loadMcpSdk). */
const loadTransport = () => import('@modelcontextprotocol/sdk/server/streamableHttp.js');

export function mcpRoutes(services: Services): FastifyPluginAsync {
  return async (app) => {
    app.post(MCP_PATH, { schema: { hide: true } }, async (request, reply) => {
      const principal = await authenticateForMcp(request, services);
      await services.rateLimiter.consumeBatched(`key:${principal.keyId}`, services.config.requestsPerMinute, 60_000, 'This API key');
      const [server, { StreamableHTTPServerTransport }] = await Promise.all([mcpServer(services, principal), loadTransport()]);
      // Answers come as JSON, not as an event stream: every tool answers once, and nothing stays open.
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      reply.hijack();
      reply.raw.on('close', () => {
        void transport.close();
        void server.close();
      });
      try {
        await server.connect(transport);
        await transport.handleRequest(request.raw, reply.raw, request.body);
      } catch (err) {
        log.error({ err }, 'MCP request failed');
        if (!reply.raw.headersSent) {
          reply.raw.writeHead(500, { 'content-type': 'application/json; charset=utf-8' });
          reply.raw.end(JSON.stringify(errorBody('internal_error', 'Something went wrong on our side; the request was not completed.')));
        }
      }
    });

    // Stateless: no event stream to open with GET, no session to end with DELETE (the transport's spec asks for 405).
    const postOnly = async (_request: unknown, reply: FastifyReply) =>
      sendError(reply, new ApiError('method_not_allowed', `${MCP_PATH} takes POST only: it keeps no session and opens no event stream`, [], { allow: 'POST' }));
    app.get(MCP_PATH, { schema: { hide: true } }, postOnly);
    app.delete(MCP_PATH, { schema: { hide: true } }, postOnly);
  };
}
