/**
 * The statements the engine runs for every post it publishes, compiled once
 * (building a Kysely query costs more CPU than SQLite takes to run it).
 */
import type { Kysely } from 'kysely';
import { hotQuery } from '../db/hot-query.ts';
import type { ChannelRow, Database, PostRow } from '../db/schema.ts';

export type EngineQueries = ReturnType<typeof engineQueries>;

export function engineQueries(db: Kysely<Database>) {
  return {
    channel: hotQuery<{ id: string }, ChannelRow>(db, ['id'], (p) => db.selectFrom('channels').selectAll().where('id', '=', p.id)),
    thread: hotQuery<{ group: string }, PostRow>(db, ['group'], (p) =>
      db.selectFrom('posts').selectAll().where('group_id', '=', p.group).where('deleted_at', 'is', null).orderBy('thread_index'),
    ),
    /**
     * An attempt whose fate nobody settled: still 'sending' (its worker died), or
     * 'unknown' since the post last changed (its worker died before failing the post;
     * a retry or an edit by the user changes the post and so lets it go again).
     */
    unsettledAttempt: hotQuery<{ post: string; since: number }, { id: string; outcome: string; started_at: number }>(db, ['post', 'since'], (p) =>
      db
        .selectFrom('post_attempts')
        .select(['id', 'outcome', 'started_at'])
        .where('post_id', '=', p.post)
        .where((eb) => eb.or([eb('outcome', '=', 'sending'), eb.and([eb('outcome', '=', 'unknown'), eb('finished_at', '>=', p.since)])])),
    ),
    /**
     * Ends an attempt still sending. One another worker has judged already (its lease ran out mid-send, so it
     * recorded "unknown" and may have sent again) keeps that verdict: it is why the post may have gone out twice.
     */
    finishAttempt: hotQuery<{ id: string; outcome: string; detail: string | null; at: number }, never>(db, ['id', 'outcome', 'detail', 'at'], (p) =>
      db.updateTable('post_attempts').set({ outcome: p.outcome, detail: p.detail, finished_at: p.at }).where('id', '=', p.id).where('outcome', '=', 'sending'),
    ),
  };
}
