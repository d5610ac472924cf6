/**
 * Requests to X signed with OAuth 1.0a, and X's answers turned into results or
 * classified failures. X sends no Retry-After on 429; it says when the window
 * resets in x-rate-limit-reset (epoch seconds), which is used instead.
 */
import { withQuery, type NetworkRequest } from '../network-http.ts';
import { authorizationHeader, type OAuth1Keys } from '../oauth1.ts';
import { PublishError, type NetworkContext } from '../types.ts';

export interface XUserTokens {
  token: string;
  tokenSecret: string;
}

export function consumerKeys(ctx: NetworkContext, user?: XUserTokens): OAuth1Keys {
  return { consumerKey: ctx.app.API_KEY, consumerSecret: ctx.app.API_SECRET, token: user?.token, tokenSecret: user?.tokenSecret };
}

/** Sends a signed request; `extra` are oauth_* parameters (oauth_callback, oauth_verifier). */
export async function signedSend(ctx: NetworkContext, keys: OAuth1Keys, url: string, request: NetworkRequest = {}, extra?: Record<string, string>): Promise<Response> {
  const method = request.method ?? (request.json !== undefined || request.form || request.body ? 'POST' : 'GET');
  const form = request.form ? (Object.fromEntries(Object.entries(request.form).filter(([, v]) => v !== undefined)) as Record<string, string>) : undefined;
  const authorization = authorizationHeader({ method, url: withQuery(url, request.query), keys, form, extra });
  return ctx.http.send(url, { ...request, method, headers: { ...request.headers, authorization } });
}

/** The failure of a non-2xx answer, with X's rate-limit reset as the retry time. */
export async function xFailure(ctx: NetworkContext, response: Response): Promise<PublishError> {
  const failure = await ctx.http.failure(response);
  const reset = Number(response.headers.get('x-rate-limit-reset'));
  if (response.status === 429 && failure.retryAfterMs === undefined && Number.isFinite(reset) && reset > 0) {
    return new PublishError('retryable', failure.message, Math.max(0, reset * 1000 - Date.now()));
  }
  return failure;
}

/** A signed request whose 2xx JSON answer is returned. */
export async function signedJson<T = any>(ctx: NetworkContext, keys: OAuth1Keys, url: string, request: NetworkRequest = {}): Promise<T> {
  const response = await signedSend(ctx, keys, url, request);
  if (!response.ok) throw await xFailure(ctx, response);
  const text = await response.text();
  if (text === '') return undefined as T;
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new PublishError('unknown', `X answered ${response.status} with a body that is not JSON, so the outcome is unknown. Check the channel before retrying.`);
  }
}

/** The OAuth 1 token endpoints answer url-encoded forms. */
export async function signedForm(ctx: NetworkContext, keys: OAuth1Keys, url: string, extra: Record<string, string>): Promise<Record<string, string>> {
  const response = await signedSend(ctx, keys, url, { method: 'POST' }, extra);
  if (!response.ok) throw await xFailure(ctx, response);
  return Object.fromEntries(new URLSearchParams(await response.text()));
}
