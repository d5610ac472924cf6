/** Short links served by Herald itself at {public_url}/s/{code}, with a click count. */
import type { Kysely } from 'kysely';
import type { Database, ShortLinkRow } from '../../db/schema.ts';
import { iso } from '../../lib/time.ts';
import { notFound } from '../errors.ts';
import { shortCode } from '../../lib/ids.ts';

const URL_IN_TEXT = /\bhttps?:\/\/[^\s<>"'\]]+/gi;

/**
 * Splits a matched link from punctuation that ends the sentence around it: a
 * trailing ".,;:!?" and a ")" without its "(" in the link (so Wikipedia's
 * "/wiki/Rust_(language)" keeps its parenthesis, "(see https://a.b/c)" does not).
 */
function splitTrailing(match: string): [url: string, tail: string] {
  let end = match.length;
  const opened = (text: string) => text.split('(').length - text.split(')').length;
  while (end > 0 && (/[.,;:!?]/.test(match[end - 1]) || (match[end - 1] === ')' && opened(match.slice(0, end)) < 0))) end--;
  return [match.slice(0, end), match.slice(end)];
}

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
  return text.replace(URL_IN_TEXT, (match) => {
    const [url, tail] = splitTrailing(match);
    if (url.startsWith(own) || !/^https?:\/\/[^/?#]/i.test(url)) return match;
    const existing = pending.rows.find((r) => r.url === url);
    const row = existing ?? { code: shortCode(), account_id: accountId, url, clicks: 0, created_at: Date.now() };
    if (!existing) pending.rows.push(row);
    return own + row.code + tail;
  });
}

/**
 * The target of a short link; `countClick` adds one to its clicks (GET, not HEAD,
 * so link-preview crawlers that only look do not inflate the figure).
 */
export async function followShortLink(db: Kysely<Database>, code: string, countClick: boolean): Promise<string | undefined> {
  if (!countClick) {
    return (await db.selectFrom('short_links').select('url').where('code', '=', code).executeTakeFirst())?.url;
  }
  const row = await db
    .updateTable('short_links')
    .set((eb) => ({ clicks: eb('clicks', '+', 1) }))
    .where('code', '=', code)
    .returning('url')
    .executeTakeFirst();
  return row?.url;
}

/** Where one of the account's short links points and how often it was followed (404 when it has no such link). */
export async function shortLinkStats(db: Kysely<Database>, accountId: string, code: string) {
  const link = await db
    .selectFrom('short_links')
    .select(['code', 'url', 'clicks', 'created_at'])
    .where('account_id', '=', accountId)
    .where('code', '=', code)
    .executeTakeFirst();
  if (!link) throw notFound('Short link', code);
  return { code: link.code, url: link.url, clicks: link.clicks, createdAt: iso(link.created_at) };
}
