/**
 * The web application (web/, built into config.webDir): its hashed assets
 * under /assets, and its page at each of its routes. Without a build, / says
 * how to make one and where the API is.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { FastifyInstance, FastifyReply } from 'fastify';
import fastifyStatic from '@fastify/static';

/**
 * The application's pages (its router in web/src/main.tsx has the same list):
 * named one by one rather than a catch-all, so every other path keeps the
 * server's own answers (a JSON 404, a 414 for an over-long segment).
 */
const PAGES = [
  '/',
  '/signin',
  '/signup',
  '/forgot-password',
  '/reset-password',
  '/compose',
  '/posts/:id',
  '/posts/:id/edit',
  '/channels',
  '/media',
  '/series',
  '/series/:id',
  '/series/:id/edit',
  '/feeds',
  '/import',
  '/attention',
  '/settings',
  '/settings/:section',
];

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
      // The build wrote .br and .gz beside each asset; the browser gets the smallest it accepts.
      preCompressed: true,
      // File names carry a hash of their content: a name never changes meaning.
      immutable: true,
      maxAge: '365d',
    });
  }

  for (const page of PAGES) app.get(page, { schema: { hide: true } }, async (_request, reply) => sendAppPage(reply, webDir));
}

/**
 * The application's page (another route may serve it, as /p/{token} does once its token checks out).
 * Read at each request (a small file): a rebuild while the server runs replaces the hashed asset names it points at.
 */
export function sendAppPage(reply: FastifyReply, webDir: string, referrerPolicy = 'same-origin') {
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
    .header('referrer-policy', referrerPolicy)
    .send(html);
}
