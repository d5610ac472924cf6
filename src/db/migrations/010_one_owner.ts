import { sql, type Kysely } from 'kysely';

/**
 * One owner per installation, whatever the timing: parallel first sign-ups
 * could each see "no users yet" and each become an owner. The earliest owner of
 * an installation that got several keeps the role; the others become admins.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`UPDATE users SET role = 'admin' WHERE role = 'owner' AND id <> (SELECT id FROM users WHERE role = 'owner' ORDER BY created_at, id LIMIT 1)`.execute(
    db,
  );
  await sql`CREATE UNIQUE INDEX users_one_owner ON users (role) WHERE role = 'owner'`.execute(db);
}
