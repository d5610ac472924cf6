/**
 * Herald's OAuth2 authorization server (RFC 6749) for applications that act for
 * a Herald account: registered applications, authorization codes (with PKCE,
 * RFC 7636, S256 only), access tokens that expire and carry scopes, refresh
 * tokens, and revocation. Codes and tokens are stored as SHA-256 only.
 * Clients that registered themselves (dynamic-clients.ts) use the same flow,
 * with PKCE required and their tokens bound to Herald's MCP server (RFC 8707).
 */
import crypto from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database, OAuthAppRow, OAuthDynamicClientRow, OAuthTokenRow, UserRow } from '../db/schema.ts';
import { hotQuery } from '../db/hot-query.ts';
import { newId } from '../lib/ids.ts';
import { randomToken, sha256 } from '../lib/secrets.ts';
import { iso } from '../lib/time.ts';
import type { Principal } from './accounts.ts';
import { DynamicClients } from './dynamic-clients.ts';
import { type ApiError, invalidField, notFound } from './errors.ts';
import { capScopesForRole, parseScopes, scopeString, scopesFromJson, scopesToJson, within, type ScopeList } from './scopes.ts';

export const ACCESS_TOKEN_PREFIX = 'hat_';
const REFRESH_TOKEN_PREFIX = 'hrt_';
const CODE_TTL_MS = 10 * 60_000;
const LAST_USED_PRECISION_MS = 60_000;
export const DEFAULT_TOKEN_TTL_SECONDS = 3600;
export { MAX_TOKEN_TTL_SECONDS } from '../contract/routes/app.ts';

/** An error of the token endpoint, named as RFC 6749 section 5.2 names them. */
export class OAuthError extends Error {
  constructor(
    readonly error:
      | 'invalid_request'
      | 'invalid_client'
      | 'invalid_grant'
      | 'unauthorized_client'
      | 'unsupported_grant_type'
      | 'invalid_scope'
      | 'invalid_target',
    readonly description: string,
    readonly status = error === 'invalid_client' ? 401 : 400,
  ) {
    super(description);
  }
}

/**
 * The resources (RFC 8707) Herald's tokens can be bound to: its MCP server and
 * its public API. A token bound to one is refused by the other; a token bound
 * to none (an application that named no resource, as before resources existed)
 * is good for both.
 */
export interface HeraldResources {
  mcp: string;
  publicApi: string;
}

export function heraldResources(publicUrl: string): HeraldResources {
  const base = publicUrl.replace(/\/+$/, '');
  return { mcp: `${base}/api/mcp`, publicApi: `${base}/api/public/v1` };
}

/** Resource indicators compare without a trailing slash. */
function sameResource(value: string): string {
  return value.replace(/\/+$/, '');
}

/** Whether a token bound to `tokenResource` may be used at `here`. */
export function tokenGoodFor(tokenResource: string | null | undefined, here: string): boolean {
  return tokenResource === null || tokenResource === undefined || sameResource(tokenResource) === sameResource(here);
}

/** A client of either kind, as the flow needs it. */
interface ClientRecord {
  id: string;
  name: string;
  redirectUris: string[];
  secretHash: string | null;
  tokenTtlSeconds: number;
  createdAt: number;
  /** Set for a client that registered itself. */
  agent?: OAuthDynamicClientRow;
}

function appRecord(row: OAuthAppRow): ClientRecord {
  return {
    id: row.id,
    name: row.name,
    redirectUris: JSON.parse(row.redirect_uris),
    secretHash: row.secret_hash,
    tokenTtlSeconds: row.token_ttl_seconds,
    createdAt: row.created_at,
  };
}

function agentRecord(row: OAuthDynamicClientRow): ClientRecord {
  return {
    id: row.id,
    name: row.name,
    redirectUris: JSON.parse(row.redirect_uris),
    secretHash: row.secret_hash,
    tokenTtlSeconds: DEFAULT_TOKEN_TTL_SECONDS,
    createdAt: row.created_at,
    agent: row,
  };
}

export interface AppView {
  clientId: string;
  name: string;
  redirectUris: string[];
  /** Lifetime of the access tokens it receives, in seconds. */
  tokenLifetime: number;
  createdAt: string;
}

function appView(row: OAuthAppRow): AppView {
  return {
    clientId: row.id,
    name: row.name,
    redirectUris: JSON.parse(row.redirect_uris),
    tokenLifetime: row.token_ttl_seconds,
    createdAt: iso(row.created_at),
  };
}

export interface GrantView {
  id: string;
  app: { clientId: string; name: string };
  scopes: ScopeList;
  grantedBy: string;
  createdAt: string;
  accessExpiresAt: string;
  lastUsedAt: string | null;
}

export interface TokenAnswer {
  access_token: string;
  token_type: 'bearer';
  expires_in: number;
  refresh_token: string;
  scope: string;
  /** The Herald account the token acts for. */
  id: string;
}

/** Where an authorization request stands once checked (RFC 6749 4.1.1 and 4.1.2.1). */
export type AuthorizationCheck =
  /** client_id or redirect_uri is wrong: tell the user, never redirect. */
  | { kind: 'refuse'; message: string }
  /** Anything else wrong goes back to the client's redirect URI. */
  | { kind: 'redirect_error'; redirectUri: string; error: string; description: string; state?: string }
  | { kind: 'ok'; request: AuthorizationRequest };

export interface AuthorizationRequest {
  app: AppView;
  /** Where the answer goes. */
  redirectUri: string;
  /** Whether the client named it (then the token request must repeat it). */
  redirectUriGiven: boolean;
  scopes: ScopeList;
  state?: string;
  codeChallenge?: string;
  /** The resource the tokens will be bound to; null: none named (a registered application's tokens as before). */
  resource: string | null;
  /** Set when the client registered itself: what the consent page tells the person. */
  agent?: { registeredAt: string; clientUri: string | null; accountId: string | null };
}

export function s256(verifier: string): string {
  return crypto.createHash('sha256').update(verifier).digest('base64url');
}

const VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/;
const CHALLENGE = /^[A-Za-z0-9\-_]{43}$/;

function sameSecret(given: string, hash: string): boolean {
  return crypto.timingSafeEqual(Buffer.from(sha256(given)), Buffer.from(hash));
}

/** A redirect URI an application may register: absolute http(s), no fragment. */
export function checkRedirectUri(uri: string, path: string): string {
  let parsed: URL;
  try {
    parsed = new URL(uri);
  } catch {
    throw invalidField(path, 'must be an absolute URL');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw invalidField(path, 'must be an http or https URL');
  if (parsed.hash) throw invalidField(path, 'must not have a fragment (#...)');
  return uri;
}

export class OAuthServer {
  private readonly tokenByHash;
  /** Clients that registered themselves (RFC 7591). */
  readonly agents: DynamicClients;

  /** `resources`: what the `resource` parameter may name; without it (a server that only registers applications) it may name nothing. */
  constructor(
    private readonly db: Kysely<Database>,
    readonly resources?: HeraldResources,
  ) {
    this.agents = new DynamicClients(db);
    this.tokenByHash = hotQuery<
      { hash: string },
      Pick<OAuthTokenRow, 'id' | 'account_id' | 'user_id' | 'scopes' | 'access_expires_at' | 'last_used_at' | 'resource'>
    >(db, ['hash'], (p) =>
      db
        .selectFrom('oauth_tokens')
        .select(['id', 'account_id', 'user_id', 'scopes', 'access_expires_at', 'last_used_at', 'resource'])
        .where('access_hash', '=', p.hash)
        .where('revoked_at', 'is', null),
    );
  }

  // Applications ---------------------------------------------------------------

  async registerApp(
    accountId: string,
    input: { name: string; redirectUris: string[]; tokenLifetime?: number },
    now = Date.now(),
  ): Promise<{ app: AppView; clientSecret: string }> {
    const redirectUris = input.redirectUris.map((u, i) => checkRedirectUri(u, `redirectUris.${i}`));
    const clientSecret = randomToken('hcs_');
    const row: OAuthAppRow = {
      id: newId(),
      account_id: accountId,
      name: input.name,
      secret_hash: sha256(clientSecret),
      redirect_uris: JSON.stringify(redirectUris),
      token_ttl_seconds: input.tokenLifetime ?? DEFAULT_TOKEN_TTL_SECONDS,
      created_at: now,
      deleted_at: null,
    };
    await this.db.insertInto('oauth_apps').values(row).execute();
    return { app: appView(row), clientSecret };
  }

  async listApps(accountId: string): Promise<AppView[]> {
    const rows = await this.db
      .selectFrom('oauth_apps')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('deleted_at', 'is', null)
      .orderBy('created_at')
      .execute();
    return rows.map(appView);
  }

  private async ownApp(accountId: string, clientId: string): Promise<OAuthAppRow> {
    const row = await this.db
      .selectFrom('oauth_apps')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('id', '=', clientId)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    if (!row) throw notFound('Application', clientId);
    return row;
  }

  async updateApp(accountId: string, clientId: string, input: { name?: string; redirectUris?: string[]; tokenLifetime?: number }): Promise<AppView> {
    const row = await this.ownApp(accountId, clientId);
    const set: Partial<OAuthAppRow> = {};
    if (input.name !== undefined) set.name = input.name;
    if (input.redirectUris !== undefined) set.redirect_uris = JSON.stringify(input.redirectUris.map((u, i) => checkRedirectUri(u, `redirectUris.${i}`)));
    if (input.tokenLifetime !== undefined) set.token_ttl_seconds = input.tokenLifetime;
    if (Object.keys(set).length > 0) await this.db.updateTable('oauth_apps').set(set).where('id', '=', clientId).execute();
    return appView({ ...row, ...set });
  }

  /** A new client secret; the old one stops working at once. */
  async rotateSecret(accountId: string, clientId: string): Promise<{ app: AppView; clientSecret: string }> {
    const row = await this.ownApp(accountId, clientId);
    const clientSecret = randomToken('hcs_');
    await this.db
      .updateTable('oauth_apps')
      .set({ secret_hash: sha256(clientSecret) })
      .where('id', '=', clientId)
      .execute();
    return { app: appView(row), clientSecret };
  }

  /** Deletes the application and revokes every token it holds. */
  async deleteApp(accountId: string, clientId: string, now = Date.now()): Promise<void> {
    await this.ownApp(accountId, clientId);
    await this.db.transaction().execute(async (trx) => {
      await trx.updateTable('oauth_apps').set({ deleted_at: now }).where('id', '=', clientId).execute();
      await trx.updateTable('oauth_tokens').set({ revoked_at: now }).where('app_id', '=', clientId).where('revoked_at', 'is', null).execute();
      await trx.deleteFrom('oauth_codes').where('app_id', '=', clientId).execute();
    });
  }

  private async liveClient(clientId: string): Promise<ClientRecord | undefined> {
    if (!clientId) return undefined;
    const agent = await this.agents.live(clientId);
    if (agent) return agentRecord(agent);
    const row = await this.db.selectFrom('oauth_apps').selectAll().where('id', '=', clientId).where('deleted_at', 'is', null).executeTakeFirst();
    return row && appRecord(row);
  }

  /**
   * The resource a client's tokens are bound to, from the `resource` it sent:
   * one of Herald's resources; a client that registered itself gets the MCP
   * server's, named or not, and nothing else.
   */
  private resourceFor(client: ClientRecord, requested: string | undefined): string | null {
    const known = this.resources;
    if (requested === undefined || requested === '') return client.agent && known ? known.mcp : null;
    const wanted = sameResource(requested);
    if (client.agent) {
      if (known && wanted === sameResource(known.mcp)) return known.mcp;
      throw new OAuthError(
        'invalid_target',
        `resource must be ${known?.mcp ?? "Herald's MCP server"}: a client that registered itself may only use Herald's MCP server`,
      );
    }
    const match = known && [known.mcp, known.publicApi].find((r) => sameResource(r) === wanted);
    if (!match) {
      throw new OAuthError(
        'invalid_target',
        known ? `resource must be ${known.mcp} (the MCP server) or ${known.publicApi} (the public API)` : 'this server takes no resource parameter',
      );
    }
    return match;
  }

  // Authorization -------------------------------------------------------------

  /** Checks the query of /oauth/authorize (the same fields come back with the consent form). */
  async checkAuthorization(params: Record<string, string | undefined>): Promise<AuthorizationCheck> {
    const client = await this.liveClient(params.client_id ?? '');
    if (!client) return { kind: 'refuse', message: 'This application is unknown: the link that brought you here has a wrong or missing client_id.' };
    const app: AppView = {
      clientId: client.id,
      name: client.name,
      redirectUris: client.redirectUris,
      tokenLifetime: client.tokenTtlSeconds,
      createdAt: iso(client.createdAt),
    };
    let redirectUri: string;
    if (params.redirect_uri) {
      if (!app.redirectUris.includes(params.redirect_uri)) {
        return {
          kind: 'refuse',
          message: `The redirect address ${params.redirect_uri} is not registered for the application "${app.name}", so Herald will not send you there.`,
        };
      }
      redirectUri = params.redirect_uri;
    } else if (app.redirectUris.length === 1) {
      redirectUri = app.redirectUris[0];
    } else {
      return {
        kind: 'refuse',
        message: `The application "${app.name}" registered several redirect addresses and did not say which one to use (redirect_uri).`,
      };
    }
    const state = params.state || undefined;
    const fail = (error: string, description: string): AuthorizationCheck => ({ kind: 'redirect_error', redirectUri, error, description, state });
    if (params.response_type !== 'code') return fail('unsupported_response_type', 'response_type must be "code"');
    let scopes: ScopeList;
    try {
      scopes = parseScopes(params.scope, 'scope');
    } catch (err) {
      return fail('invalid_scope', (err as ApiError).message);
    }
    let codeChallenge: string | undefined;
    if (params.code_challenge !== undefined && params.code_challenge !== '') {
      if ((params.code_challenge_method ?? 'plain') !== 'S256') return fail('invalid_request', 'code_challenge_method must be S256 (plain is not supported)');
      if (!CHALLENGE.test(params.code_challenge))
        return fail('invalid_request', 'code_challenge must be the base64url SHA-256 of the code verifier (43 characters)');
      codeChallenge = params.code_challenge;
    } else if (params.code_challenge_method) {
      return fail('invalid_request', 'code_challenge_method was sent without code_challenge');
    } else if (client.agent) {
      // A client that registered itself proves with PKCE that the code comes back to whoever asked for it.
      return fail('invalid_request', 'code_challenge is required (PKCE with S256)');
    }
    let resource: string | null;
    try {
      resource = this.resourceFor(client, params.resource);
    } catch (err) {
      return fail('invalid_target', (err as OAuthError).description);
    }
    const agent = client.agent && { registeredAt: iso(client.agent.created_at), clientUri: client.agent.client_uri, accountId: client.agent.account_id };
    return {
      kind: 'ok',
      request: { app, redirectUri, redirectUriGiven: Boolean(params.redirect_uri), scopes, state, codeChallenge, resource, ...(agent && { agent }) },
    };
  }

  /** The user approved: a one-time code for the client (valid 10 minutes). */
  async issueCode(request: AuthorizationRequest, user: UserRow, now = Date.now()): Promise<string> {
    if (request.agent && !(await this.agents.claim(request.app.clientId, user.account_id, now))) {
      throw new OAuthError('unauthorized_client', 'this agent is connected to another Herald account');
    }
    const code = randomToken('hac_');
    await this.db
      .insertInto('oauth_codes')
      .values({
        code_hash: sha256(code),
        app_id: request.app.clientId,
        account_id: user.account_id,
        user_id: user.id,
        redirect_uri: request.redirectUriGiven ? request.redirectUri : null,
        scopes: scopesToJson(capScopesForRole(request.scopes, user.role)),
        code_challenge: request.codeChallenge ?? null,
        resource: request.resource,
        created_at: now,
        expires_at: now + CODE_TTL_MS,
        used_at: null,
      })
      .execute();
    return code;
  }

  // Token endpoint ------------------------------------------------------------

  private async personExists(userId: string): Promise<boolean> {
    return (await this.db.selectFrom('users').select('id').where('id', '=', userId).executeTakeFirst()) !== undefined;
  }

  /** The client named by client_id; the secret, when given, must be its own. */
  private async client(clientId: string | undefined, clientSecret: string | undefined): Promise<ClientRecord> {
    if (!clientId) throw new OAuthError('invalid_request', 'client_id is required');
    const app = await this.liveClient(clientId);
    if (!app) throw new OAuthError('invalid_client', 'unknown client_id');
    if (clientSecret !== undefined) {
      if (app.secretHash === null)
        throw new OAuthError('invalid_client', 'this client registered without a secret (token_endpoint_auth_method none): send no client_secret');
      if (!sameSecret(clientSecret, app.secretHash)) throw new OAuthError('invalid_client', 'client_secret is wrong');
    } else if (app.agent && app.secretHash !== null) {
      throw new OAuthError('invalid_client', 'client_secret is required: this client registered with one');
    }
    return app;
  }

  /** Whether the client proved who it is: its secret, or it is a public client that registered itself (it has none). */
  private authenticated(app: ClientRecord, clientSecret: string | undefined): boolean {
    return clientSecret !== undefined || (app.agent !== undefined && app.secretHash === null);
  }

  /** The `resource` of a token request: the grant's own, or, for a grant that named none, one the client may name. */
  private tokenResource(app: ClientRecord, granted: string | null, requested: string | undefined): string | null {
    if (requested === undefined) return granted;
    if (granted !== null) {
      if (sameResource(requested) !== sameResource(granted))
        throw new OAuthError('invalid_target', `resource must be ${granted}, the one this grant was made for`);
      return granted;
    }
    return this.resourceFor(app, requested);
  }

  async exchangeCode(
    input: { code?: string; clientId?: string; clientSecret?: string; codeVerifier?: string; redirectUri?: string; resource?: string },
    now = Date.now(),
  ): Promise<TokenAnswer> {
    const app = await this.client(input.clientId, input.clientSecret);
    if (!input.code) throw new OAuthError('invalid_request', 'code is required');
    if (input.codeVerifier !== undefined && !VERIFIER.test(input.codeVerifier)) {
      throw new OAuthError('invalid_request', 'code_verifier must be 43 to 128 characters of A-Z, a-z, 0-9, "-", ".", "_", "~"');
    }
    const codeHash = sha256(input.code);
    const code = await this.db.selectFrom('oauth_codes').selectAll().where('code_hash', '=', codeHash).executeTakeFirst();
    if (!code || code.app_id !== app.id) throw new OAuthError('invalid_grant', 'the authorization code is unknown or was issued to another client');
    if (code.used_at !== null) {
      // A code used twice may have been stolen: what it gave is taken back (RFC 6749 4.1.2).
      await this.db.updateTable('oauth_tokens').set({ revoked_at: now }).where('code_hash', '=', codeHash).where('revoked_at', 'is', null).execute();
      throw new OAuthError('invalid_grant', 'the authorization code was used already; the tokens it gave are revoked');
    }
    if (code.expires_at <= now) throw new OAuthError('invalid_grant', 'the authorization code expired; ask the user to authorize again');
    const registered = app.redirectUris;
    if (code.redirect_uri !== null) {
      if (input.redirectUri !== code.redirect_uri) throw new OAuthError('invalid_grant', 'redirect_uri must be the one sent to the authorization request');
    } else if (input.redirectUri !== undefined && !(registered.length === 1 && registered[0] === input.redirectUri)) {
      throw new OAuthError('invalid_grant', 'redirect_uri does not match the redirect URI of the authorization');
    }
    if (code.code_challenge !== null) {
      if (input.codeVerifier === undefined) throw new OAuthError('invalid_grant', 'code_verifier is required: the authorization used PKCE');
      if (s256(input.codeVerifier) !== code.code_challenge) throw new OAuthError('invalid_grant', 'code_verifier does not match the code_challenge');
    } else {
      if (input.codeVerifier !== undefined) throw new OAuthError('invalid_grant', 'code_verifier was sent, but the authorization had no code_challenge');
      // Without PKCE only the client's secret proves who is asking.
      if (input.clientSecret === undefined) throw new OAuthError('invalid_client', 'client_secret is required (or use PKCE)');
    }
    const claimed = await this.db
      .updateTable('oauth_codes')
      .set({ used_at: now })
      .where('code_hash', '=', codeHash)
      .where('used_at', 'is', null)
      .executeTakeFirst();
    if (Number(claimed.numUpdatedRows) !== 1) throw new OAuthError('invalid_grant', 'the authorization code was used already');
    if (!(await this.personExists(code.user_id))) throw new OAuthError('invalid_grant', 'the person who authorized this code was removed');
    const resource = this.tokenResource(app, code.resource ?? null, input.resource);
    return this.issueToken(app, { accountId: code.account_id, userId: code.user_id, scopes: scopesFromJson(code.scopes), codeHash, resource }, now);
  }

  async refresh(
    input: { refreshToken?: string; clientId?: string; clientSecret?: string; scope?: string; resource?: string },
    now = Date.now(),
  ): Promise<TokenAnswer> {
    const app = await this.client(input.clientId, input.clientSecret);
    // Public clients have no secret; their refresh tokens are used once (rotated below), so a stolen one shows.
    if (!this.authenticated(app, input.clientSecret)) throw new OAuthError('invalid_client', 'client_secret is required to refresh a token');
    if (!input.refreshToken) throw new OAuthError('invalid_request', 'refresh_token is required');
    const row = await this.db.selectFrom('oauth_tokens').selectAll().where('refresh_hash', '=', sha256(input.refreshToken)).executeTakeFirst();
    if (!row || row.app_id !== app.id || row.revoked_at !== null)
      throw new OAuthError('invalid_grant', 'the refresh token is unknown, revoked or was used already');
    if (!(await this.personExists(row.user_id))) throw new OAuthError('invalid_grant', 'the person who authorized this token was removed');
    const granted = scopesFromJson(row.scopes);
    let scopes = granted;
    if (input.scope !== undefined) {
      try {
        scopes = parseScopes(input.scope, 'scope');
      } catch (err) {
        throw new OAuthError('invalid_scope', (err as ApiError).message);
      }
      if (!within(scopes, granted)) throw new OAuthError('invalid_scope', 'a refresh may narrow the scopes, never widen them');
    }
    const resource = this.tokenResource(app, row.resource ?? null, input.resource);
    // The old pair stops working: a refresh token is used once.
    const retired = await this.db
      .updateTable('oauth_tokens')
      .set({ revoked_at: now })
      .where('id', '=', row.id)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    if (Number(retired.numUpdatedRows) !== 1) throw new OAuthError('invalid_grant', 'the refresh token was used already');
    return this.issueToken(app, { accountId: row.account_id, userId: row.user_id, scopes, codeHash: row.code_hash, resource }, now);
  }

  private async issueToken(
    app: ClientRecord,
    grant: { accountId: string; userId: string; scopes: ScopeList; codeHash: string | null; resource: string | null },
    now: number,
  ): Promise<TokenAnswer> {
    const access = randomToken(ACCESS_TOKEN_PREFIX);
    const refresh = randomToken(REFRESH_TOKEN_PREFIX);
    await this.db
      .insertInto('oauth_tokens')
      .values({
        id: newId(),
        app_id: app.id,
        account_id: grant.accountId,
        user_id: grant.userId,
        access_hash: sha256(access),
        refresh_hash: sha256(refresh),
        scopes: scopesToJson(grant.scopes),
        code_hash: grant.codeHash,
        created_at: now,
        access_expires_at: now + app.tokenTtlSeconds * 1000,
        last_used_at: null,
        revoked_at: null,
        resource: grant.resource,
      })
      .execute();
    return {
      access_token: access,
      token_type: 'bearer',
      expires_in: app.tokenTtlSeconds,
      refresh_token: refresh,
      scope: scopeString(grant.scopes),
      id: grant.accountId,
    };
  }

  /** RFC 7009: the client gives up a token (access or refresh); unknown tokens are not an error. */
  async revokeByClient(input: { token?: string; clientId?: string; clientSecret?: string }, now = Date.now()): Promise<void> {
    const app = await this.client(input.clientId, input.clientSecret);
    if (!this.authenticated(app, input.clientSecret)) throw new OAuthError('invalid_client', 'client_secret is required to revoke a token');
    if (!input.token) throw new OAuthError('invalid_request', 'token is required');
    const hash = sha256(input.token);
    await this.db
      .updateTable('oauth_tokens')
      .set({ revoked_at: now })
      .where('app_id', '=', app.id)
      .where((eb) => eb.or([eb('access_hash', '=', hash), eb('refresh_hash', '=', hash)]))
      .where('revoked_at', 'is', null)
      .execute();
  }

  /** Drops codes a day after they expired, and revoked tokens after a day (housekeeping). */
  async prune(now = Date.now()): Promise<void> {
    await this.db
      .deleteFrom('oauth_codes')
      .where('expires_at', '<', now - 86_400_000)
      .execute();
    await this.db
      .deleteFrom('oauth_tokens')
      .where('revoked_at', '<', now - 86_400_000)
      .execute();
    await this.agents.prune(now);
  }

  // Use and revocation --------------------------------------------------------

  /** The account an access token acts for, or undefined when it is unknown, revoked or expired. */
  async authenticate(presented: string, now = Date.now()): Promise<Principal | undefined> {
    const [row] = await this.tokenByHash({ hash: sha256(presented) });
    if (!row || row.access_expires_at <= now) return undefined;
    if (row.last_used_at === null || row.last_used_at < now - LAST_USED_PRECISION_MS) {
      await this.db.updateTable('oauth_tokens').set({ last_used_at: now }).where('id', '=', row.id).execute();
    }
    return { accountId: row.account_id, keyId: row.id, scopes: scopesFromJson(row.scopes), userId: row.user_id, resource: row.resource ?? null };
  }

  /** Access the account granted to applications and not revoked yet. */
  async grants(accountId: string): Promise<GrantView[]> {
    const rows = await this.db
      .selectFrom('oauth_tokens')
      .innerJoin('oauth_apps', 'oauth_apps.id', 'oauth_tokens.app_id')
      .innerJoin('users', 'users.id', 'oauth_tokens.user_id')
      .selectAll('oauth_tokens')
      .select(['oauth_apps.name as app_name', 'users.email as user_email'])
      .where('oauth_tokens.account_id', '=', accountId)
      .where('oauth_tokens.revoked_at', 'is', null)
      .orderBy('oauth_tokens.created_at')
      .execute();
    return rows.map((r) => ({
      id: r.id,
      app: { clientId: r.app_id, name: r.app_name },
      scopes: scopesFromJson(r.scopes),
      grantedBy: r.user_email,
      createdAt: iso(r.created_at),
      accessExpiresAt: iso(r.access_expires_at),
      lastUsedAt: r.last_used_at === null ? null : iso(r.last_used_at),
    }));
  }

  /** Revokes one grant (access and refresh token) at once. */
  async revokeGrant(accountId: string, id: string, now = Date.now()): Promise<void> {
    const done = await this.db
      .updateTable('oauth_tokens')
      .set({ revoked_at: now })
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    if (Number(done.numUpdatedRows) === 0) throw notFound('Authorization', id);
  }
}
