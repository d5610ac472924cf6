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

/** Result pages at most read from one Graph list (100 entries a page of results). */
const MAX_PAGE_RESULTS = 10;

type Listed<T> = { data?: T[]; paging?: { cursors?: { after?: string }; next?: string } };

/** Every entry of a Graph list, following the result cursors. */
async function everyEntry<T>(graph: Graph, path: string, fields: string): Promise<T[]> {
  const entries: T[] = [];
  let after: string | undefined;
  for (let round = 0; round < MAX_PAGE_RESULTS; round++) {
    const answer = await graph.get<Listed<T>>(path, { fields, limit: 100, after });
    entries.push(...(answer.data ?? []));
    after = answer.paging?.cursors?.after;
    if (!answer.paging?.next || !after) break;
  }
  return entries;
}

/** The edges of a Business Manager account that hold Pages: its own, and its clients' it was given access to. */
const BUSINESS_PAGE_EDGES = ['owned_pages', 'client_pages'];

/** The user's Business Manager accounts; none when the user declined business_management (Graph refuses the list). */
async function businesses(graph: Graph): Promise<{ id: string }[]> {
  try {
    return await everyEntry<{ id: string }>(graph, 'me/businesses', 'id,name');
  } catch (err) {
    if (err instanceof PublishError && err.kind === 'refused') return [];
    throw err;
  }
}

/**
 * Every Page the user manages, with the given fields: those of /me/accounts
 * and, with `throughBusinesses` (it needs business_management), those the user
 * reaches only through a Business Manager account, each Page once.
 */
export async function managedPages<T extends { id: string }>(graph: Graph, fields: string, options: { throughBusinesses?: boolean } = {}): Promise<T[]> {
  const pages = await everyEntry<T>(graph, 'me/accounts', fields);
  if (options.throughBusinesses) {
    for (const business of await businesses(graph)) {
      for (const edge of BUSINESS_PAGE_EDGES) pages.push(...(await everyEntry<T>(graph, `${business.id}/${edge}`, fields)));
    }
  }
  const seen = new Set<string>();
  return pages.filter((page) => !seen.has(page.id) && seen.add(page.id));
}
