import type { Kysely } from 'kysely';

const ms = 'bigint';

/**
 * Single sign-on with OpenID Connect (issue 32).
 *
 * sso_identities: who a provider's person (issuer + subject) is here, so a later
 * change of e-mail at the provider still finds them. A removed person's rows
 * stay with user_id NULL and removed_at set: they are refused, not re-admitted
 * through an allowed domain.
 *
 * removed_people: the e-mail addresses removed from an account, for the same
 * reason when the person never used single sign-on.
 *
 * sso_settings: what the owner chose for their account: the e-mail domains
 * whose people may join (JSON array), the role they get, and whether only the
 * owner may still sign in with a password.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('sso_identities')
    .addColumn('issuer', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('user_id', 'text')
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('created_at', ms, (c) => c.notNull())
    .addColumn('removed_at', ms)
    .addPrimaryKeyConstraint('sso_identities_pk', ['issuer', 'subject'])
    .execute();
  await db.schema.createIndex('sso_identities_by_user').on('sso_identities').column('user_id').execute();

  await db.schema
    .createTable('removed_people')
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('removed_at', ms, (c) => c.notNull())
    .addPrimaryKeyConstraint('removed_people_pk', ['account_id', 'email'])
    .execute();

  await db.schema
    .createTable('sso_settings')
    .addColumn('account_id', 'text', (c) => c.primaryKey().references('accounts.id'))
    .addColumn('allowed_domains', 'text', (c) => c.notNull())
    .addColumn('domain_role', 'text', (c) => c.notNull())
    .addColumn('passwords_off', 'integer', (c) => c.notNull())
    .addColumn('updated_at', ms, (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('sso_settings').execute();
  await db.schema.dropTable('removed_people').execute();
  await db.schema.dropTable('sso_identities').execute();
}
