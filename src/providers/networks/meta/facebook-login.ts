/**
 * Facebook Login (the server-side code flow), shared by the Facebook Page and
 * Instagram-through-a-Page adapters: the login dialog, the code exchanged for a
 * short-lived user token and that for a long-lived one (about 60 days; Facebook
 * has no refresh token), and the Pages the user manages, which are what gets
 * connected (the user picks one).
 */
import type { NetworkContext } from '../../types.ts';
import { PublishError } from '../../errors.ts';
import { Graph, graphCall } from './graph.ts';
import { authorizationUrl } from '../../adapter-kit/oauth2-tokens.ts';

/** The Graph API version used unless HERALD_<NETWORK>_API_VERSION says otherwise. */
export const DEFAULT_GRAPH_VERSION = 'v26.0';

export function graphVersion(ctx: Pick<NetworkContext, 'app'>): string {
  return ctx.app.API_VERSION || DEFAULT_GRAPH_VERSION;
}

/** Where the user grants the permissions. */
export function loginDialogUrl(ctx: NetworkContext & { state: string; redirectUri: string }, scopes: string[]): string {
  return authorizationUrl(`${ctx.urls.login}/${graphVersion(ctx)}/dialog/oauth`, {
    clientId: ctx.app.CLIENT_ID,
    redirectUri: ctx.redirectUri,
    state: ctx.state,
    scopes,
    scopeSeparator: ',',
  });
}

export interface UserToken {
  token: string;
  /** Epoch ms; null when Facebook did not say. */
  expiresAt: number | null;
}

/** The code becomes a short-lived user token, exchanged at once for a long-lived one. */
export async function longLivedUserToken(ctx: NetworkContext & { query: Record<string, string>; redirectUri: string }, network: string): Promise<UserToken> {
  const code = ctx.query.code;
  if (!code) throw new PublishError('refused', `${network} sent the user back without an authorization code`);
  const endpoint = `${ctx.urls.api}/${graphVersion(ctx)}/oauth/access_token`;
  const short = await graphCall<{ access_token?: string }>(ctx, endpoint, {
    query: { client_id: ctx.app.CLIENT_ID, client_secret: ctx.app.CLIENT_SECRET, redirect_uri: ctx.redirectUri, code },
  });
  if (!short.access_token) throw new PublishError('refused', `${network} gave no access token for the authorization code`);
  const long = await graphCall<{ access_token?: string; expires_in?: number }>(ctx, endpoint, {
    query: { grant_type: 'fb_exchange_token', client_id: ctx.app.CLIENT_ID, client_secret: ctx.app.CLIENT_SECRET, fb_exchange_token: short.access_token },
  });
  if (!long.access_token) throw new PublishError('refused', `${network} did not exchange the token for a long-lived one`);
  return { token: long.access_token, expiresAt: long.expires_in ? Date.now() + long.expires_in * 1000 : null };
}

/** Graph for the logged-in user (reading their Pages). */
export function userGraph(ctx: NetworkContext, network: string, token: string): Graph {
  return new Graph(ctx, { host: ctx.urls.api, version: graphVersion(ctx), token, tokenIn: 'header', network });
}

/** Pages at most read from /me/accounts (100 a page of results). */
const MAX_PAGE_RESULTS = 10;

/** Every Page the user manages, with the given fields, following the result cursors. */
export async function managedPages<T extends { id: string }>(graph: Graph, fields: string): Promise<T[]> {
  const pages: T[] = [];
  let after: string | undefined;
  for (let round = 0; round < MAX_PAGE_RESULTS; round++) {
    const answer = await graph.get<{ data?: T[]; paging?: { cursors?: { after?: string }; next?: string } }>('me/accounts', { fields, limit: 100, after });
    pages.push(...(answer.data ?? []));
    after = answer.paging?.cursors?.after;
    if (!answer.paging?.next || !after) break;
  }
  return pages;
}
