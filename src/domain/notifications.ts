/** Messages for the account's people: failures, successes, channels to reconnect. */
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.ts';
import { newId } from '../lib/ids.ts';
import { iso } from '../lib/time.ts';

export const NOTIFICATIONS_PAGE_SIZE = 50;

/** The first words of a post, for a line that names it. */
export function excerpt(content: string): string {
  const flat = content.replace(/\s+/g, ' ').trim();
  return flat.length > 60 ? `${flat.slice(0, 57)}…` : flat || '(no text)';
}

/** What a person reads when a post fails: which post, on which channel, and why. */
export function postFailedNotice(post: { content: string }, channelName: string | undefined, reason: string): string {
  const where = channelName ? ` on ${channelName}` : '';
  return `The post${where} “${excerpt(post.content)}” could not be published: ${reason}`;
}

export class Notifications {
  constructor(private readonly db: Kysely<Database>) {}

  /** `db`: a transaction, when the message belongs to a change being written. */
  async add(accountId: string, content: string, link: string | null = null, db: Kysely<Database> = this.db): Promise<void> {
    await db.insertInto('notifications').values({ id: newId(), account_id: accountId, content, link, created_at: Date.now() }).execute();
  }

  /**
   * Newest first; `page` counts from 0. For a person (`personId`), only what
   * happened since they joined the account: what came before was not theirs.
   */
  async page(accountId: string, page: number, personId?: string) {
    const limit = NOTIFICATIONS_PAGE_SIZE;
    const since = personId
      ? ((await this.db.selectFrom('users').select('created_at').where('id', '=', personId).where('account_id', '=', accountId).executeTakeFirst())
          ?.created_at ?? 0)
      : 0;
    const [rows, count] = await Promise.all([
      this.db
        .selectFrom('notifications')
        .selectAll()
        .where('account_id', '=', accountId)
        .where('created_at', '>=', since)
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(limit)
        .offset(page * limit)
        .execute(),
      this.db
        .selectFrom('notifications')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('account_id', '=', accountId)
        .where('created_at', '>=', since)
        .executeTakeFirstOrThrow(),
    ]);
    const total = Number(count.n);
    return {
      notifications: rows.map((r) => ({ id: r.id, content: r.content, link: r.link, createdAt: iso(r.created_at) })),
      total,
      page,
      limit,
      hasMore: (page + 1) * limit < total,
    };
  }
}
