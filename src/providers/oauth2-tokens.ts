/**
 * The token endpoint of an OAuth 2 authorization-code network: exchanging the
 * code and refreshing, with the client authenticated in the form or with HTTP
 * Basic, as the network asks. Answers become Herald's token fields.
 */
import { errorMessage } from './network-http.ts';
import { PublishError, type NetworkContext, type TokenConfig } from './types.ts';

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
export async function requestToken(ctx: NetworkContext, url: string, form: Record<string, string | undefined>, options: TokenRequestOptions = {}): Promise<TokenAnswer> {
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

/** The authorization URL with its query. */
export function authorizeUrl(base: string, params: Record<string, string | undefined>): string {
  const url = new URL(base);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) url.searchParams.set(k, v);
  return url.toString();
}

/** Refusing a refresh when the channel was connected without a refresh token: only reconnecting helps. */
export function needRefreshToken(config: Record<string, unknown>, network: string): string {
  const token = config.refreshToken;
  if (typeof token !== 'string' || token === '') throw new PublishError('auth', `${network} gave this channel no refresh token, so it must be connected again`);
  return token;
}
