/**
 * Herald's MCP endpoint, /api/mcp: the Model Context Protocol over Streamable
 * HTTP, stateless (every POST carries its credential and gets its own server, so
 * any process of a deployment answers any request). Authenticated as the public
 * API is (an API key or an OAuth access token in Authorization) and counted
 * against the same per-key request limit; the tools then apply the scopes.
 */
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import type { Services } from '../../services.ts';
import { authenticate } from '../auth.ts';
import { errorBody, sendError } from '../errors.ts';
import { ApiError } from '../../domain/errors.ts';
import { log } from '../../lib/log.ts';
import { mcpServer } from './server.ts';

export const MCP_PATH = '/api/mcp';

/** The SDK's HTTP transport, loaded on the first call (see loadMcpSdk). */
const loadTransport = () => import('@modelcontextprotocol/sdk/server/streamableHttp.js');

export function mcpRoutes(services: Services): FastifyPluginAsync {
  return async (app) => {
    app.post(MCP_PATH, { schema: { hide: true } }, async (request, reply) => {
      const principal = await authenticate(request, services);
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
