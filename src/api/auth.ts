/**
 * Public API authentication: the Authorization header carries the credential
 * itself (or "Bearer <credential>"): an API key or an OAuth access token, told
 * apart by their prefix so each request costs one lookup. Then the credential's
 * scopes are checked against what the route needs (src/api/scopes.ts).
 */
import type { FastifyRequest } from 'fastify';
import type { Accounts, Principal } from '../domain/accounts.ts';
import { ApiError } from '../domain/errors.ts';
import { ACCESS_TOKEN_PREFIX, type HeraldResources, type OAuthServer, tokenGoodFor } from '../domain/oauth.ts';
import { allows, type Scope } from '../domain/scopes.ts';
import { requiredScope } from './scopes.ts';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal;
  }
}

export function presentedCredential(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (!header) return undefined;
  const value = header.trim().replace(/^Bearer\s+/i, '');
  return value || undefined;
}

/**
 * The principal of the request's credential, for the resource `here` (the
 * public API or the MCP server): an access token bound to the other one
 * (RFC 8707) is refused as an unknown one would be.
 */
export async function authenticate(
  request: FastifyRequest,
  verifiers: { accounts: Accounts; oauth: OAuthServer },
  here: keyof HeraldResources = 'publicApi',
): Promise<Principal> {
  const credential = presentedCredential(request);
  if (!credential) {
    throw new ApiError('missing_api_key', 'Authorization header is missing: send your API key as "Authorization: <key>"', [
      { path: 'headers.authorization', message: 'is required' },
    ]);
  }
  const principal = credential.startsWith(ACCESS_TOKEN_PREFIX)
    ? await verifiers.oauth.authenticate(credential)
    : await verifiers.accounts.authenticate(credential);
  if (!principal) {
    throw new ApiError('invalid_api_key', 'Invalid API key: it is unknown, revoked or was rotated (or the access token expired or was revoked)', [
      { path: 'headers.authorization', message: 'is not a valid API key or access token' },
    ]);
  }
  const resources = verifiers.oauth.resources;
  if (resources && !tokenGoodFor(principal.resource, resources[here])) {
    throw new ApiError(
      'invalid_api_key',
      `This access token was issued for ${principal.resource}, not for ${resources[here]}: ask for a token for this resource`,
      [{ path: 'headers.authorization', message: `is an access token for another resource (${principal.resource})` }],
    );
  }
  return principal;
}

function insufficientScope(principal: Principal, action: string, need: string): ApiError {
  return new ApiError(
    'insufficient_scope',
    `This credential may not ${action}: it needs the scope ${need}, and it has ${principal.scopes?.join(', ') || 'no scopes'}`,
    [{ path: 'headers.authorization', message: `lacks the scope ${need}` }],
  );
}

/** For a route whose need depends on the request (a helper tool that acts): 403 unless the credential has `need`. */
export function requireScope(principal: Principal, need: Scope, action: string): void {
  if (!allows(principal.scopes, need)) throw insufficientScope(principal, action, need);
}

/** 403 when the credential's scopes do not cover this route; full-access credentials pass everywhere. */
export function checkScope(request: FastifyRequest, principal: Principal): void {
  if (principal.scopes === null) return;
  const need = requiredScope(request.method, request.routeOptions.url ?? request.url);
  if (need === 'any') return;
  if (need === undefined || !allows(principal.scopes, need)) throw insufficientScope(principal, `${request.method} this endpoint`, need ?? 'full access');
}
