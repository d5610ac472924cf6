/**
 * Accounts and their API keys. A key is shown in full when created, rotated or
 * revealed; the store keeps its SHA-256 (for lookup on every request) and a
 * sealed copy (for "Reveal").
 */
import type { Kysely } from 'kysely';
import type { Database, ApiKeyRow } from '../db/schema.ts';
import { hotQuery } from '../db/hot-query.ts';
import { tables, type ChangeSignal } from '../db/changes.ts';
import { ReadCache } from '../db/read-cache.ts';
import { newId } from '../lib/ids.ts';
import { randomToken, sha256, type SecretBox } from '../lib/secrets.ts';
import { ApiError, notFound } from './errors.ts';
import { scopesFromJson, scopesToJson, type ScopeList } from './scopes.ts';

export interface KeySummary {
  id: string;
  name: string;
  hint: string;
  createdAt: string;
  lastUsedAt: string | null;
  revoked: boolean;
  /** null: full access. */
  scopes: ScopeList;
}

export interface Principal {
  accountId: string;
  /** The API key's id, or the OAuth token's id: what the per-credential limit counts. */
  keyId: string;
  /** null: full access. */
  scopes: ScopeList;
  /** The person the credential acts for (a web session, or an application they authorised); none for API keys, which act for the account. */
  userId?: string;
  /** For an OAuth access token: the resource (RFC 8707) it is bound to; null or absent: not bound. */
  resource?: string | null;
}

const KEY_PREFIX = 'hk_';
const LAST_USED_PRECISION_MS = 60_000;

function summary(row: ApiKeyRow): KeySummary {
  return {
    id: row.id,
    name: row.name,
    hint: `${KEY_PREFIX}…${row.key_hint}`,
    createdAt: new Date(row.created_at).toISOString(),
    lastUsedAt: row.last_used_at ? new Date(row.last_used_at).toISOString() : null,
    revoked: row.revoked_at !== null,
    scopes: scopesFromJson(row.scopes),
  };
}

type KeyLookup = Pick<ApiKeyRow, 'id' | 'account_id' | 'last_used_at' | 'scopes'>;

/** Keys in use kept in memory (a revocation or rotation anywhere drops them). */
const KNOWN_KEYS = 10_000;

export class Accounts {
  /** Every API request looks its key up: compiled once, and kept until api_keys changes. */
  private readonly keyByHash;
  private readonly keys: ReadCache<KeyLookup | undefined>;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly box: SecretBox,
    changes: ChangeSignal,
  ) {
    this.keys = new ReadCache(changes, tables('api_keys', 'accounts'), { entries: KNOWN_KEYS });
    this.keyByHash = hotQuery<{ hash: string }, KeyLookup>(db, ['hash'], (p) =>
      db.selectFrom('api_keys').select(['id', 'account_id', 'last_used_at', 'scopes']).where('key_hash', '=', p.hash).where('revoked_at', 'is', null),
    );
  }

  async create(name: string): Promise<string> {
    const id = newId();
    await this.db.insertInto('accounts').values({ id, name, created_at: Date.now() }).execute();
    return id;
  }

  /** The account's id and name, as the web application shows it. */
  async describe(accountId: string): Promise<{ id: string; name: string }> {
    return this.db.selectFrom('accounts').select(['id', 'name']).where('id', '=', accountId).executeTakeFirstOrThrow();
  }

  /** The first account of the installation, created on first use (the owner). */
  async ownerAccount(): Promise<string> {
    // The owner's own account first: parallel first sign-ups may each have created one before one of them won.
    const owners = await this.db.selectFrom('users').select('account_id').where('role', '=', 'owner').executeTakeFirst();
    if (owners) return owners.account_id;
    const existing = await this.db.selectFrom('accounts').select('id').orderBy('created_at').limit(1).executeTakeFirst();
    return existing?.id ?? (await this.create('Owner'));
  }

  /** `scopes`: null (or omitted) for full access. */
  async createKey(accountId: string, name: string, scopes: ScopeList = null): Promise<{ key: string; summary: KeySummary }> {
    const key = randomToken(KEY_PREFIX);
    const row: ApiKeyRow = {
      id: newId(),
      account_id: accountId,
      name,
      key_hash: sha256(key),
      key_sealed: this.box.encrypt(key),
      key_hint: key.slice(-4),
      created_at: Date.now(),
      last_used_at: null,
      revoked_at: null,
      scopes: scopesToJson(scopes),
    };
    await this.db.insertInto('api_keys').values(row).execute();
    return { key, summary: summary(row) };
  }

  async listKeys(accountId: string): Promise<KeySummary[]> {
    const rows = await this.db.selectFrom('api_keys').selectAll().where('account_id', '=', accountId).orderBy('created_at').execute();
    return rows.map(summary);
  }

  private async activeKey(accountId: string, keyId: string): Promise<ApiKeyRow> {
    const row = await this.db.selectFrom('api_keys').selectAll().where('account_id', '=', accountId).where('id', '=', keyId).executeTakeFirst();
    if (!row) throw notFound('API key', keyId);
    if (row.revoked_at !== null) throw new ApiError('key_revoked', `API key ${keyId} is revoked`);
    return row;
  }

  async revealKey(accountId: string, keyId: string): Promise<string> {
    return this.box.decrypt((await this.activeKey(accountId, keyId)).key_sealed);
  }

  /** Replaces the key's secret; the old value stops working at once. */
  async rotateKey(accountId: string, keyId: string): Promise<{ key: string; summary: KeySummary }> {
    const row = await this.activeKey(accountId, keyId);
    const key = randomToken(KEY_PREFIX);
    const updated = { ...row, key_hash: sha256(key), key_sealed: this.box.encrypt(key), key_hint: key.slice(-4) };
    await this.db
      .updateTable('api_keys')
      .set({ key_hash: updated.key_hash, key_sealed: updated.key_sealed, key_hint: updated.key_hint })
      .where('id', '=', keyId)
      .execute();
    return { key, summary: summary(updated) };
  }

  async revokeKey(accountId: string, keyId: string): Promise<void> {
    await this.activeKey(accountId, keyId);
    await this.db.updateTable('api_keys').set({ revoked_at: Date.now() }).where('id', '=', keyId).execute();
  }

  /** The account a presented key belongs to, or undefined for an unknown or revoked key. */
  async authenticate(presented: string, now = Date.now()): Promise<Principal | undefined> {
    const hash = sha256(presented);
    const row = await this.keys.get(hash, async () => (await this.keyByHash({ hash }))[0]);
    if (!row) return undefined;
    // "Last used" is kept to the minute: one write per key and minute, not per request.
    if (row.last_used_at === null || row.last_used_at < now - LAST_USED_PRECISION_MS) {
      // Marked on the kept row first, so the requests that arrive meanwhile do not write it too.
      row.last_used_at = now;
      await this.db.updateTable('api_keys').set({ last_used_at: now }).where('id', '=', row.id).execute();
    }
    return { accountId: row.account_id, keyId: row.id, scopes: scopesFromJson(row.scopes) };
  }
}
