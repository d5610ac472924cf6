/**
 * The publishing engine: claims due items from the database, publishes each
 * through its provider, and records the outcome. At most once toward a network:
 * an attempt is written down before the request leaves, and an item whose last
 * attempt never finished is not sent again blindly.
 */
import os from 'node:os';
import type { Services } from '../app.ts';
import type { PostRow } from '../db/schema.ts';
import { newId } from '../lib/ids.ts';
import { PublishError, type MediaRef } from '../providers/types.ts';
import { claimDue, nextWakeUp } from './claim.ts';

export interface EngineOptions {
  /** How long a claim is held; an item whose worker died is taken again after this. */
  leaseMs?: number;
  /** Items published at once by this worker. */
  concurrency?: number;
  /** Longest sleep between looks at the queue (other processes may add work). */
  pollMs?: number;
  /** How long after its due time a post keeps being retried after temporary failures. */
  retryDeadlineMs?: number;
}

const UNKNOWN_OUTCOME =
  'Herald stopped while this post was being sent, so it may have been published. Check the channel before retrying.';

/** Exponential backoff with full jitter: 2 s, 4 s, 8 s ... capped at 5 minutes. */
export function backoffMs(attempt: number, random = Math.random): number {
  const ceiling = Math.min(300_000, 2_000 * 2 ** Math.max(0, attempt - 1));
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}

export class Engine {
  readonly worker = `${os.hostname()}:${process.pid}:${newId().slice(0, 8)}`;
  private readonly leaseMs: number;
  private readonly concurrency: number;
  private readonly pollMs: number;
  private readonly retryDeadlineMs: number;
  private timer?: NodeJS.Timeout;
  private timerAt = Infinity;
  private running = 0;
  private ticking = false;
  private again = false;
  private stopped = true;
  private readonly idle = new Set<() => void>();

  constructor(
    private readonly services: Services,
    options: EngineOptions = {},
  ) {
    this.leaseMs = options.leaseMs ?? 120_000;
    this.concurrency = options.concurrency ?? 16;
    this.pollMs = options.pollMs ?? 5_000;
    this.retryDeadlineMs = options.retryDeadlineMs ?? 3_600_000;
  }

  start(): void {
    this.stopped = false;
    this.services.wake = (at) => this.wake(at);
    this.wake(Date.now());
  }

  /** Stops claiming; resolves when the items in hand are finished. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.services.wake = () => {};
    if (this.running > 0 || this.ticking) await new Promise<void>((resolve) => this.idle.add(resolve));
  }

  /** Something is due at `at`: look then (or now) rather than at the next poll. */
  wake(at: number): void {
    if (this.stopped) return;
    const delay = Math.max(0, at - Date.now());
    if (at >= this.timerAt) return;
    clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(() => {
      this.timerAt = Infinity;
      void this.tick();
    }, delay);
    this.timer.unref?.();
  }

  private async tick(): Promise<void> {
    if (this.ticking) {
      this.again = true;
      return;
    }
    this.ticking = true;
    try {
      do {
        this.again = false;
        const free = this.concurrency - this.running;
        if (free <= 0 || this.stopped) break;
        const claimed = await claimDue(this.services.store, this.worker, free, this.leaseMs);
        for (const item of claimed) {
          this.running++;
          void this.handle(item).finally(() => {
            this.running--;
            // A finished item may unblock the next item of its thread.
            this.wake(Date.now());
            this.settle();
          });
        }
        if (claimed.length === free) this.again = true;
      } while (this.again && !this.stopped);
      if (!this.stopped) {
        const next = await nextWakeUp(this.services.store);
        this.wake(Math.min(next ?? Infinity, Date.now() + this.pollMs));
      }
    } catch (err) {
      console.error('engine: could not claim work:', (err as Error).message);
      if (!this.stopped) this.wake(Date.now() + this.pollMs);
    } finally {
      this.ticking = false;
      this.settle();
    }
  }

  private settle(): void {
    if (this.running === 0 && !this.ticking) {
      for (const resolve of this.idle) resolve();
      this.idle.clear();
    }
  }

  private async handle(item: PostRow): Promise<void> {
    try {
      await this.publish(item);
    } catch (err) {
      // Anything unexpected: the attempt's fate is unknown, so it must not be repeated blindly.
      console.error(`engine: publishing ${item.id} failed unexpectedly:`, (err as Error).message);
      await this.fail(item, UNKNOWN_OUTCOME).catch(() => {});
    }
  }

  private async publish(item: PostRow): Promise<void> {
    const { store, channels, media, outbound } = this.services;
    const db = store.db;
    const unfinished = await db.selectFrom('post_attempts').select('id').where('post_id', '=', item.id).where('outcome', '=', 'sending').executeTakeFirst();
    if (unfinished) {
      await db.updateTable('post_attempts').set({ outcome: 'unknown', finished_at: Date.now(), detail: 'worker stopped while sending' }).where('id', '=', unfinished.id).execute();
      return this.fail(item, UNKNOWN_OUTCOME);
    }
    const channel = await db.selectFrom('channels').selectAll().where('id', '=', item.channel_id).executeTakeFirst();
    if (!channel || channel.deleted_at !== null) return this.fail(item, 'The channel was removed before this post went out.');
    if (channel.disabled) return this.fail(item, `Channel "${channel.name}" is disabled; enable it and retry the post.`);
    if (channel.needs_reconnect) return this.fail(item, `Channel "${channel.name}" must be reconnected before it can publish.`);
    const provider = channels.provider(channel);
    const thread = await db.selectFrom('posts').selectAll().where('group_id', '=', item.group_id).where('deleted_at', 'is', null).orderBy('thread_index').execute();
    const mediaIds = thread.flatMap((p) => (JSON.parse(p.media) as { id: string }[]).map((m) => m.id));
    const mediaRows = new Map((await media.byIds(mediaIds)).map((m) => [m.id, m]));
    const refs = (row: PostRow): MediaRef[] =>
      (JSON.parse(row.media) as { id: string; path: string }[]).map((m) => ({ id: m.id, url: m.path, mimeType: mediaRows.get(m.id)?.mime_type ?? '' }));
    const parent = item.parent_id ? thread.find((p) => p.id === item.parent_id) : undefined;

    const attemptId = newId();
    const startedAt = Date.now();
    await db.insertInto('post_attempts').values({ id: attemptId, post_id: item.id, worker: this.worker, started_at: startedAt, finished_at: null, outcome: 'sending', detail: null }).execute();
    const finishAttempt = (outcome: string, detail: string | null) =>
      db.updateTable('post_attempts').set({ outcome, detail, finished_at: Date.now() }).where('id', '=', attemptId).execute();

    let result;
    try {
      result = await provider.publish({
        channel: channels.publishView(channel),
        item: {
          postId: item.id,
          groupId: item.group_id,
          content: item.content,
          media: refs(item),
          settings: JSON.parse(item.settings),
          threadIndex: item.thread_index,
          thread: thread.map((p) => ({ content: p.content, media: refs(p), delayMinutes: p.delay_minutes })),
          publishAt: new Date(item.publish_at),
        },
        replyTo: parent?.release_id ? { releaseId: parent.release_id } : undefined,
        idempotencyKey: item.id,
        outbound,
        signal: AbortSignal.timeout(this.leaseMs / 2),
      });
    } catch (err) {
      const failure = err instanceof PublishError ? err : new PublishError('unknown', UNKNOWN_OUTCOME);
      if (failure.kind === 'retryable' && Date.now() + (failure.retryAfterMs ?? 0) < item.publish_at + this.retryDeadlineMs) {
        const wait = Math.max(failure.retryAfterMs ?? 0, backoffMs(item.attempts));
        await finishAttempt('retry', failure.message);
        await db.updateTable('posts').set({ lease_owner: null, lease_until: Date.now() + wait, error: failure.message }).where('id', '=', item.id).where('lease_owner', '=', this.worker).execute();
        this.wake(Date.now() + wait);
        return;
      }
      await finishAttempt(failure.kind === 'unknown' ? 'unknown' : 'failed', failure.message);
      return this.fail(item, failure.message);
    }

    await finishAttempt('published', result.releaseUrl ?? result.releaseId);
    const now = Date.now();
    await db
      .updateTable('posts')
      .set({ state: 'PUBLISHED', release_id: result.releaseId, release_url: result.releaseUrl ?? null, error: null, lease_owner: null, lease_until: null, updated_at: now })
      .where('id', '=', item.id)
      .execute();
    // The next reply is due its delay after this one went out.
    const next = thread.find((p) => p.parent_id === item.id);
    if (next) {
      await db.updateTable('posts').set({ publish_at: now + next.delay_minutes * 60_000 }).where('id', '=', next.id).where('state', '=', 'QUEUE').execute();
      this.wake(now + next.delay_minutes * 60_000);
    }
  }

  /** Ends an item in ERROR with the reason, along with the thread items after it, and tells the user. */
  private async fail(item: PostRow, reason: string): Promise<void> {
    const { store, notifications } = this.services;
    const now = Date.now();
    await store.db.transaction().execute(async (tx) => {
      await tx.updateTable('posts').set({ state: 'ERROR', error: reason, lease_owner: null, lease_until: null, updated_at: now }).where('id', '=', item.id).execute();
      await tx
        .updateTable('posts')
        .set({ state: 'ERROR', error: `Not published because item ${item.thread_index + 1} of the thread failed.`, updated_at: now })
        .where('group_id', '=', item.group_id)
        .where('thread_index', '>', item.thread_index)
        .where('state', '=', 'QUEUE')
        .execute();
    });
    await notifications.add(item.account_id, `A post could not be published: ${reason}`, `/api/public/v1/posts/${item.root_id ?? item.id}`);
  }
}
