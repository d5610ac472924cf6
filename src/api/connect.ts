/**
 * Where a network sends the user back after they granted access, and the page
 * where they pick which of their accounts (page, board, channel) to connect.
 * These are browser pages (HTML); with `Accept: application/json` they answer
 * JSON, for the web UI and tests.
 */
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Services } from '../services.ts';
import { ApiError } from '../domain/errors.ts';
import type { Finished } from '../domain/connections.ts';
import { errorBox, escapeHtml, hiddenFields, sendPage } from './oauth/pages.ts';
import { sendError } from './errors.ts';
import { installFormParser } from './form-body.ts';
import { cookies, SESSION_COOKIE } from './app/session.ts';
import { findProvider } from '../providers/index.ts';
import { HANDED_OVER, needsHandover, sendHandoverPage } from './fragment-handover.ts';

function wantsJson(request: FastifyRequest): boolean {
  return (request.headers.accept ?? '').includes('application/json');
}

function answer(request: FastifyRequest, reply: FastifyReply, result: Finished) {
  if (wantsJson(request)) {
    return result.kind === 'connected'
      ? reply.send({ connected: true, integration: { id: result.channelId, name: result.name, identifier: result.provider.identifier } })
      : reply.send({ connected: false, state: result.state, choices: result.choices });
  }
  if (result.kind === 'connected') {
    // Started from the web application (a session cookie came back with the person): back to its channels page.
    if (cookies(request)[SESSION_COOKIE]) return reply.redirect(`/channels?connected=${encodeURIComponent(result.channelId)}`, 303);
    return sendPage(
      reply,
      200,
      `${result.provider.name} connected`,
      `<h1>${escapeHtml(result.provider.name)} connected</h1>` +
        `<p>The channel <strong>${escapeHtml(result.name)}</strong> is connected. You can close this window.</p>`,
    );
  }
  const items = result.choices
    .map(
      (c) =>
        `<li><form method="post" action="/connect/${escapeHtml(result.provider.identifier)}/choose">` +
        `${hiddenFields({ state: result.state, index: String(c.index) })}` +
        `<button type="submit">${escapeHtml(c.name)}</button></form></li>`,
    )
    .join('');
  return sendPage(
    reply,
    200,
    `Pick a ${result.provider.name} account`,
    `<h1>Pick a ${escapeHtml(result.provider.name)} account</h1><p>Which one should Herald publish to?</p><ul>${items}</ul>`,
  );
}

function failure(request: FastifyRequest, reply: FastifyReply, err: unknown) {
  if (!(err instanceof ApiError)) throw err;
  if (wantsJson(request)) return sendError(reply, err);
  return sendPage(reply, err.statusCode, 'The channel was not connected', `<h1>The channel was not connected</h1>${errorBox(err.message)}`);
}

export function connectRoutes(services: Services): FastifyPluginAsyncZod {
  const { connections } = services;
  const provider = z.object({ provider: z.string().min(1).max(50) });
  return async (app) => {
    installFormParser(app);
    app.get(
      '/connect/:provider/callback',
      { schema: { hide: true, params: provider, querystring: z.record(z.string(), z.string().max(4096)) } },
      async (request, reply) => {
        const network = findProvider(request.params.provider);
        if (needsHandover(request.query, network?.oauth?.fragmentParams, wantsJson(request))) return sendHandoverPage(reply, network!.name);
        const { [HANDED_OVER]: _handedOver, ...query } = request.query;
        try {
          return answer(request, reply, await connections.finish(request.params.provider, query));
        } catch (err) {
          return failure(request, reply, err);
        }
      },
    );

    app.post('/connect/:provider/choose', {
      schema: { hide: true, params: provider, body: z.object({ state: z.string().max(200), index: z.coerce.number().int().min(0).max(1000) }) },
      handler: async (request, reply) => {
        try {
          return answer(request, reply, await connections.choose(request.params.provider, request.body.state, request.body.index));
        } catch (err) {
          return failure(request, reply, err);
        }
      },
    });
  };
}
