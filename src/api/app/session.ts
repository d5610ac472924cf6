/**
 * Web sessions: an HttpOnly, SameSite=Lax cookie carries the session token; a
 * second, readable cookie carries its CSRF token, which every state-changing
 * request must repeat in the X-CSRF-Token header (or the `csrf` form field).
 * The public API never looks at these cookies, and these routes never look at
 * the Authorization header.
 */
import crypto from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { UserRow } from '../../db/schema.ts';
import { ApiError } from '../../domain/errors.ts';
import { csrfTokenOf, type People } from '../../domain/people.ts';

export const SESSION_COOKIE = 'herald_session';
export const CSRF_COOKIE = 'herald_csrf';
export const CSRF_HEADER = 'x-csrf-token';

declare module 'fastify' {
  interface FastifyRequest {
    /** The signed-in person (routes under /api/app and the consent page). */
    user: UserRow;
    sessionToken: string;
  }
}

export function cookies(request: FastifyRequest): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const at = part.indexOf('=');
    if (at < 0) continue;
    const name = part.slice(0, at).trim();
    if (!name || Object.hasOwn(out, name)) continue;
    try {
      out[name] = decodeURIComponent(part.slice(at + 1).trim());
    } catch {
      // A cookie we cannot decode is not one of ours.
    }
  }
  return out;
}

function cookie(name: string, value: string, options: { maxAgeSeconds: number; httpOnly: boolean; secure: boolean }): string {
  return [
    `${name}=${encodeURIComponent(value)}`,
    'Path=/',
    `Max-Age=${options.maxAgeSeconds}`,
    'SameSite=Lax',
    ...(options.httpOnly ? ['HttpOnly'] : []),
    ...(options.secure ? ['Secure'] : []),
  ].join('; ');
}

export function setSessionCookies(reply: FastifyReply, token: string, expiresAt: number, secure: boolean): void {
  const maxAgeSeconds = Math.max(0, Math.floor((expiresAt - Date.now()) / 1000));
  reply.header('set-cookie', [
    cookie(SESSION_COOKIE, token, { maxAgeSeconds, httpOnly: true, secure }),
    cookie(CSRF_COOKIE, csrfTokenOf(token), { maxAgeSeconds, httpOnly: false, secure }),
  ]);
}

export function clearSessionCookies(reply: FastifyReply, secure: boolean): void {
  reply.header('set-cookie', [
    cookie(SESSION_COOKIE, '', { maxAgeSeconds: 0, httpOnly: true, secure }),
    cookie(CSRF_COOKIE, '', { maxAgeSeconds: 0, httpOnly: false, secure }),
  ]);
}

/** The signed-in person, or undefined (no cookie, unknown or expired session). */
export async function currentUser(request: FastifyRequest, people: People): Promise<{ user: UserRow; token: string } | undefined> {
  const token = cookies(request)[SESSION_COOKIE];
  if (!token) return undefined;
  const user = await people.sessionUser(token);
  return user ? { user, token } : undefined;
}

export function sameToken(a: string | undefined, b: string): boolean {
  if (typeof a !== 'string') return false;
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && crypto.timingSafeEqual(left, right);
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** onRequest hook of the session routes: 401 without a session, 403 when a state-changing request lacks the CSRF token. */
export function requireSession(people: People) {
  return async (request: FastifyRequest) => {
    const found = await currentUser(request, people);
    if (!found) {
      throw new ApiError('not_signed_in', 'Sign in first: this endpoint needs a web session (the API key works on /api/public/v1 only)');
    }
    request.user = found.user;
    request.sessionToken = found.token;
    if (!SAFE_METHODS.has(request.method)) {
      const header = request.headers[CSRF_HEADER];
      if (!sameToken(Array.isArray(header) ? header[0] : header, csrfTokenOf(found.token))) {
        throw new ApiError(
          'csrf_failed',
          `The ${CSRF_HEADER} header must carry the session's CSRF token (the ${CSRF_COOKIE} cookie, or csrfToken of GET /api/app/session)`,
          [{ path: `headers.${CSRF_HEADER}`, message: 'must match the session' }],
        );
      }
    }
  };
}
