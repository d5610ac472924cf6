/**
 * The post queue's transitions, in one place: every write that moves a post
 * between QUEUE, PUBLISHED, ERROR and deleted, and the engine's record of each
 * attempt to send it, whether the API, the engine, a follow-up or the removal of
 * a channel asks for it. Each is one statement (or runs inside the caller's
 * transaction, with the events it causes), so the rules below hold everywhere:
 *
 * - a change a person makes takes the post back from any worker: its version
 *   goes up (the worker's attempt no longer matches) and its lease is cleared;
 * - a post a worker is sending right now (a live lease) is not changed under
 *   it: the change answers 409 and may be tried again in a moment;
 * - the engine's writes before and while it sends apply only while it still
 *   holds the lease: `renewLease`, `handBack`, `beginAttempt` (which also needs
 *   the version it claimed) and `failWithThread` (only while the post is as the
 *   engine read it: same version, same holder, or none for a due post nobody
 *   claimed);
 * - the writes after the network took the post need no lease, since it went out
 *   whatever became of the claim: `complete`, with `scheduleReply` and
 *   `followUp` in its transaction; and, for a post the network finishes later,
 *   `confirmRelease` and `failAfterPublish` on a PUBLISHED post no worker holds
 *   (the follow-up's own claim keeps it to one worker). `settleAbandonedAttempt`
 *   needs none either: whoever claims the post judges a dead worker's attempt
 *   the same way.
 *
 * Claiming due posts is one statement of its own (src/scheduler/claim.ts, through
 * the store's one claim in src/db/lease.ts).
 */
import { sql, type ExpressionBuilder, type Kysely } from 'kysely';
import { extendLease, heldBy, leaseFree, leaseLive, UNLEASED } from '../../db/lease.ts';
import type { ApprovalState, Database, PostRow, PostState } from '../../db/schema.ts';
import { conflict } from '../errors.ts';

type Db = Kysely<Database>;

/** What a person's change does to a worker's hold on the post. */
function takenBack(eb: ExpressionBuilder<Database, 'posts'>) {
  return { version: eb('version', '+', 1), lease_owner: null, lease_until: null };
}

/** Refuses (409) while a worker holds a live lease on an item of the group. */
export async function assertNotPublishing(db: Db, groupIds: string[], now: number): Promise<void> {
  if (groupIds.length === 0) return;
  const busy = await db.selectFrom('posts').select('id').where('group_id', 'in', groupIds).where(leaseLive(now)).executeTakeFirst();
  if (busy) throw conflict('publishing', 'This post is being published right now; try again in a few seconds');
}

/** A new post and its thread. */
export async function addThread(db: Db, rows: PostRow[]): Promise<void> {
  await db.insertInto('posts').values(rows).execute();
}

/** type "update": the thread is written again in place (its root keeps its id); `rows` carry the next version. */
export async function rewriteThread(db: Db, groupId: string, rows: PostRow[]): Promise<void> {
  const [root, ...replies] = rows;
  await db.deleteFrom('posts').where('group_id', '=', groupId).where('thread_index', '>', 0).execute();
  const { id, created_at: _created, ...rootFields } = root;
  await db.updateTable('posts').set(rootFields).where('id', '=', id).execute();
  if (replies.length > 0) await db.insertInto('posts').values(replies).execute();
}

/** The rows a deletion removed, as the post.deleted event describes them. */
export type DeletedPost = Pick<
  PostRow,
  'id' | 'thread_index' | 'group_id' | 'state' | 'publish_at' | 'content' | 'channel_id' | 'release_id' | 'release_url' | 'error'
>;

/**
 * Deletes whole groups (a post and its thread), taking them back from any worker.
 * `states` limits it to posts not yet published (removing a channel keeps its history).
 */
export async function deleteGroups(
  db: Db,
  where: { account: string; groups?: string[]; channel?: string; states?: PostState[] },
  now: number,
): Promise<DeletedPost[]> {
  let query = db
    .updateTable('posts')
    .set((eb) => ({ deleted_at: now, updated_at: now, ...takenBack(eb) }))
    .where('account_id', '=', where.account)
    .where('deleted_at', 'is', null);
  if (where.groups) query = query.where('group_id', 'in', where.groups);
  if (where.channel) query = query.where('channel_id', '=', where.channel);
  if (where.states) query = query.where('state', 'in', where.states);
  return query.returning(['id', 'thread_index', 'group_id', 'state', 'publish_at', 'content', 'channel_id', 'release_id', 'release_url', 'error']).execute();
}

/** What a person may change of a whole unpublished group. */
export type GroupChange = Partial<Pick<PostRow, 'state' | 'error' | 'settings' | 'publish_at' | 'approval'>>;

/** Changes every unpublished item of a group (state, error, settings, when it is due). */
export async function changeGroup(db: Db, groupId: string, set: GroupChange, now: number): Promise<void> {
  await db
    .updateTable('posts')
    .set((eb) => ({ ...set, updated_at: now, ...takenBack(eb) }))
    .where('group_id', '=', groupId)
    .where('deleted_at', 'is', null)
    .where('state', '!=', 'PUBLISHED')
    .execute();
}

/**
 * An owner's or admin's decision on a group that waits for approval (a DRAFT whose
 * approval is one of `from`). Returns how many items changed: 0 when the post was
 * decided, changed or deleted meanwhile.
 */
export async function decideApproval(db: Db, groupId: string, from: ApprovalState[], set: GroupChange, now: number): Promise<number> {
  const done = await db
    .updateTable('posts')
    .set((eb) => ({ ...set, updated_at: now, ...takenBack(eb) }))
    .where('group_id', '=', groupId)
    .where('deleted_at', 'is', null)
    .where('state', '=', 'DRAFT')
    .where('approval', 'in', from)
    .executeTakeFirst();
  return Number(done.numUpdatedRows);
}

/** Puts a group's failed items back in the queue, due at `at`. */
export async function requeueFailed(db: Db, groupId: string, at: number): Promise<void> {
  await db
    .updateTable('posts')
    .set((eb) => ({ state: 'QUEUE' as const, error: null, publish_at: at, updated_at: at, ...takenBack(eb) }))
    .where('group_id', '=', groupId)
    .where('state', '=', 'ERROR')
    .where('deleted_at', 'is', null)
    .execute();
}

/** A post published by hand: the user gives its id on the network. */
export async function markPublishedByHand(db: Db, id: string, releaseId: string, now: number): Promise<void> {
  await db
    .updateTable('posts')
    .set((eb) => ({ release_id: releaseId, state: 'PUBLISHED' as const, error: null, updated_at: now, ...takenBack(eb) }))
    .where('id', '=', id)
    .execute();
}

/** The due posts of a channel that no worker holds (they fail with it when it must be reconnected). */
export async function dueOnChannel(db: Db, channelId: string, now: number): Promise<PostRow[]> {
  return db
    .selectFrom('posts')
    .selectAll()
    .where('channel_id', '=', channelId)
    .where('state', '=', 'QUEUE')
    .where('deleted_at', 'is', null)
    .where('publish_at', '<=', now)
    .where(leaseFree(now))
    .execute();
}

// The engine's transitions: the header says which apply only while the claim they name is still its own.

type Held = Pick<PostRow, 'id' | 'lease_owner'>;

/** Keeps the claim for another `leaseMs` (a long upload outlasts one lease). */
export async function renewLease(db: Db, item: Held, leaseMs: number, now = Date.now()): Promise<void> {
  await extendLease(db, 'posts', item.id, item.lease_owner, now + leaseMs);
}

/**
 * Gives the post back to the queue, to be claimed again from `at`: after a
 * temporary failure (with its reason, the attempt counted), or unsent (pacing, a
 * stopping worker: the claim's attempt is not counted).
 */
export async function handBack(db: Db, item: Held, at: number, outcome: { error: string } | { unsent: true }): Promise<void> {
  await db
    .updateTable('posts')
    .set((eb) => ({ lease_owner: null, lease_until: at, ...('error' in outcome ? { error: outcome.error } : { attempts: eb('attempts', '-', 1) }) }))
    .where('id', '=', item.id)
    .where(heldBy(item.lease_owner))
    .execute();
}

/**
 * Writes down an attempt (its id `attemptId`, by `worker`) before the request
 * leaves, in the one statement that checks the post is still the version claimed,
 * not deleted and still held by this claim. Answers whether it did.
 */
export async function beginAttempt(
  db: Db,
  item: Pick<PostRow, 'id' | 'version' | 'lease_owner'>,
  attemptId: string,
  worker: string,
  now: number,
): Promise<boolean> {
  const inserted = await sql`
      INSERT INTO post_attempts (id, post_id, worker, started_at, finished_at, outcome, detail)
      SELECT ${attemptId}, ${item.id}, ${worker}, ${now}, NULL, 'sending', NULL
      WHERE EXISTS (SELECT 1 FROM posts WHERE id = ${item.id} AND version = ${item.version} AND deleted_at IS NULL AND ${heldBy(item.lease_owner)})`.execute(
    db,
  );
  return Number(inserted.numAffectedRows ?? 0) > 0;
}

/** An attempt left "sending" by a worker that stopped: its outcome is unknown. */
export async function settleAbandonedAttempt(db: Db, attemptId: string, now: number): Promise<void> {
  await db
    .updateTable('post_attempts')
    .set({ outcome: 'unknown', finished_at: now, detail: 'worker stopped while sending' })
    .where('id', '=', attemptId)
    .execute();
}

/**
 * The network has the post. Answers false when it was already recorded as
 * published: a worker whose claim ran out finished after the one that took the
 * post over, and the publish must not be announced twice.
 */
export async function complete(db: Db, mark: { id: string; releaseId: string; releaseUrl: string | null; at: number }): Promise<boolean> {
  const done = await db
    .updateTable('posts')
    .set({
      state: 'PUBLISHED',
      release_id: mark.releaseId,
      release_url: mark.releaseUrl,
      error: null,
      ...UNLEASED,
      updated_at: mark.at,
    })
    .where('id', '=', mark.id)
    .where('state', '!=', 'PUBLISHED')
    .executeTakeFirst();
  return Number(done.numUpdatedRows) > 0;
}

/** The next reply of a thread is due its delay after this one went out. */
export async function scheduleReply(db: Db, replyId: string, at: number): Promise<void> {
  await db.updateTable('posts').set({ publish_at: at }).where('id', '=', replyId).where('state', '=', 'QUEUE').execute();
}

/** The network finishes the post later: it is looked at from `nextAt` until `untilAt` (src/scheduler/follow-ups.ts). */
export async function followUp(db: Db, postId: string, nextAt: number, untilAt: number): Promise<void> {
  await db
    .insertInto('post_follow_ups')
    .values({ post_id: postId, next_at: nextAt, until_at: untilAt })
    .onConflict((oc) => oc.column('post_id').doNothing())
    .execute();
}

/** The network finished a post it took: its final id (and address) replaces the provisional one. */
export async function confirmRelease(db: Db, id: string, release: { releaseId: string; releaseUrl: string | null }, now: number): Promise<void> {
  await db.updateTable('posts').set({ release_id: release.releaseId, release_url: release.releaseUrl, updated_at: now }).where('id', '=', id).execute();
}

/** The network took the post but failed it later: a published post ends in ERROR with the reason. */
export async function failAfterPublish(db: Db, id: string, reason: string, now: number): Promise<void> {
  await db.updateTable('posts').set({ state: 'ERROR', error: reason, updated_at: now }).where('id', '=', id).where('state', '=', 'PUBLISHED').execute();
}

/**
 * Ends an item in ERROR, and the thread items after it with it; run inside a
 * transaction. Only while the post is as the engine read it (same version, same
 * holder, not deleted): a person's change or another worker's claim meanwhile
 * wins. Answers whether it did.
 */
export async function failWithThread(
  db: Db,
  item: Pick<PostRow, 'id' | 'group_id' | 'thread_index' | 'version' | 'lease_owner'>,
  reason: string,
  now: number,
): Promise<boolean> {
  const failed = await db
    .updateTable('posts')
    .set({ state: 'ERROR', error: reason, lease_owner: null, lease_until: null, updated_at: now })
    .where('id', '=', item.id)
    .where('version', '=', item.version)
    .where('deleted_at', 'is', null)
    .where((eb) => (item.lease_owner === null ? eb('lease_owner', 'is', null) : eb('lease_owner', '=', item.lease_owner)))
    .executeTakeFirst();
  if (Number(failed.numUpdatedRows) === 0) return false;
  await db
    .updateTable('posts')
    .set({ state: 'ERROR', error: `Not published because item ${item.thread_index + 1} of the thread failed.`, updated_at: now })
    .where('group_id', '=', item.group_id)
    .where('thread_index', '>', item.thread_index)
    .where('state', '=', 'QUEUE')
    .execute();
  return true;
}
