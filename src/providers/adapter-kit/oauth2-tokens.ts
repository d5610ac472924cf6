/**
 * The token endpoint of an OAuth 2 authorization-code network: exchanging the
 * code and refreshing, with the client authenticated in the form or with HTTP
 * Basic, as the network asks. Answers become Herald's token fields.
 */
import { errorMessage } from './http-failures.ts';
import type { NetworkContext, TokenConfig } from '../types.ts';
import { PublishError } from '../errors.ts';

export interface TokenAnswer {
  access_token?: string;
  refresh_token?: string;
  expires_in?: number | string;
  [field: string]: unknown;
}

export interface TokenRequestOptions {
  /** Send client_id:client_secret as HTTP Basic instead of in the form. */
  basic?: { id: string; secret: string };
  headers?: Record<string, string>;
}

export function basicAuth(id: string, secret: string): string {
  return `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;
}

/** POSTs the form to the token endpoint; an answer without access_token (some networks say 200 {error}) is refused. */
export async function requestToken(
  ctx: NetworkContext,
  url: string,
  form: Record<string, string | undefined>,
  options: TokenRequestOptions = {},
): Promise<TokenAnswer> {
  const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
  if (options.basic) headers.authorization = basicAuth(options.basic.id, options.basic.secret);
  const answer = await ctx.http.json<TokenAnswer>(url, { method: 'POST', form, headers });
  if (!answer?.access_token) {
    throw new PublishError('auth', `${ctx.http.network} gave no access token: ${errorMessage(answer) ?? 'empty answer'}`);
  }
  return answer;
}

/** Herald's token fields from a token answer; no refresh_token means "keep the one we have". */
export function tokenFields(answer: TokenAnswer, now = Date.now()): TokenConfig & Record<string, unknown> {
  const seconds = Number(answer.expires_in);
  return {
    accessToken: answer.access_token,
    ...(answer.refresh_token ? { refreshToken: answer.refresh_token } : {}),
    ...(Number.isFinite(seconds) && seconds > 0 ? { expiresAt: now + seconds * 1000 } : {}),
  };
}

export interface AuthorizationRequest {
  clientId: string;
  redirectUri: string;
  state: string;
  scopes: string[];
  /** RFC 6749 separates scopes with spaces; Meta, TikTok, Slack and Pinterest take commas. */
  scopeSeparator?: ' ' | ',';
  /** Sent with S256 when the flow uses PKCE. */
  codeChallenge?: string;
  /** TikTok names the client `client_key`. */
  clientIdParam?: string;
  /** The network's own parameters (access_type, duration, permissions...). */
  extra?: Record<string, string | undefined>;
}

/** Where the person grants access: the authorization endpoint with an authorization-code request (RFC 6749 4.1.1, RFC 7636). */
export function authorizationUrl(endpoint: string, request: AuthorizationRequest): string {
  const url = new URL(endpoint);
  const params: Record<string, string | undefined> = {
    response_type: 'code',
    [request.clientIdParam ?? 'client_id']: request.clientId,
    redirect_uri: request.redirectUri,
    scope: request.scopes.join(request.scopeSeparator ?? ' '),
    state: request.state,
    ...(request.codeChallenge ? { code_challenge: request.codeChallenge, code_challenge_method: 'S256' } : {}),
    ...request.extra,
  };
  for (const [k, v] of Object.entries(params)) if (v !== undefined) url.searchParams.set(k, v);
  return url.toString();
}

/** Refusing a refresh when the channel was connected without a refresh token: only reconnecting helps. */
export function needRefreshToken(config: { refreshToken?: unknown }, network: string): string {
  const token = config.refreshToken;
  if (typeof token !== 'string' || token === '') throw new PublishError('auth', `${network} gave this channel no refresh token, so it must be connected again`);
  return token;
}

/**
 * The refresh most networks take: the channel's refresh token with the app's id
 * and secret in the form. A network that rotates refresh tokens answers a new
 * one, which replaces the spent one; without one, the stored token is kept.
 */
export async function refreshTokens(
  ctx: NetworkContext & { channel: { config: { refreshToken?: unknown } } },
  url: string,
  network: string,
  options: TokenRequestOptions = {},
): Promise<TokenConfig & Record<string, unknown>> {
  const form = {
    grant_type: 'refresh_token',
    refresh_token: needRefreshToken(ctx.channel.config, network),
    client_id: ctx.app.CLIENT_ID,
    client_secret: ctx.app.CLIENT_SECRET,
  };
  return tokenFields(await requestToken(ctx, url, form, options));
}

/** Google's consent screen, asking for offline access and consent every time, so Google sends a refresh token on every connection. */
export function googleConsentUrl(authBase: string, request: Omit<AuthorizationRequest, 'extra'>): string {
  return authorizationUrl(`${authBase}/o/oauth2/v2/auth`, {
    ...request,
    extra: { access_type: 'offline', prompt: 'consent', include_granted_scopes: 'true' },
  });
}
