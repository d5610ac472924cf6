/**
 * The publishing engine: claims due items from the database, publishes each
 * through its provider, and records the outcome. At most once toward a network:
 * an attempt is written down before the request leaves, and an item whose last
 * attempt never finished is not sent again blindly.
 */
import os from 'node:os';
import type { Services } from '../services.ts';
import type { ChannelRow, PostRow } from '../db/schema.ts';
import { newId } from '../lib/ids.ts';
import { deadline } from '../lib/deadline.ts';
import type { MediaRef, Provider, PublishChannel, PublishContext, PublishResult } from '../providers/types.ts';
import { PublishError, type FailureKind } from '../providers/errors.ts';
import { publishRefs } from '../media/refs.ts';
import { postEventData } from '../domain/events.ts';
import { postFailedNotice } from '../domain/notifications.ts';
import { claimDue, nextWakeUp } from './claim.ts';
import { listenForDue } from './due-signal.ts';
import { Pacing } from './pacing.ts';
import { SuccessDigest } from './success-digest.ts';
import { QUEUE_POLL_MS, WorkLoop } from './work-loop.ts';
import { engineQueries, type EngineQueries } from './engine-queries.ts';
import { TokenKeeper, ReconnectNeeded, channelNeedsReconnect, reconnectReason } from './tokens.ts';
import { TokenRenewal } from './token-renewal.ts';
import { MailDigest } from './mail-digest.ts';
import { FOLLOW_FOR_MS, FollowUps } from './follow-ups.ts';
import { TokenChecks } from './token-checks.ts';
import { keptReleaseUrl } from './release-url.ts';
import { FeedPoller } from './feed-poller.ts';
import { SeriesExtender } from './series-extender.ts';
import { isStoreUnavailable } from '../db/unavailable.ts';
import {
  beginAttempt,
  complete,
  dueOnChannel,
  failWithThread,
  followUp,
  handBack,
  renewLease,
  scheduleReply,
  settleAbandonedAttempt,
} from '../domain/posts/post-queue.ts';
import { errorFields, log } from '../lib/log.ts';
import { timerDelay } from '../lib/timers.ts';
import { UnsealError } from '../lib/secrets.ts';
import type { Metrics } from '../lib/metrics.ts';

export interface EngineOptions {
  /** How long a claim is held; an item whose worker died is taken again after this. */
  leaseMs?: number;
  /** Items published at once by this worker. */
  concurrency?: number;
  /** Longest sleep between looks at the queue (other processes may add work). */
  pollMs?: number;
  /** How long after its due time a post keeps being retried after temporary failures. */
  retryDeadlineMs?: number;
  /** How long successes are gathered into one notification. */
  successDigestMs?: number;
  /** Longest a whole publish may take (uploads included); each request has its own shorter timeout. */
  publishTimeoutMs?: number;
  /** How often channels' access is renewed in the background (token-renewal.ts). */
  renewEveryMs?: number;
  /** How often posts a network finishes later are looked at (follow-ups.ts). */
  followUpEveryMs?: number;
  /** How often channels whose network wants its tokens checked are looked at (token-checks.ts). */
  tokenCheckEveryMs?: number;
  /** How often feeds due for a read are looked for (feed-poller.ts). */
  feedLookEveryMs?: number;
  /** How often series due a look are looked for (series-extender.ts). */
  seriesEveryMs?: number;
  /** How often this engine looks for mail digests that are due. */
  mailDigestEveryMs?: number;
  /** Renews the claim on an item being published (post-queue.ts); a test holds it back to stand for a worker that froze. */
  renewLease?: (item: PostRow, leaseMs: number) => Promise<void>;
}

/** Longest a look on the network for a post of unknown fate may take. */
const FIND_TIMEOUT_MS = 60_000;

/** A worker stopped (or lost its claim) with the request out: only then is this said. */
export const UNKNOWN_OUTCOME = 'Herald stopped while this post was being sent, so it may have been published. Check the channel before retrying.';
/** Something unexpected failed on Herald's side once the request may have left. */
export const FAULT_WHILE_SENDING =
  'Publishing failed on Herald’s side while this post was being sent, so it may have been published. Check the channel before retrying.';
/** Something unexpected failed on Herald's side before anything was sent. */
export const FAULT_BEFORE_SENDING = 'Not sent: publishing failed on Herald’s side before the post left (the server log has the details). Retry the post.';

/** The channel's sealed tokens do not open with this process's secret: nothing can be sent until the secret is right. */
function unsealedReason(channel: ChannelRow, err: UnsealError): string {
  return (
    `Not sent: channel "${channel.name}"'s access could not be unsealed (${err.message}). ` +
    'Run Herald with the secret that sealed this store (see "Running on PostgreSQL" in the README), then retry the post.'
  );
}

/** Exponential backoff with full jitter: 2 s, 4 s, 8 s ... capped at 5 minutes. */
export function backoffMs(attempt: number, random = Math.random): number {
  const ceiling = Math.min(300_000, 2_000 * 2 ** Math.max(0, attempt - 1));
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}

/**
 * Counts each publish attempt and logs one line for it, with ids a person can
 * search for: the post, channel and network, the attempt, how long it took,
 * and its class (published, retryable, refused, unknown, auth) with the network's reason.
 */
function recordOutcome(metrics: Metrics, job: Job, startedAt: number, outcome: 'published' | FailureKind, reason?: string): void {
  metrics.publish(job.provider.identifier, outcome);
  const fields = {
    post: job.item.id,
    channel: job.channel.id,
    network: job.provider.identifier,
    attempt: job.item.attempts,
    ms: Date.now() - startedAt,
    outcome,
    ...(reason ? { reason } : {}),
  };
  if (outcome === 'published') log.info(fields, 'post published');
  else log.warn(fields, outcome === 'retryable' ? 'post not published yet; it is tried again' : 'post not published');
}

interface Job {
  item: PostRow;
  channel: ChannelRow;
  provider: Provider;
  thread: PostRow[];
  media: Map<string, MediaRef>;
}

export class Engine {
  readonly worker = `${os.hostname()}:${process.pid}:${newId().slice(0, 8)}`;
  private readonly leaseMs: number;
  private readonly retryDeadlineMs: number;
  private readonly publishTimeoutMs: number;
  private readonly pollMs: number;
  private readonly pacing: Pacing;
  private readonly renew: (item: PostRow, leaseMs: number) => Promise<void>;
  private readonly tokens: TokenKeeper;
  /** Renews channels' access in the background; `run(now)` renews what is due at `now`. */
  readonly renewal: TokenRenewal;
  /** Follows posts a network finishes later; `run(now)` looks at what is due at `now`. */
  readonly followUps: FollowUps;
  /** Checks tokens where a network's policy asks for it; `run(now)` checks those due at `now`. */
  readonly tokenChecks: TokenChecks;
  /** Reads RSS and Atom subscriptions; `run(now)` reads those due at `now`. */
  readonly feeds: FeedPoller;
  /** Creates repeating posts' occurrences ahead of time; `run(now)` extends the series due at `now`. */
  readonly series: SeriesExtender;
  /** Writes the daily and weekly mail digests; `run(now)` writes those due at `now`. */
  readonly mailDigest: MailDigest;
  private readonly successes: SuccessDigest;
  private readonly loop: WorkLoop<PostRow>;
  private readonly queries: EngineQueries;
  private unlisten?: () => Promise<void>;
  private claims = 0;
  /** Set by stop: items not yet sent go back to the queue instead. */
  private stopping = false;
  /** Set when a stop's grace ran out: what is still in flight is left, as sent, to the next worker. */
  private abandoned = false;
  /** Items in hand whose request may have left (in this handling or an earlier one): an unexpected fault on them is of unknown outcome. */
  private readonly inDoubt = new Set<string>();
  /** Resolves once this engine hears other processes' announcements (PostgreSQL). */
  listening: Promise<void> = Promise.resolve();

  constructor(
    private readonly services: Services,
    options: EngineOptions = {},
  ) {
    this.leaseMs = options.leaseMs ?? services.config.leaseMs;
    this.retryDeadlineMs = options.retryDeadlineMs ?? services.config.retryDeadlineMs;
    this.publishTimeoutMs = options.publishTimeoutMs ?? 30 * 60_000;
    this.pollMs = options.pollMs ?? QUEUE_POLL_MS;
    this.renew = options.renewLease ?? ((item, leaseMs) => renewLease(services.store.db, item, leaseMs));
    this.pacing = new Pacing(services.store, services.rateLimiter);
    this.queries = engineQueries(services.store.db);
    this.tokens = new TokenKeeper(services, this.pacing, this.worker);
    this.renewal = new TokenRenewal(services, this.tokens, options.renewEveryMs);
    this.followUps = new FollowUps(services, this.tokens, options.followUpEveryMs);
    this.tokenChecks = new TokenChecks(services, this.tokens, options.tokenCheckEveryMs);
    this.feeds = new FeedPoller(services, this.worker, options.feedLookEveryMs);
    this.series = new SeriesExtender(services, this.worker, options.seriesEveryMs);
    this.mailDigest = new MailDigest(services, options.mailDigestEveryMs);
    this.successes = new SuccessDigest(services.notifications, options.successDigestMs ?? 10_000);
    this.loop = new WorkLoop({
      name: 'engine',
      concurrency: options.concurrency ?? services.config.workerConcurrency,
      pollMs: this.pollMs,
      // Every claim holds its items under its own name, so an item claimed again (its lease ran
      // out while it waited here, or a worker died) can no longer be sent by the earlier claim.
      claim: (limit) => claimDue(services.store, `${this.worker}#${++this.claims}`, limit, this.leaseMs),
      handle: (item) => this.handle(item),
      nextDue: () => nextWakeUp(services.store),
    });
  }

  start(): void {
    this.loop.start();
    this.renewal.start();
    this.followUps.start();
    this.tokenChecks.start();
    this.feeds.start();
    this.series.start();
    this.mailDigest.start();
    this.services.localEngine.attach({
      wake: (at) => this.wake(at),
      looked: () => ({ at: this.loop.lastLookAt, everyMs: this.pollMs }),
      inHand: () => this.loop.inHand,
    });
    // Other processes (API servers, workers) announce due work on PostgreSQL.
    if (this.services.config.databaseUrl) {
      const listener = listenForDue(this.services.config.databaseUrl, (at) => this.wake(at));
      this.unlisten = listener.stop;
      this.listening = listener.listening;
    }
  }

  /**
   * Stops claiming and hands back the items not yet sent; resolves when the publishes
   * already sent have finished, or after `graceMs` (those then keep their attempt,
   * "sending", and the next worker treats them as of unknown outcome).
   */
  async stop(graceMs = Infinity): Promise<void> {
    this.stopping = true;
    this.services.localEngine.detach();
    await this.unlisten?.();
    await Promise.all([this.renewal.stop(), this.followUps.stop(), this.tokenChecks.stop(), this.feeds.stop(), this.series.stop(), this.mailDigest.stop()]);
    if (!(await this.loop.stop(graceMs))) {
      this.abandoned = true;
      log.warn({ running: this.loop.inHand, graceSeconds: graceMs / 1000 }, 'engine stopped with publishes still running; the next worker checks them');
    }
    await this.successes.flush();
  }

  /** Something is due at `at`: look then (or now) rather than at the next poll. */
  wake(at: number): void {
    this.loop.wake(at);
  }

  private async handle(item: PostRow): Promise<void> {
    // The lease is renewed for as long as this worker works on the item (large uploads
    // take longer than a lease); only a dead worker's items are taken over.
    const heartbeat = setInterval(() => void this.renew(item, this.leaseMs).catch(() => {}), timerDelay(this.leaseMs / 3));
    try {
      await this.publish(item);
    } catch (err) {
      if (isStoreUnavailable(err)) {
        // Nothing can be written now. The claim runs out and the post is taken again once the
        // store is back: sent then if no attempt began, or judged by its unfinished attempt.
        log.warn({ post: item.id, ...errorFields(err) }, 'the store is unavailable; the post is left to its lease');
        return;
      }
      // Anything unexpected: once the request may have left, its fate is unknown and it must not be repeated
      // blindly; before that, the post certainly did not go out, and saying it may have would send people looking.
      log.error({ post: item.id, ...errorFields(err) }, 'publishing failed unexpectedly');
      await this.fail(item, this.inDoubt.has(item.id) ? FAULT_WHILE_SENDING : FAULT_BEFORE_SENDING).catch(() => {});
    } finally {
      clearInterval(heartbeat);
      this.inDoubt.delete(item.id);
    }
  }

  private async publish(item: PostRow): Promise<void> {
    const db = this.services.store.db;
    const [channel] = await this.queries.channel({ id: item.channel_id });
    if (!channel || channel.deleted_at !== null) return this.fail(item, 'The channel was removed before this post went out.');
    const provider = this.services.channels.providerOrUndefined(channel);
    if (!provider) return this.fail(item, `This server no longer has the "${channel.provider}" network, so the post cannot go out.`, { channel });
    let job: Job;
    try {
      job = await this.load(item, channel, provider);
    } catch (err) {
      // Media that cannot be made to fit the network, or storage that is down for now.
      if (!(err instanceof PublishError)) throw err;
      return err.kind === 'retryable' ? this.retryOrFail(item, err.message) : this.fail(item, err.message, { channel });
    }

    // Claiming counts attempts: only an item claimed before can have an attempt that never finished.
    const [unsettled] = item.attempts > 1 ? await this.queries.unsettledAttempt({ post: item.id, since: item.updated_at }) : [];
    if (unsettled) {
      this.inDoubt.add(item.id);
      if (unsettled.outcome === 'sending') await settleAbandonedAttempt(db, unsettled.id, Date.now());
      if (!this.mayRepeat(provider, unsettled.started_at)) return this.afterUnknown(job, UNKNOWN_OUTCOME);
      // The network drops a repeat: look first where it can tell, else send the same request again below.
      const found = await this.lookUp(job);
      if (found) return this.published(job, found);
    }
    if (channel.disabled) return this.fail(item, `Channel "${channel.name}" is disabled; enable it and retry the post.`, { channel });
    if (channel.needs_reconnect) return this.fail(item, reconnectReason(channel), { channel });

    const permit = await this.pacing.acquire(provider, channel.id, this.worker, this.leaseMs);
    if (!permit.granted) {
      // Waiting past the retry deadline (a daily quota) would publish far too late: say why instead.
      if (permit.retryAt > item.publish_at + this.retryDeadlineMs) return this.fail(item, `Not published: ${permit.reason}.`, { channel });
      return this.defer(item, permit.retryAt);
    }
    try {
      await this.send(job);
    } finally {
      await permit.release();
    }
  }

  /** The thread and its media, as the adapter will see them. */
  private async load(item: PostRow, channel: ChannelRow, provider: Provider): Promise<Job> {
    const thread = await this.queries.thread({ group: item.group_id });
    const ids = thread.flatMap((p) => (JSON.parse(p.media) as { id: string }[]).map((m) => m.id));
    const media = await publishRefs(this.services, ids, provider.rules.media);
    return { item, channel, provider, thread, media };
  }

  private context(job: Job, channel: PublishChannel, signal: AbortSignal): PublishContext {
    const { item, thread, media } = job;
    const refs = (row: PostRow): MediaRef[] => (JSON.parse(row.media) as { id: string }[]).flatMap((m) => media.get(m.id) ?? []);
    const parent = item.parent_id ? thread.find((p) => p.id === item.parent_id) : undefined;
    return {
      ...this.services.network(job.provider, signal),
      channel,
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
      progress: this.services.progress.of(item.id),
    };
  }

  /** Sends the item; a 401 gets one token refresh and one more try (the network took nothing). */
  private async send(job: Job): Promise<void> {
    const { item, provider } = job;
    let channel: PublishChannel;
    try {
      channel = await this.tokens.fresh(provider, job.channel);
    } catch (err) {
      return this.tokenTrouble(job, err);
    }
    for (let refreshed = false; ; refreshed = true) {
      // Stopping: what has not left yet goes back to the queue for the next worker, at once.
      if (this.stopping) return this.defer(item, Date.now());
      const limit = deadline(this.publishTimeoutMs);
      const ctx = this.context(job, channel, limit.signal);
      const attempt = await this.beginAttempt(item);
      // Changed or deleted since it was claimed: the change released it, nothing to send.
      if (!attempt) return;
      this.inDoubt.add(item.id);
      let result: PublishResult;
      const startedAt = Date.now();
      if (item.attempts === 1 && !refreshed) this.services.metrics.late(provider.identifier, (startedAt - item.publish_at) / 1000);
      try {
        result = await provider.publish(ctx);
      } catch (err) {
        limit.clear();
        // Cut off by the stop: the attempt stays "sending" for the next worker to judge.
        if (this.abandoned) return;
        const failure = err instanceof PublishError ? err : new PublishError('unknown', FAULT_WHILE_SENDING);
        recordOutcome(this.services.metrics, job, startedAt, failure.kind, failure.message);
        if (failure.kind === 'unknown') {
          await attempt('unknown', failure.message);
          // Sent again after a pause (the next claim sees this attempt and repeats it), within the retry deadline.
          if (this.mayRepeat(provider, Date.now())) return this.retryOrFail(item, `${failure.message} Sending it again: ${provider.repeatDropped!.by}.`);
          return this.afterUnknown(job, failure.message);
        }
        await attempt(failure.kind === 'retryable' ? 'retry' : 'failed', failure.message);
        if (failure.kind === 'auth') {
          if (refreshed || !provider.refresh) return this.reconnectNeeded(job, failure.message);
          try {
            channel = await this.tokens.refresh(provider, job.channel, channel);
          } catch (refreshErr) {
            return this.tokenTrouble(job, refreshErr);
          }
          continue;
        }
        if (failure.kind === 'retryable') return this.retryOrFail(item, failure.message, failure.retryAfterMs);
        return this.fail(item, failure.message, { channel: job.channel });
      }
      limit.clear();
      recordOutcome(this.services.metrics, job, startedAt, 'published');
      return this.published(job, result, attempt.id);
    }
  }

  /**
   * Writes the attempt down before the request leaves, in the same statement that
   * checks the post is still the version claimed, not deleted and still ours.
   * Returns how to record the end of the attempt, or undefined when the post changed.
   */
  private async beginAttempt(item: PostRow): Promise<(((outcome: string, detail: string | null) => Promise<void>) & { id: string }) | undefined> {
    const id = newId();
    if (!(await beginAttempt(this.services.store.db, item, id, this.worker, Date.now()))) return undefined;
    return Object.assign(
      async (outcome: string, detail: string | null) => {
        await this.queries.finishAttempt({ id, outcome, detail, at: Date.now() });
      },
      { id },
    );
  }

  /** Whether an attempt of unknown outcome begun at `startedAt` may simply be sent again: the network drops the repeat, and still remembers the first. */
  private mayRepeat(provider: Provider, startedAt: number): boolean {
    const repeat = provider.repeatDropped;
    return repeat !== undefined && (repeat.withinMs === undefined || Date.now() - startedAt < repeat.withinMs);
  }

  /** Asks the network for the item where the adapter can: found, null (certainly not there), or undefined (cannot tell). */
  private async lookUp(job: Job): Promise<PublishResult | null | undefined> {
    const { provider } = job;
    if (!provider.findPublished) return undefined;
    try {
      // A fresh context: the publish's own deadline may be what ran out.
      const limit = deadline(FIND_TIMEOUT_MS);
      const context = this.context(job, await this.tokens.fresh(provider, job.channel), limit.signal);
      return await provider.findPublished(context).finally(() => limit.clear());
    } catch {
      return undefined;
    }
  }

  /**
   * The network may or may not have the post, and would not drop a repeat. A post
   * found is published. A post not found may still be on its way through the
   * network, so it is never sent again automatically; the user decides.
   */
  private async afterUnknown(job: Job, message: string): Promise<void> {
    const { provider, item } = job;
    const found = await this.lookUp(job);
    if (found) return this.published(job, found);
    if (found === null) return this.fail(item, `${message} ${provider.name} does not show it yet.`, { channel: job.channel });
    return this.fail(item, message, { channel: job.channel });
  }

  private async retryOrFail(item: PostRow, message: string, retryAfterMs = 0): Promise<void> {
    if (Date.now() + retryAfterMs >= item.publish_at + this.retryDeadlineMs) {
      return this.fail(item, `${message} (gave up after retrying until ${Math.round(this.retryDeadlineMs / 60_000)} minutes past the post's time)`);
    }
    const wait = Math.max(retryAfterMs, backoffMs(item.attempts));
    await handBack(this.services.store.db, item, Date.now() + wait, { error: message });
    this.wake(Date.now() + wait);
  }

  /** Not sent (the network's pacing): hand the item back for later without counting an attempt. */
  private async defer(item: PostRow, at: number): Promise<void> {
    await handBack(this.services.store.db, item, at, { unsent: true });
    this.wake(at);
  }

  /**
   * Marks the item published, its attempt, the next reply's due time and the
   * post.published event, in one transaction: a worker killed in between leaves
   * either all of it or an unfinished attempt (which the next worker treats as an
   * unknown outcome), never a post that looks unsent behind an attempt that says
   * it went out, nor a published post whose event is lost.
   */
  private async published(job: Job, result: PublishResult, attemptId?: string): Promise<void> {
    const { item, thread, channel } = job;
    const { store, events } = this.services;
    const now = Date.now();
    const next = thread.find((p) => p.parent_id === item.id);
    const releaseUrl = keptReleaseUrl(result.releaseUrl, { post: item.id, channel: channel.id, network: job.provider.identifier });
    const published = postEventData({ ...item, state: 'PUBLISHED', release_id: result.releaseId, release_url: releaseUrl, error: null }, channel);
    // The network has the post: a store that is down for a moment must not turn that into "outcome unknown".
    const first = await this.untilStored(item, () =>
      store.db.transaction().execute(async (tx) => {
        if (attemptId) await this.queries.finishAttempt({ id: attemptId, outcome: 'published', detail: releaseUrl ?? result.releaseId, at: now }, tx);
        // Another worker recorded it first (this one's claim ran out): its attempt is all there is to add.
        if (!(await complete(tx, { id: item.id, releaseId: result.releaseId, releaseUrl, at: now }))) return false;
        if (next) await scheduleReply(tx, next.id, now + next.delay_minutes * 60_000);
        await events.record(tx, item.account_id, [{ type: 'post.published', data: published }]);
        // The network finishes it later: followed until it says how it ended.
        if (result.followUp) await followUp(tx, item.id, now + result.followUp.afterMs, now + FOLLOW_FOR_MS);
        return true;
      }),
    );
    if (!first) return;
    events.announce();
    if (next) this.wake(now + next.delay_minutes * 60_000);
    this.successes.add(item.account_id, channel.name, item.content, item.root_id ?? item.id);
  }

  /**
   * Runs a write of what is known (the network took the post), again and again while the
   * store is unavailable, for as long as the claim would have lasted: after that another
   * worker may hold the post, and the write's own checks (the lease) decide.
   */
  private async untilStored<T>(item: PostRow, write: () => Promise<T>): Promise<T> {
    const giveUpAt = Date.now() + this.leaseMs;
    for (let wait = 250; ; wait = Math.min(wait * 2, 5_000)) {
      try {
        return await write();
      } catch (err) {
        if (!isStoreUnavailable(err) || Date.now() + wait > giveUpAt) throw err;
        log.warn({ post: item.id, retryInMs: wait, ...errorFields(err) }, 'the store is unavailable; recording the post again shortly');
        await new Promise((resolve) => setTimeout(resolve, wait));
      }
    }
  }

  private async tokenTrouble(job: Job, err: unknown): Promise<void> {
    if (err instanceof ReconnectNeeded) return this.reconnectNeeded(job, err.message);
    // Not the network's doing, nor the user's channel: the process runs with another secret than the one that sealed it.
    if (err instanceof UnsealError) return this.fail(job.item, unsealedReason(job.channel, err), { channel: job.channel });
    if (err instanceof PublishError && err.kind === 'retryable') return this.retryOrFail(job.item, err.message, err.retryAfterMs);
    throw err;
  }

  /**
   * The network no longer accepts the channel's tokens: the channel waits for the
   * user to reconnect it, and its due posts fail with that reason.
   */
  private async reconnectNeeded(job: Job, detail: string): Promise<void> {
    const { channel, item } = job;
    const now = Date.now();
    const reason = await channelNeedsReconnect(this.services, channel, detail);
    await this.fail(item, reason, { channel });
    for (const other of await dueOnChannel(this.services.store.db, channel.id, now)) await this.fail(other, reason, { notify: false, channel });
  }

  /** Ends an item in ERROR with the reason, along with the thread items after it, and tells the user. */
  private async fail(item: PostRow, reason: string, options: { notify?: boolean; channel?: ChannelRow } = {}): Promise<void> {
    const { store, notifications, events } = this.services;
    const now = Date.now();
    const channel = options.channel ?? (await this.queries.channel({ id: item.channel_id }))[0];
    const failed = await store.db.transaction().execute(async (tx) => {
      // A person's change, or another worker's claim, since this engine read the post wins: nothing to tell then.
      if (!(await failWithThread(tx, item, reason, now))) return false;
      if (channel)
        await events.record(tx, item.account_id, [{ type: 'post.failed', data: postEventData({ ...item, state: 'ERROR', error: reason }, channel) }]);
      return true;
    });
    if (!failed) return;
    events.announce();
    const root = item.root_id ?? item.id;
    if (options.notify !== false) await notifications.add(item.account_id, postFailedNotice(item, channel?.name, reason), `/api/public/v1/posts/${root}`);
  }
}
