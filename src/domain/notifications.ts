/** Messages for the account's people: failures, successes, channels to reconnect. */
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.ts';
import { newId } from '../lib/ids.ts';
import { iso } from '../lib/time.ts';

export const NOTIFICATIONS_PAGE_SIZE = 50;

export class Notifications {
  constructor(private readonly db: Kysely<Database>) {}

  /** `db`: a transaction, when the message belongs to a change being written. */
  async add(accountId: string, content: string, link: string | null = null, db: Kysely<Database> = this.db): Promise<void> {
    await db.insertInto('notifications').values({ id: newId(), account_id: accountId, content, link, created_at: Date.now() }).execute();
  }

  /** Newest first; `page` counts from 0. */
  async page(accountId: string, page: number) {
    const limit = NOTIFICATIONS_PAGE_SIZE;
    const [rows, count] = await Promise.all([
      this.db
        .selectFrom('notifications')
        .selectAll()
        .where('account_id', '=', accountId)
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(limit)
        .offset(page * limit)
        .execute(),
      this.db
        .selectFrom('notifications')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('account_id', '=', accountId)
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
