/**
 * The people of an account, their web sessions and invitations. The first
 * person to sign up becomes the owner of the installation's first account;
 * after that, people join only by invitation. Sessions and invitations are
 * bearer tokens stored as SHA-256.
 */
import crypto from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database, InvitationRow, UserRole, UserRow } from '../db/schema.ts';
import { isUniqueViolation } from '../db/constraint.ts';
import { capScopesForRole, scopesToJson } from './scopes.ts';
import { newId } from '../lib/ids.ts';
import { randomToken, sha256, type SecretBox } from '../lib/secrets.ts';
import { iso } from '../lib/time.ts';
import type { Accounts } from './accounts.ts';
import { ApiError, invalidField, notFound } from './errors.ts';
import { DECOY_HASH, hashPassword, verifyPassword } from './passwords.ts';

const SESSION_TTL_MS = 30 * 86_400_000;
export const INVITATION_TTL_MS = 7 * 86_400_000;

export type Permission = 'manage_keys' | 'manage_apps' | 'invite' | 'manage_people' | 'review_posts';

/** Who may do what beyond using the account (posts, channels, customers). */
const PERMISSIONS: Record<Permission, UserRole[]> = {
  manage_keys: ['owner', 'admin'],
  manage_apps: ['owner', 'admin'],
  invite: ['owner', 'admin'],
  manage_people: ['owner'],
  // Approve or return posts that wait for approval, and decide whether members' posts must wait.
  review_posts: ['owner', 'admin'],
};

export function can(role: UserRole, permission: Permission): boolean {
  return PERMISSIONS[permission].includes(role);
}

export function requirePermission(user: UserRow, permission: Permission): void {
  if (!can(user.role, permission)) {
    throw new ApiError('forbidden', `Your role (${user.role}) may not do this; it needs one of: ${PERMISSIONS[permission].join(', ')}`);
  }
}

export interface UserView {
  id: string;
  email: string;
  name: string;
  role: UserRole;
  createdAt: string;
}

export function userView(row: UserRow): UserView {
  return { id: row.id, email: row.email, name: row.name, role: row.role, createdAt: iso(row.created_at) };
}

export interface InvitationView {
  id: string;
  email: string;
  role: UserRole;
  createdAt: string;
  expiresAt: string;
  accepted: boolean;
}

function invitationView(row: InvitationRow): InvitationView {
  return { id: row.id, email: row.email, role: row.role, createdAt: iso(row.created_at), expiresAt: iso(row.expires_at), accepted: row.accepted_at !== null };
}

/** The CSRF token of a session: derived from its secret token, so it needs no storage and cannot be guessed. */
export function csrfTokenOf(sessionToken: string): string {
  return crypto.createHash('sha256').update(`csrf:${sessionToken}`).digest('base64url');
}

function emailTaken(): ApiError {
  return new ApiError('email_taken', 'email: a person with this address already exists', [{ path: 'email', message: 'is already registered' }]);
}

function signupClosed(): ApiError {
  return new ApiError('signup_closed', 'Sign-up needs an invitation: ask an owner or admin of this Herald to invite you');
}

export class People {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly accounts: Accounts,
    private readonly box: SecretBox,
  ) {}

  async hasUsers(): Promise<boolean> {
    return (await this.db.selectFrom('users').select('id').limit(1).executeTakeFirst()) !== undefined;
  }

  /** Without an invitation only the very first person may sign up (and becomes the owner). */
  async signUp(input: { email: string; password: string; name?: string; invitation?: string }, now = Date.now()): Promise<UserRow> {
    const email = input.email.toLowerCase();
    let accountId: string;
    let role: UserRole;
    let invitation: InvitationRow | undefined;
    if (input.invitation) {
      invitation = await this.db
        .selectFrom('invitations')
        .selectAll()
        .where('token_hash', '=', sha256(input.invitation))
        .where('accepted_at', 'is', null)
        .where('expires_at', '>', now)
        .executeTakeFirst();
      if (!invitation) throw invalidField('invitation', 'is unknown, expired or already used', 'invalid_invitation');
      if (invitation.email !== email) throw invalidField('email', 'must be the address the invitation was sent to', 'invalid_invitation');
      accountId = invitation.account_id;
      role = invitation.role;
    } else {
      if (await this.hasUsers()) throw signupClosed();
      accountId = await this.accounts.ownerAccount();
      role = 'owner';
    }
    if (await this.emailTaken(email)) throw emailTaken();
    const row: UserRow = {
      id: newId(),
      account_id: accountId,
      email,
      name: input.name?.trim() || email.split('@')[0],
      password_hash: await hashPassword(input.password),
      role,
      created_at: now,
    };
    try {
      await this.db.transaction().execute(async (trx) => {
        await trx.insertInto('users').values(row).execute();
        if (invitation) {
          const used = await trx
            .updateTable('invitations')
            .set({ accepted_at: now })
            .where('id', '=', invitation.id)
            .where('accepted_at', 'is', null)
            .executeTakeFirst();
          if (Number(used.numUpdatedRows) !== 1) throw invalidField('invitation', 'was used already', 'invalid_invitation');
        }
      });
    } catch (err) {
      // A parallel sign-up got there first: with this address, or as the one owner.
      if (!isUniqueViolation(err)) throw err;
      if (await this.emailTaken(email)) throw emailTaken();
      throw signupClosed();
    }
    return row;
  }

  private async emailTaken(email: string): Promise<boolean> {
    return (await this.db.selectFrom('users').select('id').where('email', '=', email).executeTakeFirst()) !== undefined;
  }

  /** The person with this email and password, or undefined (the same time is spent either way). */
  async checkPassword(email: string, password: string): Promise<UserRow | undefined> {
    const row = await this.db.selectFrom('users').selectAll().where('email', '=', email.toLowerCase()).executeTakeFirst();
    const ok = await verifyPassword(password, row?.password_hash ?? DECOY_HASH);
    return row && ok ? row : undefined;
  }

  async startSession(userId: string, now = Date.now()): Promise<{ token: string; expiresAt: number }> {
    const token = randomToken('hs_');
    const expiresAt = now + SESSION_TTL_MS;
    await this.db
      .insertInto('sessions')
      .values({ token_hash: sha256(token), user_id: userId, created_at: now, expires_at: expiresAt })
      .execute();
    return { token, expiresAt };
  }

  /** The person a session token belongs to; an expired session is deleted. */
  async sessionUser(token: string, now = Date.now()): Promise<UserRow | undefined> {
    const hash = sha256(token);
    const row = await this.db
      .selectFrom('sessions')
      .innerJoin('users', 'users.id', 'sessions.user_id')
      .selectAll('users')
      .select('sessions.expires_at as session_expires_at')
      .where('sessions.token_hash', '=', hash)
      .executeTakeFirst();
    if (!row) return undefined;
    const { session_expires_at, ...user } = row;
    if (session_expires_at <= now) {
      await this.endSession(token);
      return undefined;
    }
    return user;
  }

  async endSession(token: string): Promise<void> {
    await this.db.deleteFrom('sessions').where('token_hash', '=', sha256(token)).execute();
  }

  /** Drops expired sessions and invitations (housekeeping). */
  async prune(now = Date.now()): Promise<void> {
    await this.db.deleteFrom('sessions').where('expires_at', '<', now).execute();
    await this.db
      .deleteFrom('invitations')
      .where('expires_at', '<', now - INVITATION_TTL_MS)
      .execute();
  }

  async list(accountId: string): Promise<UserView[]> {
    const rows = await this.db.selectFrom('users').selectAll().where('account_id', '=', accountId).orderBy('created_at').execute();
    return rows.map(userView);
  }

  async invite(actor: UserRow, email: string, role: UserRole, now = Date.now()): Promise<{ token: string; invitation: InvitationView }> {
    requirePermission(actor, 'invite');
    if (role === 'owner') throw invalidField('role', 'must be admin or member (an account has one owner)');
    const token = randomToken('hi_');
    const row: InvitationRow = {
      id: newId(),
      account_id: actor.account_id,
      email: email.toLowerCase(),
      role,
      token_hash: sha256(token),
      invited_by: actor.id,
      created_at: now,
      expires_at: now + INVITATION_TTL_MS,
      accepted_at: null,
      token_sealed: this.box.encrypt(token),
    };
    await this.db.insertInto('invitations').values(row).execute();
    return { token, invitation: invitationView(row) };
  }

  /**
   * The account's invitations. For a person who may invite, each open one (not
   * accepted, not expired) comes with its token, so its link can be copied again;
   * the others never see a token.
   */
  async invitations(actor: UserRow, now = Date.now()): Promise<(InvitationView & { token: string | null })[]> {
    const rows = await this.db.selectFrom('invitations').selectAll().where('account_id', '=', actor.account_id).orderBy('created_at').execute();
    const mayInvite = can(actor.role, 'invite');
    return rows.map((row) => {
      const open = mayInvite && row.accepted_at === null && row.expires_at > now && row.token_sealed;
      return { ...invitationView(row), token: open ? this.box.decrypt(row.token_sealed!) : null };
    });
  }

  async withdrawInvitation(actor: UserRow, id: string): Promise<void> {
    requirePermission(actor, 'invite');
    const done = await this.db
      .deleteFrom('invitations')
      .where('account_id', '=', actor.account_id)
      .where('id', '=', id)
      .where('accepted_at', 'is', null)
      .executeTakeFirst();
    if (Number(done.numDeletedRows) === 0) throw notFound('Open invitation', id);
  }

  private async member(accountId: string, id: string): Promise<UserRow> {
    const row = await this.db.selectFrom('users').selectAll().where('account_id', '=', accountId).where('id', '=', id).executeTakeFirst();
    if (!row) throw notFound('Person', id);
    return row;
  }

  async setRole(actor: UserRow, id: string, role: UserRole): Promise<UserView> {
    requirePermission(actor, 'manage_people');
    const target = await this.member(actor.account_id, id);
    if (role === 'owner' || target.role === 'owner') throw invalidField('role', 'the owner keeps the owner role; others may be admin or member');
    await this.db.transaction().execute(async (trx) => {
      await trx.updateTable('users').set({ role }).where('id', '=', id).execute();
      // A member may not hold full access: grants they gave as an admin are narrowed to what a member may grant.
      const capped = scopesToJson(capScopesForRole(null, role));
      if (capped !== null) await trx.updateTable('oauth_tokens').set({ scopes: capped }).where('user_id', '=', id).where('scopes', 'is', null).execute();
    });
    return userView({ ...target, role });
  }

  /** Removes a person: their sessions end at once, and what they granted applications (codes not yet used, tokens) goes with them. */
  async remove(actor: UserRow, id: string): Promise<void> {
    requirePermission(actor, 'manage_people');
    const target = await this.member(actor.account_id, id);
    if (target.role === 'owner') throw new ApiError('owner_stays', 'The owner cannot be removed');
    await this.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('sessions').where('user_id', '=', id).execute();
      // What they granted to applications goes with them.
      await trx.updateTable('oauth_tokens').set({ revoked_at: Date.now() }).where('user_id', '=', id).where('revoked_at', 'is', null).execute();
      await trx.deleteFrom('oauth_codes').where('user_id', '=', id).execute();
      // Single sign-on remembers them as removed, so their provider account or their e-mail's domain does not let them back in.
      const removedAt = Date.now();
      await trx.updateTable('sso_identities').set({ user_id: null, removed_at: removedAt }).where('user_id', '=', id).execute();
      await trx
        .insertInto('removed_people')
        .values({ account_id: target.account_id, email: target.email, removed_at: removedAt })
        .onConflict((c) => c.columns(['account_id', 'email']).doUpdateSet({ removed_at: removedAt }))
        .execute();
      await trx.deleteFrom('users').where('id', '=', id).execute();
    });
  }
}
