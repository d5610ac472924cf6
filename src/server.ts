/**
 * The HTTP server: the public API under /api/public/v1, its OpenAPI document at
 * /api/docs, the MCP server at /api/mcp, uploaded media under /uploads, short links under /s.
 */
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import multipart from '@fastify/multipart';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { jsonSchemaTransform, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Services } from './services.ts';
import { authenticate, checkScope } from './api/auth.ts';
import { appRoutes } from './api/app/index.ts';
import { authorizePages } from './api/oauth/authorize.ts';
import { loginPages } from './api/oauth/login.ts';
import { tokenRoutes } from './api/oauth/token.ts';
import { registrationRoutes } from './api/oauth/register.ts';
import { discoveryRoutes } from './api/oauth/well-known.ts';
import { clientErrorHandler, installErrorHandling, installInputGuard, installJsonParser, sendError, sendFrameworkError } from './api/errors.ts';
import { ApiError } from './domain/errors.ts';
import { connectRoutes } from './api/connect.ts';
import { registerPublicRoutes } from './api/public-v1/index.ts';
import { mcpRoutes } from './api/mcp/index.ts';
import { followShortLink } from './domain/posts/shortlinks.ts';
import { errorCodeTable } from './domain/error-codes.ts';
import { registerUploads } from './api/uploads.ts';
import { registerWebApp } from './api/web-app.ts';
import { registerPreviewRoutes } from './api/preview.ts';
import { checkResponsesAgainstSchemas } from './api/response-check.ts';
import { capConnectionsPerAddress, IDLE_SOCKET_MS, installBodyDeadline, KEEP_ALIVE_MS, proxyTrust } from './api/slow-clients.ts';
import { registerReadiness } from './api/readiness.ts';
import { registerMetrics } from './api/metrics.ts';
import { log } from './lib/log.ts';

export async function buildServer(
  services: Services,
  options: { logger?: boolean; checkResponses?: (problem: string) => void } = {},
): Promise<FastifyInstance> {
  const { config } = services;
  const app = Fastify({
    // The one logger of the process (src/lib/log.ts): requests, the engine and background work write to it.
    ...(options.logger === false ? { logger: false } : { loggerInstance: log as unknown as FastifyBaseLogger }),
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: config.bodyLimit,
    routerOptions: { ignoreDuplicateSlashes: true, ignoreTrailingSlash: true, maxParamLength: 500 },
    trustProxy: proxyTrust(config.trustProxy),
    connectionTimeout: IDLE_SOCKET_MS,
    keepAliveTimeout: KEEP_ALIVE_MS,
    // Bad percent-encoding and over-long path segments get the contract's JSON error too.
    frameworkErrors: (err, _request, reply) => sendFrameworkError(reply, err),
    clientErrorHandler,
  }).withTypeProvider<ZodTypeProvider>();

  app.setValidatorCompiler(validatorCompiler);
  // Responses are built by our own code from typed rows; the schemas document them (OpenAPI)
  // and the tests hold them to it, so serialisation skips a second validation pass.
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  installJsonParser(app);
  installErrorHandling(app, { onDiskFull: () => services.disk.noteFull() });
  installInputGuard(app);
  installBodyDeadline(app, config.requestTimeoutMs);
  if (options.checkResponses) checkResponsesAgainstSchemas(app, options.checkResponses);
  capConnectionsPerAddress(app.server, config.connectionsPerAddress, config.trustProxy);

  // One line per request; never headers (they carry keys). Only hooked in when the
  // level shows it, so a quieter level costs nothing per request.
  if (options.logger !== false && ['info', 'debug', 'trace'].includes(app.log.level)) {
    app.addHook('onResponse', async (request, reply) => {
      request.log.info({ method: request.method, url: request.url.split('?')[0], status: reply.statusCode, ms: Math.round(reply.elapsedTime) }, 'request');
    });
  }

  await app.register(swagger, {
    openapi: {
      // No angle brackets in the description: the docs page renders it as HTML and would swallow a <placeholder>.
      info: {
        title: 'Herald public API',
        version: '1.0.0',
        description: [
          'Schedule and publish posts to many networks. Authenticate with the header `Authorization: YOUR_API_KEY` (an API key or an OAuth access token).',
          'Every error answer has one shape, `{statusCode, error, message, msg, code, errors: [{path, message}]}`; `code` is one of these:',
          errorCodeTable(),
        ].join('\n\n'),
      },
      // "Try it out" calls the server the page was opened on; the public address is listed for clients elsewhere.
      servers: [
        { url: '/', description: 'this server' },
        { url: config.publicUrl, description: 'the public address (HERALD_PUBLIC_URL)' },
      ],
      components: { securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'Authorization' } } },
      security: [{ apiKey: [] }],
    },
    transform: jsonSchemaTransform,
  });
  await app.register(swaggerUi, { routePrefix: '/api/docs' });
  await app.register(multipart, { limits: { fieldSize: 64 * 1024 } });

  await registerUploads(app, config, services.storage);

  app.get('/s/:code', { schema: { hide: true, params: z.object({ code: z.string().max(64) }) } }, async (request, reply) => {
    // HEAD (link-preview crawlers) reads the target without counting a click.
    const target = await followShortLink(services.store.db, request.params.code, request.method === 'GET');
    if (!target) return sendError(reply, new ApiError('not_found', 'This short link does not exist'));
    return reply.redirect(target, 302);
  });

  await registerWebApp(app, config.webDir);
  // Preview links: the page and its JSON, for visitors without an account.
  registerPreviewRoutes(app, services);

  await app.register(connectRoutes(services));

  app.get('/api/health', { schema: { hide: true } }, async () => ({ status: 'ok' }));
  registerReadiness(app, services);
  registerMetrics(app, services);

  // Web side (session cookie), the OAuth2 authorization server, and its sign-in and consent pages.
  await app.register(appRoutes(services), { prefix: '/api/app' });
  await app.register(tokenRoutes(services), { prefix: '/api/oauth' });
  await app.register(registrationRoutes(services), { prefix: '/api/oauth' });
  await app.register(discoveryRoutes(services), { prefix: '/.well-known' });
  await app.register(loginPages(services));
  await app.register(authorizePages(services));

  await app.register(
    async (api) => {
      api.addHook('onRequest', async (request) => {
        request.principal = await authenticate(request, services);
        checkScope(request, request.principal);
        await services.rateLimiter.consumeBatched(`key:${request.principal.keyId}`, config.requestsPerMinute, 60_000, 'This API key');
      });
      await registerPublicRoutes(api, services);
    },
    { prefix: '/api/public/v1' },
  );

  // The MCP server for AI agents: the same credentials, scopes, limits and domain services as the public API.
  await app.register(mcpRoutes(services));

  return app;
}
