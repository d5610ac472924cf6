/**
 * Single sign-on: who a person signed in at the OpenID Connect provider is
 * here, and the owner's choices (allowed e-mail domains and their role, and
 * whether only the owner may still use a password). The protocol itself is in
 * src/api/app/oidc.ts; this module sees only the checked claims.
 *
 * Who gets in, in this order: a provider identity linked before (issuer +
 * subject, whatever its e-mail is now); then only a verified e-mail: a person
 * known by it (their identity is linked), an open invitation for it (joins with
 * the invitation's role), an account allowing its domain (joins with the role
 * the owner chose). A person removed from an account is not let back in
 * through its domain; only a new invitation brings them back.
 */
import type { Kysely } from 'kysely';
import type { Database, InvitationRow, UserRole, UserRow } from '../db/schema.ts';
import { isUniqueViolation } from '../db/constraint.ts';
import { newId } from '../lib/ids.ts';
import { randomToken, sha256, type SecretBox } from '../lib/secrets.ts';
import { hashPassword } from './passwords.ts';
import { requirePermission } from './people.ts';

/** The claims Herald reads, after the ID token (and the UserInfo answer) were checked. */
export interface ProviderPerson {
  issuer: string;
  subject: string;
  email?: string;
  emailVerified: boolean;
  name?: string;
}

/** Why single sign-on did not let someone in; the sign-in page explains each. */
export type Refusal = 'unverified_email' | 'not_invited' | 'removed';

export class SsoRefused extends Error {
  constructor(readonly reason: Refusal) {
    super(`single sign-on refused: ${reason}`);
  }
}

export interface SsoSettings {
  /** Lower-case e-mail domains whose people join the account on their first sign-in. */
  allowedDomains: string[];
  /** The role they join with. */
  domainRole: Exclude<UserRole, 'owner'>;
  /** Only the owner may sign in with a password; everyone else uses single sign-on. */
  passwordsOff: boolean;
}

const DEFAULTS: SsoSettings = { allowedDomains: [], domainRole: 'member', passwordsOff: false };

function domainOf(email: string): string {
  return email.slice(email.lastIndexOf('@') + 1);
}

/** A sign-in under way at the provider: kept sealed in a cookie of the browser that started it, so any process can finish it. */
export interface SignInUnderWay {
  state: string;
  nonce: string;
  codeVerifier: string;
  startedAt: number;
  /** Where to go once signed in (a path of this server, checked again when followed). */
  next?: string;
}

export class SingleSignOn {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly box: SecretBox,
  ) {}

  seal(flow: SignInUnderWay): string {
    return this.box.encrypt(JSON.stringify(flow));
  }

  /** The sign-in sealed by seal(), or undefined when the value is not one (damaged, or sealed with another secret). */
  open(sealed: string): SignInUnderWay | undefined {
    try {
      return JSON.parse(this.box.decrypt(sealed)) as SignInUnderWay;
    } catch {
      // Anything a browser sends back that does not open is not a sign-in Herald started.
      return undefined;
    }
  }

  async settings(accountId: string): Promise<SsoSettings> {
    const row = await this.db.selectFrom('sso_settings').selectAll().where('account_id', '=', accountId).executeTakeFirst();
    if (!row) return { ...DEFAULTS };
    return { allowedDomains: JSON.parse(row.allowed_domains), domainRole: row.domain_role as SsoSettings['domainRole'], passwordsOff: row.passwords_off === 1 };
  }

  /** Whether joining through this invitation with a password is closed (its account turned passwords off); false for an unknown token. */
  async passwordsOffForInvitation(token: string): Promise<boolean> {
    const invitation = await this.db.selectFrom('invitations').select('account_id').where('token_hash', '=', sha256(token)).executeTakeFirst();
    return invitation !== undefined && (await this.settings(invitation.account_id)).passwordsOff;
  }

  /** The owner's choices for their account (domains are stored lower-case, each once). */
  async saveSettings(actor: UserRow, input: SsoSettings, now = Date.now()): Promise<SsoSettings> {
    requirePermission(actor, 'manage_people');
    const saved: SsoSettings = { ...input, allowedDomains: [...new Set(input.allowedDomains.map((d) => d.toLowerCase()))] };
    const values = {
      allowed_domains: JSON.stringify(saved.allowedDomains),
      domain_role: saved.domainRole,
      passwords_off: saved.passwordsOff ? 1 : 0,
      updated_at: now,
    };
    await this.db
      .insertInto('sso_settings')
      .values({ account_id: actor.account_id, ...values })
      .onConflict((c) => c.column('account_id').doUpdateSet(values))
      .execute();
    return saved;
  }

  /** The person this provider identity is here, joining an account when an invitation or an allowed domain says so. */
  async admit(person: ProviderPerson, now = Date.now()): Promise<UserRow> {
    try {
      return await this.findOrJoin(person, now);
    } catch (err) {
      // A parallel first sign-in of the same person created them (or linked the identity) first.
      if (!isUniqueViolation(err)) throw err;
      return this.findOrJoin(person, now);
    }
  }

  private async findOrJoin(person: ProviderPerson, now: number): Promise<UserRow> {
    const identity = await this.db
      .selectFrom('sso_identities')
      .selectAll()
      .where('issuer', '=', person.issuer)
      .where('subject', '=', person.subject)
      .executeTakeFirst();
    if (identity?.user_id) {
      const linked = await this.db.selectFrom('users').selectAll().where('id', '=', identity.user_id).executeTakeFirst();
      if (linked) return linked;
    }
    if (!person.email || !person.emailVerified) throw new SsoRefused('unverified_email');
    const email = person.email.toLowerCase();

    const known = await this.db.selectFrom('users').selectAll().where('email', '=', email).executeTakeFirst();
    if (known) {
      await this.link(this.db, person, known, email, now);
      return known;
    }

    const invitation = await this.db
      .selectFrom('invitations')
      .selectAll()
      .where('email', '=', email)
      .where('accepted_at', 'is', null)
      .where('expires_at', '>', now)
      .orderBy('created_at', 'desc')
      .executeTakeFirst();
    if (invitation) return this.join(person, email, invitation.account_id, invitation.role, invitation, now);

    if (identity?.removed_at) throw new SsoRefused('removed');
    const domain = domainOf(email);
    const allowing = (await this.db.selectFrom('sso_settings').select(['account_id', 'allowed_domains', 'domain_role']).execute()).find((row) =>
      (JSON.parse(row.allowed_domains) as string[]).includes(domain),
    );
    if (!allowing) throw new SsoRefused('not_invited');
    const removed = await this.db
      .selectFrom('removed_people')
      .select('email')
      .where('account_id', '=', allowing.account_id)
      .where('email', '=', email)
      .executeTakeFirst();
    if (removed) throw new SsoRefused('removed');
    return this.join(person, email, allowing.account_id, allowing.domain_role, undefined, now);
  }

  /** A new person in the account; they have no password (a random one nobody knows), so they sign in through the provider. */
  private async join(person: ProviderPerson, email: string, accountId: string, role: UserRole, invitation: InvitationRow | undefined, now: number) {
    const row: UserRow = {
      id: newId(),
      account_id: accountId,
      email,
      name: person.name?.trim().slice(0, 200) || email.split('@')[0]!,
      password_hash: await hashPassword(randomToken()),
      role,
      created_at: now,
    };
    await this.db.transaction().execute(async (trx) => {
      await trx.insertInto('users').values(row).execute();
      if (invitation) {
        await trx.updateTable('invitations').set({ accepted_at: now }).where('id', '=', invitation.id).execute();
        await trx.deleteFrom('removed_people').where('account_id', '=', accountId).where('email', '=', email).execute();
      }
      await this.link(trx, person, row, email, now);
    });
    return row;
  }

  /** Remembers the provider identity as this person's, so a later change of e-mail at the provider still finds them. */
  private async link(db: Kysely<Database>, person: ProviderPerson, user: UserRow, email: string, now: number): Promise<void> {
    const values = { account_id: user.account_id, user_id: user.id, email, removed_at: null };
    await db
      .insertInto('sso_identities')
      .values({ issuer: person.issuer, subject: person.subject, created_at: now, ...values })
      .onConflict((c) => c.columns(['issuer', 'subject']).doUpdateSet(values))
      .execute();
  }
}
