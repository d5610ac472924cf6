import type { Kysely } from 'kysely';

const ms = 'bigint';

/**
 * E-mail: the outbox every message waits in until a worker sends it (claimed
 * with a lease, retried with backoff), each person's choice of what they get by
 * mail (and when their digest is next due), and single-use password reset links.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('mail_outbox')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text')
    .addColumn('to_address', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    // The text and HTML bodies, sealed (they may carry a link's token); emptied once sent or given up.
    .addColumn('body_sealed', 'text')
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', ms, (c) => c.notNull())
    .addColumn('lease_owner', 'text')
    .addColumn('lease_until', ms)
    .addColumn('last_error', 'text')
    .addColumn('created_at', ms, (c) => c.notNull())
    .addColumn('sent_at', ms)
    .execute();
  await db.schema.createIndex('mail_outbox_due').on('mail_outbox').columns(['state', 'next_attempt_at']).execute();

  await db.schema
    .createTable('mail_choices')
    .addColumn('user_id', 'text', (c) => c.primaryKey().references('users.id').onDelete('cascade'))
    .addColumn('post_failed', 'integer', (c) => c.notNull())
    .addColumn('channel_reconnect', 'integer', (c) => c.notNull())
    .addColumn('access_expiring', 'integer', (c) => c.notNull())
    .addColumn('digest', 'text', (c) => c.notNull())
    // When this person's digest is next due (NULL: no digest); the digest job claims rows by moving it ahead.
    .addColumn('digest_due_at', ms)
    .addColumn('updated_at', ms, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('mail_choices_digest_due').on('mail_choices').columns(['digest_due_at']).execute();

  await db.schema
    .createTable('password_resets')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('created_at', ms, (c) => c.notNull())
    .addColumn('expires_at', ms, (c) => c.notNull())
    .addColumn('used_at', ms)
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('password_resets').execute();
  await db.schema.dropTable('mail_choices').execute();
  await db.schema.dropTable('mail_outbox').execute();
}
