/**
 * The calendar's read of posts: for each first item of a thread in a range,
 * only what its tile shows, as JSON text built by the database (the public
 * list's full summaries made a month of 1,000 posts weigh over half a megabyte).
 */
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.ts';
import type { Dialect } from '../../db/index.ts';
import { excerpt, instant, objectTextSql, value, type Shape } from '../../db/json-shape.ts';
import { hotQuery } from '../../db/hot-query.ts';
import { TILE_TEXT_CHARS } from '../../contract/routes/app.ts';

/** The calendarTile of src/contract/routes/app.ts. */
const TILE: Shape = {
  id: value('posts.id'),
  text: excerpt('posts.content', TILE_TEXT_CHARS),
  publishDate: instant('posts.publish_at'),
  state: value('posts.state'),
  error: value('posts.error'),
  approval: value('posts.approval'),
  seriesId: value('posts.series_id'),
  channel: value('posts.channel_id'),
};

/** An account's posts (the first item of each thread) in a time range, in the order of the index on (account, time, id). */
export function firstItemsBetween(db: Kysely<Database>, p: { account: string; from: number; to: number }) {
  return db
    .selectFrom('posts')
    .where('posts.account_id', '=', p.account)
    .where('posts.publish_at', '>=', p.from)
    .where('posts.publish_at', '<=', p.to)
    .where('posts.deleted_at', 'is', null)
    .where('posts.thread_index', '=', 0)
    .orderBy('posts.publish_at')
    .orderBy('posts.id');
}

/** The tiles' rows. */
export function calendarTilesQuery(db: Kysely<Database>, dialect: Dialect) {
  return hotQuery<{ account: string; from: number; to: number }, { item: string }>(db, ['account', 'from', 'to'], (p) =>
    firstItemsBetween(db, p).select(objectTextSql(TILE, dialect).as('item')),
  );
}
