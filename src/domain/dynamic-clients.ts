/**
 * Clients that register themselves (RFC 7591 dynamic client registration): the
 * MCP clients of assistants, which know only Herald's address. Anyone may
 * register, so what they send is checked strictly (redirect URIs must be https,
 * or http on the machine itself), unused registrations are capped and pruned,
 * and a client belongs to the account of the first person who approves it; that
 * account sees it in Settings and can disconnect it, which ends its tokens.
 */
import type { Kysely } from 'kysely';
import type { Database, OAuthDynamicClientRow } from '../db/schema.ts';
import { randomToken, sha256 } from '../lib/secrets.ts';
import { iso } from '../lib/time.ts';
import { notFound } from './errors.ts';
import { parseScopes } from './scopes.ts';

export const DYNAMIC_CLIENT_PREFIX = 'mcp_';
/** Registrations from one address in REGISTRATION_WINDOW_MS (the sliding-window limiter counts them). */
export const REGISTRATIONS_PER_ADDRESS = 20;
export const REGISTRATION_WINDOW_MS = 3_600_000;
/** Registered clients nobody approved yet, at most: past it registration waits for pruning. */
export const MAX_UNUSED_CLIENTS = 500;
/** A registration nobody approved within this is removed. */
const UNUSED_CLIENT_TTL_MS = 86_400_000;
const MAX_REDIRECT_URIS = 10;
const MAX_URI_LENGTH = 2048;
const MAX_NAME_LENGTH = 100;

type AuthMethod = OAuthDynamicClientRow['auth_method'];
const AUTH_METHODS: readonly AuthMethod[] = ['none', 'client_secret_post', 'client_secret_basic'];
const GRANT_TYPES = ['authorization_code', 'refresh_token'];

/** An RFC 7591 section 3.2.2 error: `error` names the rule, the description names the field. */
export class RegistrationError extends Error {
  constructor(
    readonly error: 'invalid_redirect_uri' | 'invalid_client_metadata' | 'temporarily_unavailable',
    readonly description: string,
    /** The metadata field at fault, when one is. */
    readonly field?: string,
    readonly status = error === 'temporarily_unavailable' ? 503 : 400,
  ) {
    super(description);
  }
}

/** What the registration endpoint answers (RFC 7591 section 3.2.1). */
export interface RegistrationAnswer {
  client_id: string;
  client_id_issued_at: number;
  client_secret?: string;
  client_secret_expires_at?: 0;
  client_name: string;
  redirect_uris: string[];
  grant_types: string[];
  response_types: ['code'];
  token_endpoint_auth_method: AuthMethod;
  client_uri?: string;
  scope?: string;
  software_id?: string;
  software_version?: string;
}

/** A connected agent as Settings lists it. */
export interface AgentView {
  clientId: string;
  name: string;
  clientUri: string | null;
  redirectUris: string[];
  registeredAt: string;
  connectedAt: string | null;
  lastUsedAt: string | null;
  /** Grants not revoked yet. */
  activeTokens: number;
}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** A redirect URI a self-registered client may use: https anywhere, http only back to this machine, no fragment. */
export function checkAgentRedirectUri(value: unknown, field: string): string {
  if (typeof value !== 'string' || value === '') throw new RegistrationError('invalid_redirect_uri', `${field} must be a non-empty string`, field);
  if (value.length > MAX_URI_LENGTH) throw new RegistrationError('invalid_redirect_uri', `${field} must be at most ${MAX_URI_LENGTH} characters`, field);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new RegistrationError('invalid_redirect_uri', `${field} must be an absolute URL`, field);
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname))) {
    throw new RegistrationError('invalid_redirect_uri', `${field} must be an https URL, or http://localhost or http://127.0.0.1 (${value} is neither)`, field);
  }
  if (url.hash || value.includes('#')) throw new RegistrationError('invalid_redirect_uri', `${field} must not have a fragment (#...)`, field);
  if (url.username || url.password) throw new RegistrationError('invalid_redirect_uri', `${field} must not carry a user name or password`, field);
  return value;
}

function optionalText(body: Record<string, unknown>, field: string, max: number): string | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new RegistrationError('invalid_client_metadata', `${field} must be a string`, field);
  if (value.length > max) throw new RegistrationError('invalid_client_metadata', `${field} must be at most ${max} characters`, field);
  // Shown to people on the consent page: no control characters that could disguise it.
  if (/[\u0000-\u001f\u007f]/.test(value)) throw new RegistrationError('invalid_client_metadata', `${field} must not contain control characters`, field);
  return value.trim() || undefined;
}

function stringList(body: Record<string, unknown>, field: string): string[] | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) {
    throw new RegistrationError('invalid_client_metadata', `${field} must be an array of strings`, field);
  }
  return value as string[];
}

/** The registration request checked field by field; what Herald does not use is ignored (RFC 7591 section 2). */
export function checkRegistration(body: unknown): Omit<RegistrationAnswer, 'client_id' | 'client_id_issued_at' | 'client_secret' | 'client_secret_expires_at'> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new RegistrationError('invalid_client_metadata', 'the body must be a JSON object of client metadata');
  }
  const fields = body as Record<string, unknown>;
  const uris = fields.redirect_uris;
  if (!Array.isArray(uris) || uris.length === 0)
    throw new RegistrationError('invalid_redirect_uri', 'redirect_uris is required: an array of at least one URI', 'redirect_uris');
  if (uris.length > MAX_REDIRECT_URIS)
    throw new RegistrationError('invalid_redirect_uri', `redirect_uris may hold at most ${MAX_REDIRECT_URIS} URIs`, 'redirect_uris');
  const redirectUris = uris.map((u, i) => checkAgentRedirectUri(u, `redirect_uris[${i}]`));

  const grantTypes = stringList(fields, 'grant_types') ?? GRANT_TYPES;
  const unsupportedGrant = grantTypes.find((g) => !GRANT_TYPES.includes(g));
  if (unsupportedGrant !== undefined)
    throw new RegistrationError(
      'invalid_client_metadata',
      `grant_types: "${unsupportedGrant}" is not supported; use authorization_code and refresh_token`,
      'grant_types',
    );
  if (!grantTypes.includes('authorization_code'))
    throw new RegistrationError('invalid_client_metadata', 'grant_types must include authorization_code', 'grant_types');
  const responseTypes = stringList(fields, 'response_types') ?? ['code'];
  if (responseTypes.some((r) => r !== 'code')) throw new RegistrationError('invalid_client_metadata', 'response_types may only be ["code"]', 'response_types');

  const method = fields.token_endpoint_auth_method ?? 'client_secret_basic';
  if (typeof method !== 'string' || !AUTH_METHODS.includes(method as AuthMethod)) {
    throw new RegistrationError(
      'invalid_client_metadata',
      `token_endpoint_auth_method must be one of ${AUTH_METHODS.join(', ')}`,
      'token_endpoint_auth_method',
    );
  }
  const scope = optionalText(fields, 'scope', 1000);
  if (scope !== undefined) {
    try {
      parseScopes(scope, 'scope');
    } catch (err) {
      throw new RegistrationError('invalid_client_metadata', (err as Error).message, 'scope');
    }
  }
  const clientUri = optionalText(fields, 'client_uri', MAX_URI_LENGTH);
  if (clientUri !== undefined && !/^https?:\/\//i.test(clientUri))
    throw new RegistrationError('invalid_client_metadata', 'client_uri must be an http or https URL', 'client_uri');
  const name = optionalText(fields, 'client_name', MAX_NAME_LENGTH) ?? `Agent at ${new URL(redirectUris[0]).host}`;
  const softwareId = optionalText(fields, 'software_id', 200);
  const softwareVersion = optionalText(fields, 'software_version', 200);
  return {
    client_name: name,
    redirect_uris: redirectUris,
    grant_types: [...new Set(grantTypes)],
    response_types: ['code'],
    token_endpoint_auth_method: method as AuthMethod,
    ...(clientUri !== undefined && { client_uri: clientUri }),
    ...(scope !== undefined && { scope }),
    ...(softwareId !== undefined && { software_id: softwareId }),
    ...(softwareVersion !== undefined && { software_version: softwareVersion }),
  };
}

export class DynamicClients {
  constructor(private readonly db: Kysely<Database>) {}

  /** Registers a checked client; its secret (for confidential clients) is shown only in this answer. */
  async register(body: unknown, limits = { maxUnused: MAX_UNUSED_CLIENTS }, now = Date.now()): Promise<RegistrationAnswer> {
    const metadata = checkRegistration(body);
    const waiting = await this.db
      .selectFrom('oauth_dynamic_clients')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('account_id', 'is', null)
      .where('deleted_at', 'is', null)
      .executeTakeFirstOrThrow();
    if (Number(waiting.n) >= limits.maxUnused) {
      throw new RegistrationError('temporarily_unavailable', 'too many registered clients are waiting for someone to approve them; try again later');
    }
    const clientId = randomToken(DYNAMIC_CLIENT_PREFIX).slice(0, DYNAMIC_CLIENT_PREFIX.length + 32);
    const secret = metadata.token_endpoint_auth_method === 'none' ? undefined : randomToken('hcs_');
    await this.db
      .insertInto('oauth_dynamic_clients')
      .values({
        id: clientId,
        name: metadata.client_name,
        redirect_uris: JSON.stringify(metadata.redirect_uris),
        client_uri: metadata.client_uri ?? null,
        software_id: metadata.software_id ?? null,
        software_version: metadata.software_version ?? null,
        auth_method: metadata.token_endpoint_auth_method,
        secret_hash: secret === undefined ? null : sha256(secret),
        account_id: null,
        created_at: now,
        claimed_at: null,
        deleted_at: null,
      })
      .execute();
    return {
      client_id: clientId,
      client_id_issued_at: Math.floor(now / 1000),
      ...(secret !== undefined && { client_secret: secret, client_secret_expires_at: 0 as const }),
      ...metadata,
    };
  }

  async live(clientId: string): Promise<OAuthDynamicClientRow | undefined> {
    if (!clientId.startsWith(DYNAMIC_CLIENT_PREFIX)) return undefined;
    return this.db.selectFrom('oauth_dynamic_clients').selectAll().where('id', '=', clientId).where('deleted_at', 'is', null).executeTakeFirst();
  }

  /** The first approval makes the client this account's; false when another account has it already. */
  async claim(clientId: string, accountId: string, now = Date.now()): Promise<boolean> {
    await this.db
      .updateTable('oauth_dynamic_clients')
      .set({ account_id: accountId, claimed_at: now })
      .where('id', '=', clientId)
      .where('account_id', 'is', null)
      .where('deleted_at', 'is', null)
      .execute();
    const row = await this.live(clientId);
    return row?.account_id === accountId;
  }

  /** The agents connected to the account, with their live grants. */
  async list(accountId: string): Promise<AgentView[]> {
    const rows = await this.db
      .selectFrom('oauth_dynamic_clients')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('deleted_at', 'is', null)
      .orderBy('claimed_at')
      .execute();
    if (rows.length === 0) return [];
    const usage = await this.db
      .selectFrom('oauth_tokens')
      .select(['app_id'])
      .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.max('last_used_at').as('last')])
      .where('account_id', '=', accountId)
      .where('revoked_at', 'is', null)
      .where(
        'app_id',
        'in',
        rows.map((r) => r.id),
      )
      .groupBy('app_id')
      .execute();
    const byClient = new Map(usage.map((u) => [u.app_id, u]));
    return rows.map((r) => {
      const used = byClient.get(r.id);
      const last = used?.last === null || used?.last === undefined ? null : Number(used.last);
      return {
        clientId: r.id,
        name: r.name,
        clientUri: r.client_uri,
        redirectUris: JSON.parse(r.redirect_uris),
        registeredAt: iso(r.created_at),
        connectedAt: r.claimed_at === null ? null : iso(r.claimed_at),
        lastUsedAt: last === null ? null : iso(last),
        activeTokens: Number(used?.n ?? 0),
      };
    });
  }

  /** Disconnects an agent of the account: the client is removed and every token it holds stops working at once. */
  async disconnect(accountId: string, clientId: string, now = Date.now()): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const done = await trx
        .updateTable('oauth_dynamic_clients')
        .set({ deleted_at: now })
        .where('id', '=', clientId)
        .where('account_id', '=', accountId)
        .where('deleted_at', 'is', null)
        .executeTakeFirst();
      if (Number(done.numUpdatedRows) === 0) throw notFound('Connected agent', clientId);
      await trx.updateTable('oauth_tokens').set({ revoked_at: now }).where('app_id', '=', clientId).where('revoked_at', 'is', null).execute();
      await trx.deleteFrom('oauth_codes').where('app_id', '=', clientId).execute();
    });
  }

  /** Removes registrations nobody approved within a day, and disconnected clients after a day. */
  async prune(now = Date.now()): Promise<void> {
    await this.db
      .deleteFrom('oauth_dynamic_clients')
      .where((eb) =>
        eb.or([eb.and([eb('account_id', 'is', null), eb('created_at', '<', now - UNUSED_CLIENT_TTL_MS)]), eb('deleted_at', '<', now - UNUSED_CLIENT_TTL_MS)]),
      )
      .execute();
  }
}
