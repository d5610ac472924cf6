/**
 * Requests to X signed with OAuth 1.0a, and X's answers turned into results or
 * classified failures. X sends no Retry-After on 429; it says when the window
 * resets in x-rate-limit-reset (epoch seconds), which is used instead.
 */
import type { NetworkAnswer, Verdict } from '../../adapter-kit/http-failures.ts';
import { withQuery, type NetworkRequest } from '../../adapter-kit/network-http.ts';
import { authorizationHeader, type OAuth1Keys } from '../../adapter-kit/oauth1.ts';
import type { NetworkContext } from '../../types.ts';

export interface XUserTokens {
  token: string;
  tokenSecret: string;
}

/** What a connected X channel keeps. */
export interface XConfig extends XUserTokens {
  userId: string;
  username: string;
}

/** Where a post of the channel is seen on x.com. */
export function postUrl(config: XConfig, id: string): string {
  return `https://x.com/${config.username}/status/${id}`;
}

export function consumerKeys(ctx: NetworkContext, user?: XUserTokens): OAuth1Keys {
  return { consumerKey: ctx.app.API_KEY, consumerSecret: ctx.app.API_SECRET, token: user?.token, tokenSecret: user?.tokenSecret };
}

/** The request with its OAuth 1 signature; `extra` are oauth_* parameters (oauth_callback, oauth_verifier). */
function signed(keys: OAuth1Keys, url: string, request: NetworkRequest, extra?: Record<string, string>): NetworkRequest {
  const method = request.method ?? (request.json !== undefined || request.form || request.body ? 'POST' : 'GET');
  const form = request.form ? (Object.fromEntries(Object.entries(request.form).filter(([, v]) => v !== undefined)) as Record<string, string>) : undefined;
  const authorization = authorizationHeader({ method, url: withQuery(url, request.query), keys, form, extra });
  return { ...request, method, headers: { ...request.headers, authorization } };
}

/** X sends no Retry-After on 429: x-rate-limit-reset (epoch seconds) says when the window resets. */
export function readAnswer({ status, headers }: NetworkAnswer): Verdict | undefined {
  const reset = Number(headers.get('x-rate-limit-reset'));
  if (status !== 429 || headers.get('retry-after') || !Number.isFinite(reset) || reset <= 0) return undefined;
  return { retryAfterMs: Math.max(0, reset * 1000 - Date.now()) };
}

/** A signed request whose 2xx JSON answer is returned. */
export function signedJson<T = any>(ctx: NetworkContext, keys: OAuth1Keys, url: string, request: NetworkRequest = {}): Promise<T> {
  return ctx.http.json<T>(url, signed(keys, url, request));
}

/** The OAuth 1 token endpoints answer url-encoded forms; asking again for a token is harmless. */
export async function signedForm(ctx: NetworkContext, keys: OAuth1Keys, url: string, extra: Record<string, string>): Promise<Record<string, string>> {
  const answer = await ctx.http.call(url, signed(keys, url, { method: 'POST', repeatable: true }, extra));
  return Object.fromEntries(new URLSearchParams(answer.raw));
}
