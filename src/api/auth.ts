/**
 * Public API authentication: the Authorization header carries the key itself
 * (or "Bearer <key>"). One lookup covers API keys and, later, OAuth tokens.
 */
import type { FastifyRequest } from 'fastify';
import type { Accounts, Principal } from '../domain/accounts.ts';
import { ApiError } from '../domain/errors.ts';

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

export async function authenticate(request: FastifyRequest, accounts: Accounts): Promise<Principal> {
  const credential = presentedCredential(request);
  if (!credential) {
    throw new ApiError(401, 'missing_api_key', 'Authorization header is missing: send your API key as "Authorization: <key>"', [
      { path: 'headers.authorization', message: 'is required' },
    ]);
  }
  const principal = await accounts.authenticate(credential);
  if (!principal) {
    throw new ApiError(401, 'invalid_api_key', 'Invalid API key: it is unknown, revoked or was rotated', [
      { path: 'headers.authorization', message: 'is not a valid API key' },
    ]);
  }
  return principal;
}
