/**
 * Single sign-on with OpenID Connect (HERALD_OIDC_*): the authorization code
 * flow with PKCE, state and nonce, done with openid-client, which also checks
 * the ID token (signature, issuer, audience, expiry). The sign-in under way
 * travels sealed in a short-lived cookie of the browser that started it. Who
 * gets in is decided by src/domain/sso.ts; the session is made exactly as a
 * password sign-in makes it. A refusal goes back to the sign-in page with its
 * reason, which the page explains.
 */
import type { FastifyBaseLogger, FastifyReply } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import * as client from 'openid-client';
import type { OidcConfig } from '../../config.ts';
import { appRoutes } from '../../contract/routes/app.ts';
import { MAX_NEXT } from '../../contract/routes/visitors.ts';
import { ApiError, invalidField } from '../../domain/errors.ts';
import { requirePermission } from '../../domain/people.ts';
import { SsoRefused, type Refusal, type SingleSignOn } from '../../domain/sso.ts';
import type { Services } from '../../services.ts';
import { safeNext } from '../oauth/login.ts';
import { serve } from '../serve.ts';
import { cookies, setSessionCookies } from './session.ts';

const { routes, prefix } = appRoutes;
/** The address of the start, and what the flow's cookie is limited to. */
const START_PATH = `${prefix}${routes.oidcStart.path}`;
const FLOW_PATH = START_PATH.replace(/\/start$/, '');

const FLOW_COOKIE = 'herald_oidc';
/** Long enough to sign in at the provider (and maybe set up a second factor), short enough that a left-over cookie is useless. */
const FLOW_TTL_MS = 15 * 60_000;

/** Why the sign-in page is shown again: a refusal of sso.ts, or the flow itself failing. */
export type SsoProblem = Refusal | 'expired' | 'failed' | 'unavailable' | 'denied';

/** The provider's metadata, read once (and again after a failure, so a provider down at start does not stay unusable). */
function providerMetadata(oidc: OidcConfig, timeoutMs: number) {
  let discovered: Promise<client.Configuration> | undefined;
  return () => {
    discovered ??= client
      .discovery(new URL(oidc.issuer), oidc.clientId, undefined, client.ClientSecretBasic(oidc.clientSecret), {
        // A provider on plain http (a Keycloak on the local network) is the operator's choice, made by its issuer's address.
        execute: oidc.issuer.startsWith('http:') ? [client.allowInsecureRequests] : [],
        timeout: Math.ceil(timeoutMs / 1000),
      })
      .catch((err) => {
        discovered = undefined;
        throw err;
      });
    return discovered;
  };
}

function flowCookie(value: string, maxAgeSeconds: number, secure: boolean): string {
  return [`${FLOW_COOKIE}=${value}`, `Path=${FLOW_PATH}`, `Max-Age=${maxAgeSeconds}`, 'SameSite=Lax', 'HttpOnly'].concat(secure ? ['Secure'] : []).join('; ');
}

/**
 * Whether the provider vouches for the e-mail address. Some providers send the
 * flag as a string. Microsoft Entra never sends email_verified for work
 * accounts; its optional claim xms_edov says the same (the address's domain is
 * one the tenant proved it owns), and counts only where email_verified is absent.
 */
function emailVerified(claims: Record<string, unknown>): boolean {
  const flag = claims.email_verified ?? claims.xms_edov;
  return flag === true || flag === 'true' || flag === 1 || flag === '1';
}

/** The claims of the ID token, completed from the UserInfo endpoint when the provider keeps the e-mail there. */
async function personClaims(configuration: client.Configuration, tokens: Awaited<ReturnType<typeof client.authorizationCodeGrant>>) {
  const idToken = tokens.claims();
  if (!idToken) throw new Error('the provider sent no ID token');
  let claims: Record<string, unknown> = idToken;
  if (idToken.email === undefined || (idToken.email_verified === undefined && idToken.xms_edov === undefined)) {
    claims = { ...(await client.fetchUserInfo(configuration, tokens.access_token, idToken.sub)), ...idToken };
  }
  return {
    issuer: idToken.iss,
    subject: idToken.sub,
    email: typeof claims.email === 'string' ? claims.email : undefined,
    emailVerified: emailVerified(claims),
    name: typeof claims.name === 'string' ? claims.name : undefined,
  };
}

function refusal(err: unknown, log: FastifyBaseLogger): SsoProblem {
  if (err instanceof SsoRefused) return err.reason;
  if (err instanceof client.AuthorizationResponseError) return 'denied';
  // What the provider or its token got wrong is for the operator's log (openid-client's messages carry no secrets).
  const code = (err as { code?: unknown }).code;
  log.warn({ err: err instanceof Error ? { name: err.name, message: err.message, code } : String(err) }, 'single sign-on failed');
  // fetch() fails with a TypeError when the provider cannot be reached; a timeout is an AbortSignal's TimeoutError.
  return err instanceof TypeError || (err instanceof Error && err.name === 'TimeoutError') ? 'unavailable' : 'failed';
}

/** The `next` of the start's query, when it is one (safeNext checks it again when followed). */
function nextPath(query: unknown): string | undefined {
  const next = (query as { next?: unknown } | undefined)?.next;
  return typeof next === 'string' && next.length <= MAX_NEXT ? next : undefined;
}

function notConfigured(): ApiError {
  return new ApiError('route_not_found', 'Single sign-on is not configured on this server (HERALD_OIDC_ISSUER and its client)');
}

export function oidcRoutes(services: Services): FastifyPluginAsyncZod {
  const { config, people } = services;
  const sso: SingleSignOn = services.sso;
  const oidc = config.oidc;
  const secure = config.publicUrl.startsWith('https:');
  const redirectUri = `${config.publicUrl}${prefix}${routes.oidcCallback.path}`;
  const metadata = oidc ? providerMetadata(oidc, config.fetchTimeoutMs) : undefined;

  /** Back to the sign-in page, which says why. */
  const backToSignIn = (reply: FastifyReply, problem: SsoProblem) => reply.redirect(`/signin?sso_error=${problem}`, 303);

  return async (app) => {
    const hide = true;

    serve(app, routes.signInMethods, {
      hide,
      handler: async () => ({ password: true, sso: oidc ? { name: oidc.name, startUrl: START_PATH } : null }),
    });

    serve(app, routes.oidcStart, {
      hide,
      handler: async (request, reply) => {
        if (!metadata) throw notConfigured();
        let configuration: client.Configuration;
        try {
          configuration = await metadata();
        } catch (err) {
          refusal(err, request.log);
          return backToSignIn(reply, 'unavailable');
        }
        const flow = {
          state: client.randomState(),
          nonce: client.randomNonce(),
          codeVerifier: client.randomPKCECodeVerifier(),
          startedAt: Date.now(),
          next: nextPath(request.query),
        };
        const authorization = client.buildAuthorizationUrl(configuration, {
          redirect_uri: redirectUri,
          scope: 'openid email profile',
          code_challenge: await client.calculatePKCECodeChallenge(flow.codeVerifier),
          code_challenge_method: 'S256',
          state: flow.state,
          nonce: flow.nonce,
        });
        reply.header('set-cookie', flowCookie(sso.seal(flow), FLOW_TTL_MS / 1000, secure));
        return reply.redirect(authorization.href, 303);
      },
    });

    serve(app, routes.oidcCallback, {
      hide,
      handler: async (request, reply) => {
        if (!metadata) throw notConfigured();
        // The sign-in under way is used once, whatever happens.
        reply.header('set-cookie', flowCookie('', 0, secure));
        const sealed = cookies(request)[FLOW_COOKIE];
        const flow = sealed ? sso.open(sealed) : undefined;
        if (!flow || Date.now() - flow.startedAt > FLOW_TTL_MS) return backToSignIn(reply, 'expired');
        try {
          const configuration = await metadata();
          // The address the provider sent the browser to: the registered redirect URI with the answer's query.
          const current = new URL(redirectUri);
          current.search = new URL(request.url, 'http://callback').search;
          const tokens = await client.authorizationCodeGrant(configuration, current, {
            pkceCodeVerifier: flow.codeVerifier,
            expectedState: flow.state,
            expectedNonce: flow.nonce,
            idTokenExpected: true,
          });
          const user = await sso.admit(await personClaims(configuration, tokens));
          const session = await people.startSession(user.id);
          setSessionCookies(reply, session.token, session.expiresAt, secure);
          return reply.redirect(safeNext(flow.next), 303);
        } catch (err) {
          return backToSignIn(reply, refusal(err, request.log));
        }
      },
    });
  };
}

/** The owner's single sign-on choices (signed-in routes). */
export function ssoSettingsRoutes(services: Services): FastifyPluginAsyncZod {
  const { sso, config } = services;
  return async (app) => {
    const hide = true;
    serve(app, routes.ssoSettings, {
      hide,
      handler: async (request) => {
        requirePermission(request.user, 'manage_people');
        return { ...(await sso.settings(request.user.account_id)), configured: config.oidc !== undefined, providerName: config.oidc?.name ?? null };
      },
    });
    serve(app, routes.saveSsoSettings, {
      hide,
      handler: async (request) => {
        // Without single sign-on, turning passwords off would leave the team no way in.
        if (request.body.passwordsOff && !config.oidc) {
          throw invalidField(
            'passwordsOff',
            'needs single sign-on configured on the server (HERALD_OIDC_ISSUER, HERALD_OIDC_CLIENT_ID, HERALD_OIDC_CLIENT_SECRET)',
          );
        }
        return sso.saveSettings(request.user, request.body);
      },
    });
  };
}
