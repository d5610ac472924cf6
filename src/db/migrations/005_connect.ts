import type { Kysely } from 'kysely';

const ms = 'bigint';

/** OAuth connections in progress: from GET /social/{provider} until the network sends the user back. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('connect_requests')
    .addColumn('state', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('provider', 'text', (c) => c.notNull())
    // JSON sealed with the secret box: PKCE verifier, the adapter's stash, and (step 2) the accounts to pick from.
    .addColumn('data_sealed', 'text', (c) => c.notNull())
    .addColumn('created_at', ms, (c) => c.notNull())
    .addColumn('expires_at', ms, (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('connect_requests').execute();
}
