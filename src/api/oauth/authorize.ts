/**
 * GET /oauth/authorize: the consent page of the authorization code flow. It asks
 * the person to sign in first, shows which application asks for what, and on
 * approval (POST, with the session's CSRF token) sends a one-time code to the
 * application's registered redirect URI. A wrong client_id or redirect_uri is
 * shown to the person and never redirected (RFC 6749 4.1.2.1). A client that
 * registered itself (an MCP client, RFC 7591) is named as it registered, and
 * the page says nobody on the team added it.
 */
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import type { Services } from '../../services.ts';
import { type AuthorizationCheck, type AuthorizationRequest, OAuthError } from '../../domain/oauth.ts';
import { csrfTokenOf } from '../../domain/people.ts';
import { SCOPES } from '../../domain/scopes.ts';
import { currentUser, sameToken } from '../app/session.ts';
import { oauthPages } from '../../contract/routes/visitors.ts';
import { installFormParser } from '../form-body.ts';
import { serve } from '../serve.ts';
import { loginUrl } from './login.ts';
import { escapeHtml, hiddenFields, sendPage, withQuery } from './pages.ts';

/** The parameters of an authorization request, carried from the page to the form post. */
const PARAMS = ['response_type', 'client_id', 'redirect_uri', 'scope', 'state', 'code_challenge', 'code_challenge_method', 'resource'] as const;

function pick(source: unknown): Record<string, string | undefined> {
  const input = (source ?? {}) as Record<string, unknown>;
  return Object.fromEntries(PARAMS.map((p) => [p, typeof input[p] === 'string' ? (input[p] as string) : undefined]));
}

/** Answers a check that did not pass; undefined when it passed. */
function answerFailure(reply: FastifyReply, check: AuthorizationCheck): FastifyReply | undefined {
  if (check.kind === 'refuse')
    return sendPage(reply, 400, 'Authorization failed', `<h1>This authorization request is not valid</h1><p>${escapeHtml(check.message)}</p>`);
  if (check.kind === 'redirect_error') {
    return reply.redirect(withQuery(check.redirectUri, { error: check.error, error_description: check.description, state: check.state }), 302);
  }
  return undefined;
}

/** A self-registered client approved in another account cannot be approved here (it belongs to that account). */
function takenElsewhere(reply: FastifyReply, ask: AuthorizationRequest, accountId: string): FastifyReply | undefined {
  if (!ask.agent?.accountId || ask.agent.accountId === accountId) return undefined;
  return sendPage(
    reply,
    403,
    'Authorization failed',
    `<h1>This agent is connected to another Herald account</h1><p>${escapeHtml(ask.app.name)} was approved in another account of this server. ` +
      'Remove the connector from your assistant and add it again to connect it to this account.</p>',
  );
}

/** What the consent page says about a client that registered itself, and about the resource its tokens are for. */
function aboutClient(ask: AuthorizationRequest, mcpResource: string): string {
  const where =
    ask.resource === null
      ? ''
      : ask.resource === mcpResource
        ? `<p>It will reach Herald through its MCP server (<code>${escapeHtml(ask.resource)}</code>) and nowhere else.</p>`
        : `<p>It will reach Herald through <code>${escapeHtml(ask.resource)}</code> only.</p>`;
  if (!ask.agent) return where;
  const from = ask.agent.clientUri ? ` It says it comes from <code>${escapeHtml(ask.agent.clientUri)}</code>.` : '';
  return (
    `<p><strong>${escapeHtml(ask.app.name)}</strong> is the name this agent gave itself when it registered itself with Herald ` +
    `on ${escapeHtml(ask.agent.registeredAt.slice(0, 10))}: nobody on your team added it.${from} ` +
    'Approve only if you are connecting it from your assistant yourself, now.</p>' +
    where
  );
}

export function authorizePages(services: Services): FastifyPluginAsync {
  const { oauth, people } = services;
  return async (app) => {
    installFormParser(app);

    serve(app, oauthPages.routes.consentPage, {
      hide: true,
      handler: async (request, reply) => {
        const params = pick(request.query);
        const check = await oauth.checkAuthorization(params);
        const failed = answerFailure(reply, check);
        if (failed || check.kind !== 'ok') return failed;
        const signedIn = await currentUser(request, people);
        if (!signedIn) return reply.redirect(loginUrl(request.url), 302);
        const { request: ask } = check;
        const taken = takenElsewhere(reply, ask, signedIn.user.account_id);
        if (taken) return taken;
        const account = await services.accounts.describe(signedIn.user.account_id);
        const wants =
          ask.scopes === null
            ? '<li>full access to the account: posts, media, channels, customers and settings reachable through the API</li>'
            : ask.scopes.map((s) => `<li><code>${s}</code>: ${escapeHtml(SCOPES[s])}</li>`).join('');
        return sendPage(
          reply,
          200,
          `Authorize ${ask.app.name}`,
          `<h1>Authorize ${escapeHtml(ask.app.name)}?</h1>\n` +
            `<p><strong>${escapeHtml(ask.app.name)}</strong> asks to act for the Herald account <strong>${escapeHtml(account.name)}</strong> ` +
            `(you are signed in as ${escapeHtml(signedIn.user.email)}). It will be able to:</p>\n` +
            `<ul>${wants}</ul>${aboutClient(ask, services.oauth.resources?.mcp ?? '')}` +
            `<p>After approving you go to <code>${escapeHtml(new URL(ask.redirectUri).origin)}</code>. ` +
            'You can revoke this access at any time in Settings.</p>\n' +
            `<form method="post" action="/oauth/authorize">${hiddenFields({ ...params, csrf: csrfTokenOf(signedIn.token) })}\n` +
            '<button type="submit" name="decision" value="approve">Approve</button><button type="submit" name="decision" value="deny">Deny</button></form>',
        );
      },
    });

    serve(app, oauthPages.routes.consent, {
      hide: true,
      handler: async (request, reply) => {
        const form = (request.body ?? {}) as Record<string, unknown>;
        const params = pick(form);
        const check = await oauth.checkAuthorization(params);
        const failed = answerFailure(reply, check);
        if (failed || check.kind !== 'ok') return failed;
        const signedIn = await currentUser(request, people);
        if (!signedIn) return reply.redirect(loginUrl(withQuery('http://x/oauth/authorize', params).slice('http://x'.length)), 303);
        if (!sameToken(typeof form.csrf === 'string' ? form.csrf : undefined, csrfTokenOf(signedIn.token))) {
          return sendPage(
            reply,
            403,
            'Authorization failed',
            '<h1>This form was not sent from Herald</h1><p>The security token is missing or wrong. Go back and try again.</p>',
          );
        }
        const { request: ask } = check;
        const taken = takenElsewhere(reply, ask, signedIn.user.account_id);
        if (taken) return taken;
        if (form.decision !== 'approve') {
          return reply.redirect(
            withQuery(ask.redirectUri, { error: 'access_denied', error_description: 'The user denied the request', state: ask.state }),
            303,
          );
        }
        let code: string;
        try {
          code = await oauth.issueCode(ask, signedIn.user);
        } catch (err) {
          // Another account approved the same agent a moment ago.
          if (!(err instanceof OAuthError)) throw err;
          return sendPage(reply, 403, 'Authorization failed', `<h1>This agent cannot be approved here</h1><p>${escapeHtml(err.description)}</p>`);
        }
        return reply.redirect(withQuery(ask.redirectUri, { code, state: ask.state }), 303);
      },
    });
  };
}
