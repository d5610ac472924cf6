/**
 * The daily and weekly digests: every engine looks now and then for people
 * whose digest is due, and takes each one by moving its due time a period ahead
 * (db/lease.ts), so one worker writes it while the others pass. A digest lists
 * the posts published and failed in the account over the period; a period with
 * neither sends nothing.
 */
import { sql } from 'kysely';
import type { Services } from '../services.ts';
import { claimRows } from '../db/lease.ts';
import { excerpt } from '../domain/notifications.ts';
import { digestLetter, type DigestLine, mailLanguage } from '../mail/compose.ts';
import { DIGEST_PERIOD_MS, readerTime } from '../mail/mail.ts';
import { Periodic } from './periodic.ts';

const LOOK_EVERY_MS = 10 * 60_000;
/** People taken per look and period; the rest wait for the next look. */
const BATCH = 50;
/** Posts listed per part of a digest. */
const MOST_LISTED = 100;

export class MailDigest extends Periodic {
  constructor(
    private readonly services: Services,
    everyMs = LOOK_EVERY_MS,
  ) {
    super('mail digest', everyMs, (now) => this.sendDue(now));
  }

  private async sendDue(now: number): Promise<number> {
    if (!this.services.mail.enabled) return 0;
    let sent = 0;
    for (const period of ['daily', 'weekly'] as const) {
      const { db, dialect } = this.services.store;
      const ms = DIGEST_PERIOD_MS[period];
      const due = await claimRows(db, dialect, {
        table: 'mail_choices',
        as: 'c',
        due: sql`c.digest = ${period} AND c.digest_due_at IS NOT NULL AND c.digest_due_at <= ${now}`,
        order: sql`c.digest_due_at`,
        limit: BATCH,
        now,
        hold: { postpone: 'digest_due_at', ms },
      });
      for (const row of due) if (await this.send(row.user_id, period === 'weekly', now - ms, now)) sent++;
    }
    return sent;
  }

  /** Writes one person's digest of [since, until) into the outbox; false when there was nothing to tell. */
  private async send(userId: string, weekly: boolean, since: number, until: number): Promise<boolean> {
    const { db } = this.services.store;
    const { mail } = this.services;
    const person = await db
      .selectFrom('users')
      .leftJoin('person_preferences', 'person_preferences.user_id', 'users.id')
      .select(['users.id', 'users.email', 'users.account_id', 'person_preferences.language', 'person_preferences.zone'])
      .where('users.id', '=', userId)
      .executeTakeFirst();
    if (!person) return false;
    const posts = await db
      .selectFrom('posts')
      .innerJoin('channels', 'channels.id', 'posts.channel_id')
      .select(['posts.content', 'posts.state', 'posts.error', 'channels.name as channel'])
      .where('posts.account_id', '=', person.account_id)
      .where('posts.parent_id', 'is', null)
      .where('posts.deleted_at', 'is', null)
      .where('posts.state', 'in', ['PUBLISHED', 'ERROR'])
      .where('posts.updated_at', '>=', since)
      .where('posts.updated_at', '<', until)
      .orderBy('posts.updated_at')
      .limit(2 * MOST_LISTED)
      .execute();
    const line = (p: (typeof posts)[number]): DigestLine => ({ channel: p.channel, excerpt: excerpt(p.content), reason: p.error ?? undefined });
    const published = posts
      .filter((p) => p.state === 'PUBLISHED')
      .slice(0, MOST_LISTED)
      .map(line);
    const failed = posts
      .filter((p) => p.state === 'ERROR')
      .slice(0, MOST_LISTED)
      .map(line);
    if (published.length === 0 && failed.length === 0) return false;
    const letter = digestLetter(mailLanguage(person.language), {
      weekly,
      since: readerTime(since, person),
      published,
      failed,
      calendarUrl: mail.links.calendar,
      choicesUrl: mail.links.choices,
    });
    return mail.enqueue('digest', person.email, letter, person.id);
  }
}
