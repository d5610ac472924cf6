import { sql, type Kysely } from 'kysely';

const ms = 'bigint';

/**
 * Agents that register themselves (RFC 7591 dynamic client registration, for
 * MCP clients): `oauth_dynamic_clients` holds what they registered; a client
 * belongs to no account until a person first approves it (`account_id`), so
 * unclaimed ones can be capped and pruned. Codes and tokens remember the
 * resource (RFC 8707) they were issued for: NULL for the grants of registered
 * applications that named none, which stay good wherever they were before.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('oauth_dynamic_clients')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    // JSON array of exact redirect URIs.
    .addColumn('redirect_uris', 'text', (c) => c.notNull())
    .addColumn('client_uri', 'text')
    .addColumn('software_id', 'text')
    .addColumn('software_version', 'text')
    // 'none' (a public client, PKCE only), 'client_secret_post' or 'client_secret_basic'.
    .addColumn('auth_method', 'text', (c) => c.notNull())
    .addColumn('secret_hash', 'text')
    .addColumn('account_id', 'text')
    .addColumn('created_at', ms, (c) => c.notNull())
    .addColumn('claimed_at', ms)
    .addColumn('deleted_at', ms)
    .execute();
  await db.schema.createIndex('oauth_dynamic_clients_by_account').on('oauth_dynamic_clients').columns(['account_id', 'deleted_at']).execute();
  await sql`ALTER TABLE oauth_codes ADD COLUMN resource TEXT`.execute(db);
  await sql`ALTER TABLE oauth_tokens ADD COLUMN resource TEXT`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE oauth_tokens DROP COLUMN resource`.execute(db);
  await sql`ALTER TABLE oauth_codes DROP COLUMN resource`.execute(db);
  await db.schema.dropTable('oauth_dynamic_clients').execute();
}
