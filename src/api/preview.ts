/**
 * What a visitor of a preview link reaches without an account: the page
 * /p/{token} (the web application's PreviewLink page, served only while the
 * token is good: an unknown one is a 404 page, an expired or revoked one a 410
 * page, neither shows the post) and its JSON under /api/preview/{token}: the
 * post, a comment, a verdict. Writes are limited per address and per link;
 * reads per address, so guessing tokens is pointless as well as hopeless.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../services.ts';
import { previewRoutes } from '../contract/routes/visitors.ts';
import { sha256 } from '../lib/secrets.ts';
import { serve } from './serve.ts';
import { sendAppPage } from './web-app.ts';

const { routes } = previewRoutes;

const READS_PER_MINUTE = 120;
/** Comments and verdicts one address may send in WRITE_WINDOW_MS (exported for the tests that hold it to the request). */
export const WRITES_PER_ADDRESS = 20;
const WRITES_PER_LINK = 60;
/** A fixed window: the count starts again at each multiple of it. */
export const WRITE_WINDOW_MS = 10 * 60_000;

const GONE_PAGE = {
  unknown: {
    status: 404,
    title: 'This preview link does not exist',
    text: 'Check that the whole address was copied, or ask the team that sent it for a new one.',
  },
  expired: { status: 410, title: 'This preview link has expired', text: 'Preview links work for a limited time. Ask the team that sent it for a new one.' },
  revoked: {
    status: 410,
    title: 'This preview link was withdrawn',
    text: 'The team that sent it no longer shares this post through it. Ask them for a new one.',
  },
} as const;

/** A page of its own (no script, no post), with the status saying why. */
function sendGone(reply: FastifyReply, state: keyof typeof GONE_PAGE) {
  const page = GONE_PAGE[state];
  const html = `<!doctype html><html lang="en"><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex"><title>${page.title} · Herald</title>
<style>body{font-family:system-ui,sans-serif;max-width:36rem;margin:15vh auto;padding:0 1rem;line-height:1.5;color:#1c1d22;background:#f7f7f9}
@media (prefers-color-scheme: dark){body{color:#eceef3;background:#15161a}}h1{font-size:1.4rem}</style>
<main><h1>${page.title}</h1><p>${page.text}</p></main></html>`;
  return reply
    .code(page.status)
    .type('text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'")
    .header('x-robots-tag', 'noindex')
    .header('referrer-policy', 'no-referrer')
    .send(html);
}

export function registerPreviewRoutes(app: FastifyInstance, services: Services): void {
  const { previewLinks, rateLimiter, config } = services;
  const hide = true;

  const countRead = (request: FastifyRequest) =>
    rateLimiter.consumeBatched(`preview-read:${request.ip}`, READS_PER_MINUTE, 60_000, 'Preview pages from your address');
  const countWrite = async (request: FastifyRequest, token: string) => {
    await rateLimiter.consumeSliding(`preview-write:${request.ip}`, WRITES_PER_ADDRESS, WRITE_WINDOW_MS, 'Comments and verdicts from your address');
    await rateLimiter.consumeSliding(
      `preview-link:${sha256(token).slice(0, 32)}`,
      WRITES_PER_LINK,
      WRITE_WINDOW_MS,
      'Comments and verdicts on this preview link',
    );
  };

  // The token is the whole secret: no page or answer of it may be kept by a cache or sent on as a referrer.
  const privately = (reply: FastifyReply) =>
    reply.header('cache-control', 'no-store').header('x-robots-tag', 'noindex').header('referrer-policy', 'no-referrer');

  serve(app, routes.page, {
    hide,
    handler: async (request, reply) => {
      await countRead(request);
      const state = await previewLinks.state(request.params.token);
      if (state !== 'active') return sendGone(reply, state);
      privately(reply);
      return sendAppPage(reply, config.webDir, 'no-referrer');
    },
  });

  serve(app, routes.view, {
    hide,
    handler: async (request, reply) => {
      await countRead(request);
      privately(reply);
      return previewLinks.view(request.params.token);
    },
  });

  serve(app, routes.comment, {
    hide,
    handler: async (request, reply) => {
      await countWrite(request, request.params.token);
      privately(reply);
      return reply.code(201).send(await previewLinks.comment(request.params.token, request.body));
    },
  });

  serve(app, routes.decide, {
    hide,
    handler: async (request, reply) => {
      await countWrite(request, request.params.token);
      privately(reply);
      return reply.code(201).send(await previewLinks.decide(request.params.token, request.body));
    },
  });
}
