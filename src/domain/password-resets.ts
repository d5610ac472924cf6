/**
 * Password reset links: a random token, stored as SHA-256 like sessions and
 * invitations, good for one use within RESET_TTL_MS. Using one sets the new
 * password and ends every session of that person, so whoever knew the old
 * password is signed out everywhere.
 */
import type { Kysely } from 'kysely';
import type { Database, UserRow } from '../db/schema.ts';
import { randomToken, sha256 } from '../lib/secrets.ts';
import { invalidField } from './errors.ts';
import { hashPassword } from './passwords.ts';

export const RESET_TTL_MS = 60 * 60_000;

export class PasswordResets {
  constructor(private readonly db: Kysely<Database>) {}

  /** The person with this address, if any. */
  async person(email: string): Promise<UserRow | undefined> {
    return this.db.selectFrom('users').selectAll().where('email', '=', email.toLowerCase()).executeTakeFirst();
  }

  /** A new single-use token for `userId`; earlier links of theirs stay good until they expire or one is used. */
  async create(userId: string, now = Date.now()): Promise<string> {
    const token = randomToken('hr_');
    await this.db
      .insertInto('password_resets')
      .values({ token_hash: sha256(token), user_id: userId, created_at: now, expires_at: now + RESET_TTL_MS, used_at: null })
      .execute();
    return token;
  }

  /** Sets the new password with the token's link, once; a used, expired or unknown link is refused, saying which. */
  async use(token: string, password: string, now = Date.now()): Promise<UserRow> {
    const hash = sha256(token);
    const row = await this.db.selectFrom('password_resets').selectAll().where('token_hash', '=', hash).executeTakeFirst();
    if (!row) throw invalidField('token', 'is not a password reset link of this Herald: ask for a new link');
    if (row.used_at !== null) throw invalidField('token', 'was used already (each link works once): ask for a new link');
    if (row.expires_at <= now) throw invalidField('token', `has expired (links work for ${RESET_TTL_MS / 60_000} minutes): ask for a new link`);
    const passwordHash = await hashPassword(password);
    return this.db.transaction().execute(async (tx) => {
      // Two tabs using one link at once: the first to mark it used wins.
      const taken = await tx
        .updateTable('password_resets')
        .set({ used_at: now })
        .where('token_hash', '=', hash)
        .where('used_at', 'is', null)
        .executeTakeFirst();
      if (Number(taken.numUpdatedRows) !== 1) throw invalidField('token', 'was used already (each link works once): ask for a new link');
      await tx.updateTable('users').set({ password_hash: passwordHash }).where('id', '=', row.user_id).execute();
      await tx.deleteFrom('sessions').where('user_id', '=', row.user_id).execute();
      // Other links of this person would undo what they just chose.
      await tx.updateTable('password_resets').set({ used_at: now }).where('user_id', '=', row.user_id).where('used_at', 'is', null).execute();
      return tx.selectFrom('users').selectAll().where('id', '=', row.user_id).executeTakeFirstOrThrow();
    });
  }

  /** Links a day past their end are of no more use, even to say they expired. */
  async prune(now = Date.now()): Promise<void> {
    await this.db
      .deleteFrom('password_resets')
      .where('expires_at', '<', now - 86_400_000)
      .execute();
  }
}
