import type { Kysely } from 'kysely';

const ms = 'bigint';

/**
 * People and their sessions, invitations, API key scopes, the OAuth2
 * authorization server (applications, codes, tokens) and the device-flow
 * auth server's pending requests. Every secret is stored as a SHA-256 hash.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  // JSON array of scope names; null means full access (what every existing key had).
  await db.schema.alterTable('api_keys').addColumn('scopes', 'text').execute();

  await db.schema
    .createTable('users')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('email', 'text', (c) => c.notNull().unique())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('password_hash', 'text', (c) => c.notNull())
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('created_at', ms, (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('sessions')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
    .addColumn('created_at', ms, (c) => c.notNull())
    .addColumn('expires_at', ms, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('sessions_by_user').on('sessions').column('user_id').execute();

  await db.schema
    .createTable('invitations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('invited_by', 'text', (c) => c.notNull())
    .addColumn('created_at', ms, (c) => c.notNull())
    .addColumn('expires_at', ms, (c) => c.notNull())
    .addColumn('accepted_at', ms)
    .execute();

  await db.schema
    .createTable('oauth_apps')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('secret_hash', 'text', (c) => c.notNull())
    // JSON array of exact redirect URIs.
    .addColumn('redirect_uris', 'text', (c) => c.notNull())
    .addColumn('token_ttl_seconds', 'integer', (c) => c.notNull())
    .addColumn('created_at', ms, (c) => c.notNull())
    .addColumn('deleted_at', ms)
    .execute();

  await db.schema
    .createTable('oauth_codes')
    .addColumn('code_hash', 'text', (c) => c.primaryKey())
    .addColumn('app_id', 'text', (c) => c.notNull())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.notNull())
    // The redirect_uri sent to /oauth/authorize, or null when the registered one was implied.
    .addColumn('redirect_uri', 'text')
    .addColumn('scopes', 'text')
    .addColumn('code_challenge', 'text')
    .addColumn('created_at', ms, (c) => c.notNull())
    .addColumn('expires_at', ms, (c) => c.notNull())
    .addColumn('used_at', ms)
    .execute();

  await db.schema
    .createTable('oauth_tokens')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('app_id', 'text', (c) => c.notNull())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('access_hash', 'text', (c) => c.notNull().unique())
    .addColumn('refresh_hash', 'text', (c) => c.notNull().unique())
    .addColumn('scopes', 'text')
    // The authorization code this grant came from: a replayed code revokes it.
    .addColumn('code_hash', 'text')
    .addColumn('created_at', ms, (c) => c.notNull())
    .addColumn('access_expires_at', ms, (c) => c.notNull())
    .addColumn('last_used_at', ms)
    .addColumn('revoked_at', ms)
    .execute();
  await db.schema.createIndex('oauth_tokens_by_account').on('oauth_tokens').columns(['account_id', 'revoked_at']).execute();

  await db.schema
    .createTable('device_requests')
    .addColumn('device_code_hash', 'text', (c) => c.primaryKey())
    .addColumn('user_code', 'text', (c) => c.notNull().unique())
    // The OAuth `state` sent to Herald's authorization page, once the user entered the code.
    .addColumn('state', 'text', (c) => c.unique())
    .addColumn('code_verifier', 'text')
    .addColumn('scope', 'text')
    // 'pending', 'approved' or 'denied'.
    .addColumn('status', 'text', (c) => c.notNull())
    // The token answer, sealed, between the callback and the client's next poll.
    .addColumn('token_sealed', 'text')
    .addColumn('interval_seconds', 'integer', (c) => c.notNull())
    .addColumn('last_polled_at', ms)
    .addColumn('created_at', ms, (c) => c.notNull())
    .addColumn('expires_at', ms, (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['device_requests', 'oauth_tokens', 'oauth_codes', 'oauth_apps', 'invitations', 'sessions', 'users']) {
    await db.schema.dropTable(table).execute();
  }
  await db.schema.alterTable('api_keys').dropColumn('scopes').execute();
}
