/**
 * The web application (web/, built into config.webDir): its hashed assets
 * under /assets, and its page for every other GET path that is not Herald's
 * own (the application routes in the browser). Without a build, / says how to
 * make one and where the API is.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { FastifyInstance, FastifyReply } from 'fastify';
import fastifyStatic from '@fastify/static';

/** Paths that belong to the server, never to the web application's router. */
const SERVER_PATHS = /^\/(api|uploads|s|connect|oauth|assets)(\/|$)/;

/**
 * The page may load only its own scripts; media may come from any host (the upload
 * host may be an object store's address); nothing may frame it.
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob: http: https:",
  "media-src 'self' blob: http: https:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
].join('; ');

const NOT_BUILT = `<!doctype html><meta charset="utf-8"><title>Herald</title><h1>Herald is running</h1>
<p>The web application is not built yet: run <code>npm run build:web</code> (npm install does it), then reload.</p>
<p>The API is at <code>/api/public/v1</code>; its documentation is at <a href="/api/docs">/api/docs</a>.</p>`;

export async function registerWebApp(app: FastifyInstance, webDir: string): Promise<void> {
  const assets = path.join(webDir, 'assets');
  if (fs.existsSync(assets)) {
    await app.register(fastifyStatic, {
      root: assets,
      prefix: '/assets/',
      decorateReply: false,
      index: false,
      // File names carry a hash of their content: a name never changes meaning.
      immutable: true,
      maxAge: '365d',
    });
  }

  const sendPage = (reply: FastifyReply) => {
    let html: string;
    try {
      html = fs.readFileSync(path.join(webDir, 'index.html'), 'utf8');
    } catch {
      html = NOT_BUILT;
    }
    return reply
      .type('text/html; charset=utf-8')
      .header('cache-control', 'no-cache')
      .header('content-security-policy', CONTENT_SECURITY_POLICY)
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'same-origin')
      .send(html);
  };

  app.get('/', { schema: { hide: true } }, async (_request, reply) => sendPage(reply));
  app.get('/*', { schema: { hide: true } }, async (request, reply) => {
    const pathname = request.url.split('?')[0];
    // Server paths that matched no route, and file names (favicon.ico, robots.txt), are not pages.
    if (SERVER_PATHS.test(pathname) || /\.[a-z0-9]{1,8}$/i.test(pathname)) return reply.callNotFound();
    return sendPage(reply);
  });
}
