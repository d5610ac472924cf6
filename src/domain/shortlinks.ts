/** Short links served by Herald itself at {public_url}/s/{code}, with a click count. */
import type { Kysely } from 'kysely';
import type { Database, ShortLinkRow } from '../db/schema.ts';
import { shortCode } from '../lib/ids.ts';

const URL_IN_TEXT = /\bhttps?:\/\/[^\s<>"')\]]+[^\s<>"')\].,;:!?]/gi;

export interface PendingLinks {
  rows: ShortLinkRow[];
}

/**
 * Replaces every link in `text` by a short link and collects the rows to store;
 * nothing is written here, so a request that later fails validation leaves no trace.
 * Links that are already short links of this server are kept.
 */
export function shortenLinks(text: string, accountId: string, publicUrl: string, pending: PendingLinks): string {
  const own = `${publicUrl}/s/`;
  return text.replace(URL_IN_TEXT, (url) => {
    if (url.startsWith(own)) return url;
    const existing = pending.rows.find((r) => r.url === url);
    const row = existing ?? { code: shortCode(), account_id: accountId, url, clicks: 0, created_at: Date.now() };
    if (!existing) pending.rows.push(row);
    return own + row.code;
  });
}

/** The target of a short link, counting the click; undefined for an unknown code. */
export async function followShortLink(db: Kysely<Database>, code: string): Promise<string | undefined> {
  const row = await db
    .updateTable('short_links')
    .set((eb) => ({ clicks: eb('clicks', '+', 1) }))
    .where('code', '=', code)
    .returning('url')
    .executeTakeFirst();
  return row?.url;
}

export async function shortLinkStats(db: Kysely<Database>, accountId: string, code: string) {
  return db.selectFrom('short_links').select(['code', 'url', 'clicks', 'created_at']).where('account_id', '=', accountId).where('code', '=', code).executeTakeFirst();
}
