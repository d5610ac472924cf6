/**
 * The token life of Instagram Login and Threads: the authorization code becomes
 * a short-lived token (1 hour), exchanged at once for a long-lived one (60 days),
 * which renews itself (there is no separate refresh token) as long as it has not
 * expired. Both networks document the same steps with their own grant names.
 */
import { authorizationUrl } from '../../adapter-kit/oauth2-tokens.ts';
import type { NetworkContext } from '../../types.ts';
import { PublishError } from '../../errors.ts';
import { graphCall } from './graph.ts';

export interface LongLivedTokenFlow {
  network: string;
  /** POST: code → short-lived token. */
  codeUrl: string;
  /** GET: short-lived → long-lived. */
  exchangeUrl: string;
  exchangeGrant: string;
  /** GET: long-lived → a new long-lived token. */
  refreshUrl: string;
  refreshGrant: string;
}

/**
 * Renew this long before the token lapses: an expired token cannot be renewed
 * (the user would have to connect again), and the engine renews only when a
 * channel publishes.
 */
const RENEW_EARLY_MS = 7 * 86_400_000;

export type TokenFields = {
  accessToken: string;
  /** When Herald renews the token (a week before it lapses). */
  expiresAt: number;
  /** When the network says the token lapses. */
  tokenExpiresAt: number;
};

function tokenFields(answer: { access_token?: string; expires_in?: number }, network: string, now = Date.now()): TokenFields {
  if (!answer.access_token) throw new PublishError('refused', `${network} answered without an access token`);
  const lapses = now + Number(answer.expires_in ?? 3600) * 1000;
  return { accessToken: answer.access_token, tokenExpiresAt: lapses, expiresAt: lapses - RENEW_EARLY_MS };
}

/** Where the person grants access: the login host's /oauth/authorize, scopes comma-separated as both networks take them. */
export function loginUrl(ctx: NetworkContext & { state: string; redirectUri: string }, scopes: string[]): string {
  return authorizationUrl(`${ctx.urls.login}/oauth/authorize`, {
    clientId: ctx.app.CLIENT_ID,
    redirectUri: ctx.redirectUri,
    state: ctx.state,
    scopes,
    scopeSeparator: ',',
  });
}

/** The code the network sent back (which may end with "#_", not part of it). */
export function authorizationCode(query: Record<string, string>, network: string): string {
  const code = (query.code ?? '').replace(/#_$/, '');
  if (!code) throw new PublishError('refused', `${network} sent the user back without an authorization code`);
  return code;
}

/** Code → short-lived → long-lived token. */
export async function connectToken(
  ctx: NetworkContext,
  flow: LongLivedTokenFlow,
  code: string,
  redirectUri: string,
): Promise<TokenFields & { userId?: string }> {
  const short = await graphCall<{ access_token?: string; user_id?: string | number; data?: { access_token?: string; user_id?: string | number }[] }>(
    ctx,
    flow.codeUrl,
    {
      method: 'POST',
      form: { client_id: ctx.app.CLIENT_ID, client_secret: ctx.app.CLIENT_SECRET, grant_type: 'authorization_code', redirect_uri: redirectUri, code },
    },
  );
  // Instagram's reference shows the token flat, its Business Login guide inside data[]: both are read.
  const first = short.access_token ? short : (short.data?.[0] ?? {});
  if (!first.access_token) throw new PublishError('refused', `${flow.network} gave no access token for the authorization code`);
  const long = await graphCall(ctx, flow.exchangeUrl, {
    query: { grant_type: flow.exchangeGrant, client_secret: ctx.app.CLIENT_SECRET, access_token: first.access_token },
  });
  return { ...tokenFields(long, flow.network), userId: first.user_id === undefined ? undefined : String(first.user_id) };
}

/** A new long-lived token for the current one. */
export async function renewToken(ctx: NetworkContext, flow: LongLivedTokenFlow, token: string): Promise<TokenFields> {
  const answer = await graphCall(ctx, flow.refreshUrl, { query: { grant_type: flow.refreshGrant, access_token: token } });
  return tokenFields(answer, flow.network);
}
