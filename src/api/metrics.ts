/**
 * Metrics in the Prometheus format, never public by default: GET /api/metrics
 * exists only with HERALD_METRICS_TOKEN set and answers only to that bearer
 * token; HERALD_METRICS_PORT serves GET /metrics on a listener of its own
 * (127.0.0.1 unless HERALD_METRICS_HOST says otherwise), which is how workers,
 * which have no HTTP server, are scraped.
 */
import crypto from 'node:crypto';
import http from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { Services } from '../services.ts';
import { ApiError } from '../domain/errors.ts';
import type { Metrics } from '../lib/metrics.ts';

function bearerIs(header: string | undefined, token: string): boolean {
  const given = crypto
    .createHash('sha256')
    .update(/^Bearer (.+)$/i.exec(header ?? '')?.[1] ?? '')
    .digest();
  return crypto.timingSafeEqual(given, crypto.createHash('sha256').update(token).digest());
}

export function registerMetrics(app: FastifyInstance, services: Services): void {
  const { metrics, config } = services;
  app.addHook('onResponse', async (request, reply) => {
    // The route's pattern (/api/public/v1/posts/:id), not the path: ids would make a series per post.
    const route = request.routeOptions.url ?? 'unmatched';
    metrics.requests.observe({ method: request.method, route, status: String(reply.statusCode) }, reply.elapsedTime / 1000);
  });
  const token = config.metricsToken;
  if (!token) return;
  app.get('/api/metrics', { schema: { hide: true } }, async (request, reply) => {
    if (!bearerIs(request.headers.authorization, token)) {
      throw new ApiError('invalid_api_key', 'GET /api/metrics takes the header Authorization: Bearer HERALD_METRICS_TOKEN');
    }
    const { contentType, body } = await metrics.scrape();
    return reply.type(contentType).send(body);
  });
}

/** The metrics listener of HERALD_METRICS_PORT; resolves once it listens. */
export async function serveMetrics(metrics: Metrics, host: string, port: number): Promise<http.Server> {
  const server = http.createServer((request, response) => {
    if (request.method !== 'GET' || request.url?.split('?')[0] !== '/metrics') {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('GET /metrics\n');
      return;
    }
    metrics.scrape().then(
      ({ contentType, body }) => response.writeHead(200, { 'content-type': contentType }).end(body),
      (err: Error) => response.writeHead(503, { 'content-type': 'text/plain' }).end(`metrics unavailable: ${err.message}\n`),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  return server;
}
