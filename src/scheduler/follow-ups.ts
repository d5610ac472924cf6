/**
 * Following posts a network took but finishes later (TikTok processes and
 * moderates a video after Herald's publish returned). The post is PUBLISHED with
 * the id the network gave; every engine looks now and then at the follow-ups
 * due, takes each by moving its next look ahead (db/lease.ts: one worker per
 * post), and asks the adapter how it stands: a final id replaces the provisional
 * one, a late failure moves the post to ERROR with the network's reason
 * (post.failed, a notification).
 */
import { sql } from 'kysely';
import type { Services } from '../services.ts';
import { claimRows } from '../db/lease.ts';
import type { PostFollowUpRow } from '../db/schema.ts';
import { postEventData } from '../domain/events.ts';
import { postFailedNotice } from '../domain/notifications.ts';
import { confirmRelease, failAfterPublish } from '../domain/posts/post-queue.ts';
import { findProvider } from '../providers/index.ts';
import type { FollowUpState } from '../providers/types.ts';
import { Periodic } from './periodic.ts';
import { keptReleaseUrl } from './release-url.ts';
import type { TokenKeeper } from './tokens.ts';

/** How often an engine looks for follow-ups due. */
const LOOK_EVERY_MS = 30_000;
/** A follow-up taken by a worker is left to it this long. */
const CLAIM_MS = 5 * 60_000;
/** After a look that failed (the network did not answer), the next one. */
const AGAIN_AFTER_MS = 5 * 60_000;
/** Without a hint from the network, the next look. */
const DEFAULT_CHECK_MS = 60_000;
/** A post is followed this long at most; after that it stays as published. */
export const FOLLOW_FOR_MS = 24 * 60 * 60_000;
const BATCH = 20;
const LOOK_TIMEOUT_MS = 30_000;

export class FollowUps extends Periodic {
  constructor(
    private readonly services: Services,
    private readonly tokens: TokenKeeper,
    everyMs = LOOK_EVERY_MS,
  ) {
    super('following published posts', everyMs, (now) => this.lookAtDue(now));
  }

  private async lookAtDue(now: number): Promise<number> {
    const due = await this.services.store.db.selectFrom('post_follow_ups').selectAll().where('next_at', '<=', now).orderBy('next_at').limit(BATCH).execute();
    let settled = 0;
    for (const row of due) if (await this.follow(row, now)) settled++;
    return settled;
  }

  /** Takes the follow-up (another worker may have), asks the network; true when the post's fate is now known. */
  private async follow(row: PostFollowUpRow, now: number): Promise<boolean> {
    const { db, dialect } = this.services.store;
    // Taken as it is reached (not the whole batch at the look), so a slow network holds back no other follow-up.
    const [taken] = await claimRows(db, dialect, {
      table: 'post_follow_ups',
      as: 'f',
      due: sql`f.post_id = ${row.post_id} AND f.next_at = ${row.next_at}`,
      limit: 1,
      now,
      hold: { postpone: 'next_at', ms: CLAIM_MS },
    });
    if (!taken) return false;
    const done = () => db.deleteFrom('post_follow_ups').where('post_id', '=', row.post_id).execute();
    const post = await db.selectFrom('posts').selectAll().where('id', '=', row.post_id).where('deleted_at', 'is', null).executeTakeFirst();
    const channel = post && (await db.selectFrom('channels').selectAll().where('id', '=', post.channel_id).executeTakeFirst());
    const provider = channel && findProvider(channel.provider);
    if (post?.state !== 'PUBLISHED' || !post.release_id || !channel || !provider?.followUp) {
      await done();
      return false;
    }
    let state: FollowUpState;
    try {
      const view = await this.tokens.fresh(provider, channel);
      state = await provider.followUp({ ...this.services.network(provider, AbortSignal.timeout(LOOK_TIMEOUT_MS)), channel: view, releaseId: post.release_id });
    } catch {
      // The network did not answer, or access needs renewing: looked at again later.
      state = { state: 'waiting', checkAfterMs: AGAIN_AFTER_MS };
    }
    if (state.state === 'waiting') {
      if (now >= row.until_at) await done();
      else
        await db
          .updateTable('post_follow_ups')
          .set({ next_at: now + (state.checkAfterMs ?? DEFAULT_CHECK_MS) })
          .where('post_id', '=', row.post_id)
          .execute();
      return false;
    }
    const { events, notifications } = this.services;
    if (state.state === 'done') {
      await db.transaction().execute(async (tx) => {
        if (state.releaseId) {
          const releaseUrl = keptReleaseUrl(state.releaseUrl, { post: post.id, channel: channel.id, network: provider.identifier });
          await confirmRelease(tx, post.id, { releaseId: state.releaseId, releaseUrl }, Date.now());
        }
        await tx.deleteFrom('post_follow_ups').where('post_id', '=', post.id).execute();
      });
      return true;
    }
    const reason = `${provider.name} took the post but then failed it: ${state.reason}`;
    await db.transaction().execute(async (tx) => {
      await failAfterPublish(tx, post.id, reason, Date.now());
      await tx.deleteFrom('post_follow_ups').where('post_id', '=', post.id).execute();
      await events.record(tx, post.account_id, [{ type: 'post.failed', data: postEventData({ ...post, state: 'ERROR', error: reason }, channel) }]);
    });
    events.announce();
    await notifications.add(post.account_id, postFailedNotice(post, channel.name, reason), `/api/public/v1/posts/${post.root_id ?? post.id}`);
    return true;
  }
}
