/**
 * Herald's e-mail, as the rest of the code sees it: letters are put in the
 * outbox (the mail_outbox table, in the caller's transaction where there is
 * one) and a background sender (scheduler/mail-sender.ts) sends them, so no
 * request waits for an SMTP server. Also each person's choice of what they get,
 * and the mails that follow account events (a failed post, a channel to
 * reconnect or whose access ends soon), hooked onto Events.record.
 */
import type { Kysely } from 'kysely';
import type { MailConfig } from '../config.ts';
import type { Database, MailChoicesRow } from '../db/schema.ts';
import type { AccountEvent } from '../domain/events.ts';
import { excerpt } from '../domain/notifications.ts';
import { newId } from '../lib/ids.ts';
import type { SecretBox } from '../lib/secrets.ts';
import { type DIGESTS, type MailChoices, type MailChoicesChange, MAIL_CHOICE_DEFAULTS } from '../contract/mail.ts';
import { expiringLetter, type Letter, mailLanguage, postFailedLetter, reconnectLetter } from './compose.ts';

export type MailKind = 'invitation' | 'password_reset' | 'post_failed' | 'channel_reconnect' | 'access_expiring' | 'digest';

/** How long apart digests come. */
export const DIGEST_PERIOD_MS: Record<(typeof DIGESTS)[number], number> = { off: 0, daily: 86_400_000, weekly: 7 * 86_400_000 };

/** Where a mail sends its reader in the web application. */
export function webLinks(publicUrl: string) {
  return {
    choices: `${publicUrl}/settings/mail`,
    post: (id: string) => `${publicUrl}/posts/${encodeURIComponent(id)}`,
    channels: `${publicUrl}/channels`,
    calendar: `${publicUrl}/`,
    /** The token rides in the fragment: browsers never send it to a server, so it stays out of access logs. */
    reset: (token: string) => `${publicUrl}/reset-password#token=${encodeURIComponent(token)}`,
  };
}

/** A person who may receive a mail: where, in which language and zone. */
export interface Reader {
  id: string;
  email: string;
  language: string | null;
  zone: string | null;
}

function choicesView(row: MailChoicesRow | undefined): MailChoices {
  if (!row) return MAIL_CHOICE_DEFAULTS;
  return {
    postFailed: row.post_failed === 1,
    channelReconnect: row.channel_reconnect === 1,
    accessExpiring: row.access_expiring === 1,
    digest: row.digest as MailChoices['digest'],
  };
}

/** A date and time as the reader reads them: their language, their zone (UTC when they chose none). */
export function readerTime(at: number | string, reader: Pick<Reader, 'language' | 'zone'>): string {
  const format = new Intl.DateTimeFormat(mailLanguage(reader.language), { dateStyle: 'long', timeStyle: 'short', timeZone: reader.zone ?? 'UTC' });
  return `${format.format(new Date(at))}${reader.zone ? '' : ' UTC'}`;
}

export class Mail {
  /** Set by this process's sender: it looks at the outbox at once. */
  wake: () => void = () => {};

  constructor(
    private readonly db: Kysely<Database>,
    private readonly box: SecretBox,
    private readonly publicUrl: string,
    /** Undefined: mail is off, and whatever would be mailed is offered as a link to copy. */
    readonly config: MailConfig | undefined,
  ) {}

  get enabled(): boolean {
    return this.config !== undefined;
  }

  get links() {
    return webLinks(this.publicUrl);
  }

  /** Puts a letter in the outbox; false (nothing queued) when mail is off. `db`: the caller's transaction. */
  async enqueue(kind: MailKind, to: string, letter: Letter, userId: string | null, db: Kysely<Database> = this.db, now = Date.now()): Promise<boolean> {
    if (!this.enabled) return false;
    await db
      .insertInto('mail_outbox')
      .values({
        id: newId(),
        kind,
        user_id: userId,
        to_address: to,
        subject: letter.subject,
        body_sealed: this.box.encrypt(JSON.stringify({ text: letter.text, html: letter.html })),
        state: 'pending',
        attempts: 0,
        next_attempt_at: now,
        lease_owner: null,
        lease_until: null,
        last_error: null,
        created_at: now,
        sent_at: null,
      })
      .execute();
    // In a transaction, the sender may look before the commit: it finds the letter at its next look then.
    this.wake();
    return true;
  }

  /** The body of a letter taken from the outbox. */
  open(sealed: string): { text: string; html: string } {
    return JSON.parse(this.box.decrypt(sealed)) as { text: string; html: string };
  }

  async choices(userId: string): Promise<MailChoices> {
    return choicesView(await this.db.selectFrom('mail_choices').selectAll().where('user_id', '=', userId).executeTakeFirst());
  }

  /** Fields left out keep their value; choosing a digest (or another period) makes the first one due a period from now. */
  async choose(userId: string, change: MailChoicesChange, now = Date.now()): Promise<MailChoices> {
    const row = await this.db.selectFrom('mail_choices').selectAll().where('user_id', '=', userId).executeTakeFirst();
    const before = choicesView(row);
    const next = { ...before, ...change };
    const period = DIGEST_PERIOD_MS[next.digest];
    const values: MailChoicesRow = {
      user_id: userId,
      post_failed: next.postFailed ? 1 : 0,
      channel_reconnect: next.channelReconnect ? 1 : 0,
      access_expiring: next.accessExpiring ? 1 : 0,
      digest: next.digest,
      digest_due_at: period === 0 ? null : next.digest === before.digest && row?.digest_due_at ? row.digest_due_at : now + period,
      updated_at: now,
    };
    const { user_id: _, ...columns } = values;
    await this.db
      .insertInto('mail_choices')
      .values(values)
      .onConflict((c) => c.column('user_id').doUpdateSet(columns))
      .execute();
    return choicesView(values);
  }

  /** The account's people who chose to get mails of `choice`, with their language and zone. */
  async readers(accountId: string, choice: 'postFailed' | 'channelReconnect' | 'accessExpiring', db: Kysely<Database> = this.db): Promise<Reader[]> {
    const rows = await db
      .selectFrom('users')
      .leftJoin('mail_choices', 'mail_choices.user_id', 'users.id')
      .leftJoin('person_preferences', 'person_preferences.user_id', 'users.id')
      .select(['users.id', 'users.email', 'person_preferences.language', 'person_preferences.zone'])
      .select(['mail_choices.post_failed', 'mail_choices.channel_reconnect', 'mail_choices.access_expiring'])
      .where('users.account_id', '=', accountId)
      .execute();
    const column = { postFailed: 'post_failed', channelReconnect: 'channel_reconnect', accessExpiring: 'access_expiring' } as const;
    return rows
      .filter((row) => {
        const chosen = row[column[choice]];
        return chosen === null ? MAIL_CHOICE_DEFAULTS[choice] : chosen === 1;
      })
      .map(({ id, email, language, zone }) => ({ id, email, language, zone }));
  }

  /**
   * The mails that follow account events, queued in the events' transaction: a
   * failed post, a channel that needs connecting again, access that ends soon.
   */
  async onEvents(tx: Kysely<Database>, accountId: string, events: AccountEvent[]): Promise<void> {
    if (!this.enabled) return;
    for (const event of events) {
      if (event.type === 'post.failed') await this.postFailed(tx, accountId, event.data);
      else if (event.type === 'channel.needs_reconnect') await this.channelEvent(tx, accountId, event.data);
    }
  }

  private async postFailed(tx: Kysely<Database>, accountId: string, data: Record<string, unknown>): Promise<void> {
    const post = data.post as { id: string; content: string; error: string | null; integration: { name: string } };
    const readers = await this.readers(accountId, 'postFailed', tx);
    if (readers.length === 0) return;
    // The web application's post page shows a thread from its first item.
    const row = await tx.selectFrom('posts').select('root_id').where('id', '=', post.id).executeTakeFirst();
    const postUrl = this.links.post(row?.root_id ?? post.id);
    for (const reader of readers) {
      const letter = postFailedLetter(mailLanguage(reader.language), {
        channel: post.integration.name,
        excerpt: excerpt(post.content),
        reason: post.error ?? '',
        postUrl,
        choicesUrl: this.links.choices,
      });
      await this.enqueue('post_failed', reader.email, letter, reader.id, tx);
    }
  }

  private async channelEvent(tx: Kysely<Database>, accountId: string, data: Record<string, unknown>): Promise<void> {
    const channel = (data.channel as { name: string }).name;
    const expiresAt = typeof data.accessExpiresAt === 'string' ? data.accessExpiresAt : undefined;
    const readers = await this.readers(accountId, expiresAt ? 'accessExpiring' : 'channelReconnect', tx);
    for (const reader of readers) {
      const language = mailLanguage(reader.language);
      const links = { channelsUrl: this.links.channels, choicesUrl: this.links.choices };
      const letter = expiresAt
        ? expiringLetter(language, { channel, when: readerTime(expiresAt, reader), ...links })
        : reconnectLetter(language, { channel, reason: String(data.reason ?? ''), ...links });
      await this.enqueue(expiresAt ? 'access_expiring' : 'channel_reconnect', reader.email, letter, reader.id, tx);
    }
  }

  /** Sent and given-up letters are kept a while (what was sent, why one was not), then dropped. */
  async prune(now = Date.now()): Promise<void> {
    await this.db
      .deleteFrom('mail_outbox')
      .where('state', '!=', 'pending')
      .where('created_at', '<', now - KEEP_FINISHED_MS)
      .execute();
  }
}

const KEEP_FINISHED_MS = 30 * 86_400_000;
