/**
 * Repeating posts. A series holds a rule (series-rule.ts) and the post to repeat,
 * as POST /posts takes it. Its occurrences are ordinary posts, created ahead of
 * time by the engine (src/scheduler/series-extender.ts): each in one transaction
 * with its row in post_series_occurrences, whose primary key (series, instant)
 * refuses a second creation of the same occurrence, and under the series' lease,
 * so workers do not even try twice.
 *
 * An occurrence a person changed on its own (edited, moved, made a draft,
 * deleted) is detached: every such change raises its posts' version
 * (post-queue.ts), and occurrences are created at version 1. Editing the series
 * replaces the future occurrences that are neither published nor detached;
 * deleting it deletes every future one not yet published and keeps the rest.
 *
 * Creating a series is one request against the account's hourly posting
 * allowance (posting-allowance.ts), as one POST /posts is, whoever asks.
 */
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database, PostSeriesRow, PostState } from '../../db/schema.ts';
import type { Dialect } from '../../db/index.ts';
import { heldBy, leaseFree, UNLEASED } from '../../db/lease.ts';
import type { CreatePostsBody, SeriesBody } from '../../contract/index.ts';
import { newId } from '../../lib/ids.ts';
import { iso } from '../../lib/time.ts';
import { inBackground } from '../../lib/background.ts';
import { ApiError, conflict, invalidFields, notFound } from '../errors.ts';
import { postEventData, type Events } from '../events.ts';
import type { Notifications } from '../notifications.ts';
import type { Posts } from '../posts/posts.ts';
import type { LimitState } from '../sliding-window.ts';
import { deleteGroups } from '../posts/post-queue.ts';
import { nextOccurrences, normaliseRule, occurrencesBetween, type Occurrence, type RepeatRule } from './series-rule.ts';

/** Occurrences due within this much of now exist as posts (and always the next one, however far). */
export const SERIES_HORIZON_MS = 14 * 86_400_000;
/** A series taken by a worker is left to it this long; each occurrence it creates renews the hold. */
export const SERIES_LEASE_MS = 60_000;
/** After an occurrence could not be created (a channel removed, media deleted), the next try. */
const RETRY_AFTER_MS = 60 * 60_000;
/** A change waits this long at most for a worker that is creating the series' occurrences. */
const BUSY_WAIT_MS = 3_000;
/** PostgreSQL channel on which a change to a series wakes the engines of other processes. */
export const SERIES_CHANNEL = 'herald_series';
/** Occurrences GET /series/{id} shows: the latest ones. */
const SHOWN_OCCURRENCES = 100;
const UPCOMING = 5;

/** The post a series repeats, as stored: POST /posts' body without type and date. */
interface Template {
  posts: {
    integration: { id: string };
    value: { content: string; image: { id?: string; path: string }[]; delay: number }[];
    settings?: Record<string, unknown>;
  }[];
  tags: { value: string; label: string }[];
  shortLink: boolean;
}

/** What became of one occurrence the engine set out to create. */
export type OccurrenceOutcome = 'created' | 'exists' | 'series_changed' | { failed: string };

class AlreadyCreated extends Error {}
class SeriesChanged extends Error {}

type OccurrencePost = { id: string; group: string; integration: string; state: PostState; publishDate: string };

export class Series {
  /** Set by an engine running in this process: it looks at due series at once. */
  wakeExtender: () => void = () => {};

  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
    private readonly posts: Posts,
    private readonly notifications: Notifications,
    private readonly events?: Events,
  ) {}

  /** Checks the rule and the post (as POST /posts would, at the first occurrence); throws ApiError naming each field. */
  private async check(accountId: string, body: SeriesBody, now: number, author?: string): Promise<{ rule: RepeatRule; template: Template }> {
    const { rule, problems } = normaliseRule(body.repeat, now);
    if (!rule) throw invalidFields(problems);
    const template: Template = {
      shortLink: body.shortLink,
      tags: body.tags,
      // Ids of posts being updated mean nothing here: each occurrence is a new post.
      posts: body.posts.map((p) => ({
        integration: { id: p.integration.id },
        value: p.value.map((v) => ({ content: v.content, image: v.image.map((m) => ({ ...(m.id ? { id: m.id } : {}), path: m.path })), delay: v.delay })),
        ...(p.settings ? { settings: p.settings } : {}),
      })),
    };
    const [first] = nextOccurrences(rule, now, 1);
    await this.posts.plan(accountId, this.postsBody(template, first.at), now, { author });
    return { rule, template };
  }

  private postsBody(template: Template, at: number): CreatePostsBody {
    const posts = template.posts.map((p) => ({ ...p, group: undefined, value: p.value.map((v) => ({ ...v, id: undefined })) }));
    return { type: 'schedule', date: at, shortLink: template.shortLink, tags: template.tags, posts, creationMethod: 'series' };
  }

  /**
   * `author`: the person making it (not for API keys); a member's occurrences may wait for approval, as their posts do.
   * `options.counted` is told the posting allowance left once this series is counted against it.
   */
  async create(accountId: string, body: SeriesBody, author?: string, options: { now?: number; counted?: (limit: LimitState) => void } = {}) {
    const now = options.now ?? Date.now();
    const { rule, template } = await this.check(accountId, body, now, author);
    // Only a series that passed its checks counts.
    const limit = await this.posts.takeAllowance(accountId);
    options.counted?.(limit);
    const row: PostSeriesRow = {
      id: newId(),
      account_id: accountId,
      name: body.name ?? null,
      author_id: author ?? null,
      rule: JSON.stringify(rule),
      template: JSON.stringify(template),
      version: 1,
      extended_to: now,
      next_check_at: now,
      lease_owner: null,
      lease_until: null,
      last_error: null,
      created_at: now,
      updated_at: now,
      deleted_at: null,
    };
    await this.db.insertInto('post_series').values(row).execute();
    this.due();
    return this.view(row, now);
  }

  async list(accountId: string, now = Date.now()) {
    const rows = await this.db
      .selectFrom('post_series')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('deleted_at', 'is', null)
      .orderBy('created_at', 'desc')
      .orderBy('id')
      .execute();
    return rows.map((row) => this.view(row, now));
  }

  async get(accountId: string, id: string, now = Date.now()) {
    const row = await this.row(accountId, id);
    return { ...this.view(row, now), occurrences: await this.occurrences(row.id) };
  }

  /**
   * Replaces the rule and the post: the future occurrences that are neither
   * published nor detached are deleted in the same transaction, and the engine
   * creates them again from the new rule and post. `author`: the person writing
   * it, whose its occurrences become (a member's wait for approval); an API key
   * keeps the series' author.
   */
  async update(accountId: string, id: string, body: SeriesBody, author?: string, now = Date.now()) {
    const current = await this.row(accountId, id);
    const writer = author ?? current.author_id ?? undefined;
    const { rule, template } = await this.check(accountId, body, now, writer);
    await this.whenFree(accountId, id, now, async (tx) => {
      await tx
        .updateTable('post_series')
        .set((eb) => ({
          name: body.name ?? null,
          author_id: writer ?? null,
          rule: JSON.stringify(rule),
          template: JSON.stringify(template),
          version: eb('version', '+', 1),
          extended_to: now,
          next_check_at: now,
          last_error: null,
          updated_at: now,
        }))
        .where('id', '=', id)
        .execute();
      const replaced = await this.futureOccurrences(tx, id, now, { keepDetached: true });
      await this.removeOccurrences(tx, accountId, id, replaced, now);
    });
    this.events?.announce();
    this.due();
    return this.get(accountId, id, now);
  }

  /** Deletes the series and its future occurrences not yet published; what was published (or failed) stays. */
  async remove(accountId: string, id: string, now = Date.now()): Promise<string[]> {
    await this.row(accountId, id);
    const removed = await this.whenFree(accountId, id, now, async (tx) => {
      await tx.updateTable('post_series').set({ deleted_at: now, next_check_at: null, updated_at: now }).where('id', '=', id).execute();
      return this.removeOccurrences(tx, accountId, id, await this.futureOccurrences(tx, id, now, { keepDetached: false }), now);
    });
    this.events?.announce();
    return removed;
  }

  private async row(accountId: string, id: string): Promise<PostSeriesRow> {
    const row = await this.db
      .selectFrom('post_series')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    if (!row) throw notFound('Series', id);
    return row;
  }

  /**
   * Runs `change` once no worker holds the series, in a transaction that starts by
   * taking it (so a worker cannot take it meanwhile); 409 series_busy when a worker
   * still holds it after a few seconds.
   */
  private async whenFree<T>(accountId: string, id: string, now: number, change: (tx: Transaction<Database>) => Promise<T>): Promise<T> {
    const giveUpAt = Date.now() + BUSY_WAIT_MS;
    for (;;) {
      const done = await this.db.transaction().execute(async (tx) => {
        const free = await tx
          .updateTable('post_series')
          .set(UNLEASED)
          .where('id', '=', id)
          .where('account_id', '=', accountId)
          .where('deleted_at', 'is', null)
          .where(leaseFree(Math.max(now, Date.now())))
          .executeTakeFirst();
        if (Number(free.numUpdatedRows) === 0) return undefined;
        return { value: await change(tx) };
      });
      if (done) return done.value;
      // Deleted meanwhile (404), or held by a worker: wait a little for it.
      await this.row(accountId, id);
      if (Date.now() > giveUpAt) throw conflict('series_busy', `Series ${id} is creating its occurrences right now; try again in a moment`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /**
   * What a change takes away: with `keepDetached` (an edit), the occurrences
   * still to come that are the series' own, every post and row of them, to be
   * made again; without (stopping the series), every post of it still to come,
   * whether its occurrence was changed on its own or not. "Still to come": a
   * draft or queued post whose time is ahead and that no worker is sending.
   */
  private async futureOccurrences(tx: Kysely<Database>, seriesId: string, now: number, options: { keepDetached: boolean }) {
    const roots = await tx
      .selectFrom('posts')
      .select(['group_id', 'occurrence_at', 'state', 'version', 'deleted_at', 'publish_at', 'lease_until'])
      .where('series_id', '=', seriesId)
      .where('thread_index', '=', 0)
      // A post moved on its own may be due later than its occurrence.
      .where((eb) => eb.or([eb('occurrence_at', '>', now), eb('publish_at', '>', now)]))
      .execute();
    const ahead = (r: (typeof roots)[number]) =>
      r.deleted_at === null && (r.state === 'QUEUE' || r.state === 'DRAFT') && r.publish_at > now && (r.lease_until ?? 0) <= now;
    if (!options.keepDetached) return { groups: roots.filter(ahead).map((r) => r.group_id), instants: [] };
    const byOccurrence = new Map<number, typeof roots>();
    for (const r of roots) byOccurrence.set(Number(r.occurrence_at), [...(byOccurrence.get(Number(r.occurrence_at)) ?? []), r]);
    const groups: string[] = [];
    const instants: number[] = [];
    for (const [at, list] of byOccurrence) {
      const detached = list.some((r) => r.deleted_at !== null || r.version > 1);
      if (detached || !list.every(ahead)) continue;
      instants.push(at);
      groups.push(...list.map((r) => r.group_id));
    }
    return { groups, instants };
  }

  /**
   * Deletes the groups (with a post.deleted event each) and the occurrences' rows, so they can be created anew.
   * The deleted posts leave the series: only a post a person deleted marks its occurrence detached.
   */
  private async removeOccurrences(tx: Kysely<Database>, accountId: string, seriesId: string, found: { groups: string[]; instants: number[] }, now: number) {
    const deleted = found.groups.length > 0 ? await deleteGroups(tx, { account: accountId, groups: found.groups }, now) : [];
    if (found.groups.length > 0) await tx.updateTable('posts').set({ series_id: null, occurrence_at: null }).where('group_id', 'in', found.groups).execute();
    if (found.instants.length > 0) {
      await tx.deleteFrom('post_series_occurrences').where('series_id', '=', seriesId).where('occurrence_at', 'in', found.instants).execute();
    }
    const roots = deleted.filter((r) => r.thread_index === 0);
    if (this.events && roots.length > 0) {
      const channels = await tx
        .selectFrom('channels')
        .select(['id', 'provider', 'name'])
        .where(
          'id',
          'in',
          roots.map((r) => r.channel_id),
        )
        .execute();
      const byId = new Map(channels.map((c) => [c.id, c]));
      const events = roots.flatMap((r) => (byId.has(r.channel_id) ? [{ type: 'post.deleted' as const, data: postEventData(r, byId.get(r.channel_id)!) }] : []));
      await this.events.record(tx, accountId, events);
    }
    return roots.map((r) => r.id);
  }

  /** The latest occurrences with their posts (deleted ones only mark the occurrence detached). */
  private async occurrences(seriesId: string) {
    const rows = await this.db
      .selectFrom('post_series_occurrences')
      .selectAll()
      .where('series_id', '=', seriesId)
      .orderBy('occurrence_at', 'desc')
      .limit(SHOWN_OCCURRENCES)
      .execute();
    if (rows.length === 0) return [];
    const roots = await this.db
      .selectFrom('posts')
      .select(['id', 'group_id', 'channel_id', 'state', 'publish_at', 'occurrence_at', 'version', 'deleted_at'])
      .where('series_id', '=', seriesId)
      .where('thread_index', '=', 0)
      .where('occurrence_at', '>=', Number(rows[rows.length - 1].occurrence_at))
      .orderBy('created_at')
      .execute();
    return rows.reverse().map((o) => {
      const mine = roots.filter((r) => Number(r.occurrence_at) === Number(o.occurrence_at));
      const posts: OccurrencePost[] = mine
        .filter((r) => r.deleted_at === null)
        .map((r) => ({ id: r.id, group: r.group_id, integration: r.channel_id, state: r.state, publishDate: iso(r.publish_at) }));
      return {
        at: iso(Number(o.occurrence_at)),
        index: o.occurrence_index,
        detached: mine.some((r) => r.deleted_at !== null || r.version > 1),
        posts,
      };
    });
  }

  private view(row: PostSeriesRow, now: number) {
    const rule = JSON.parse(row.rule) as RepeatRule;
    const template = JSON.parse(row.template) as Template;
    const upcoming = nextOccurrences(rule, now, UPCOMING);
    return {
      id: row.id,
      name: row.name,
      repeat: {
        start: iso(rule.start),
        unit: rule.unit,
        every: rule.every,
        weekdays: rule.weekdays,
        timezone: rule.timezone,
        until: rule.until === null ? null : iso(rule.until),
        count: rule.count,
      },
      shortLink: template.shortLink,
      tags: template.tags,
      posts: template.posts,
      state: upcoming.length > 0 ? ('active' as const) : ('ended' as const),
      upcoming: upcoming.map((o) => iso(o.at)),
      lastError: row.last_error,
      createdAt: iso(row.created_at),
      updatedAt: iso(row.updated_at),
    };
  }

  /** A series changed: the engine here looks at once; on PostgreSQL, those of other processes too. */
  private due(): void {
    this.wakeExtender();
    if (this.dialect === 'postgres') inBackground('could not announce a changed series', () => sql`SELECT pg_notify(${SERIES_CHANNEL}, '')`.execute(this.db));
  }

  // The engine's side: src/scheduler/series-extender.ts claims due series and calls extend() for each.

  /**
   * Creates the occurrences of a series this worker holds that are due within the
   * horizon, then says when to look again and lets the series go. Returns how
   * many occurrences it created.
   */
  async extend(row: PostSeriesRow, worker: string, now: number): Promise<number> {
    const rule = JSON.parse(row.rule) as RepeatRule;
    const [next] = nextOccurrences(rule, now, 1);
    const from = Math.max(Number(row.extended_to), now);
    const through = Math.max(from, now + SERIES_HORIZON_MS, next?.at ?? 0);
    let reached = from;
    let created = 0;
    let failure: string | null = null;
    for (const occurrence of occurrencesBetween(rule, from, through)) {
      const outcome = await this.createOccurrence(row, occurrence, worker, now);
      // Edited or deleted meanwhile (this worker's hold had run out): the edit asked for a new look.
      if (outcome === 'series_changed') return created;
      if (typeof outcome === 'object') {
        failure = outcome.failed;
        break;
      }
      if (outcome === 'created') created++;
      reached = occurrence.at;
    }
    const [following] = failure ? [] : nextOccurrences(rule, through, 1);
    const set = failure
      ? { extended_to: reached, next_check_at: now + RETRY_AFTER_MS, last_error: failure }
      : {
          extended_to: through,
          // When the one after comes within the horizon, or the next one passes (one is always ahead), whichever is first.
          next_check_at: following ? Math.min(following.at - SERIES_HORIZON_MS, next?.at ?? following.at) : null,
          last_error: null,
        };
    const released = await this.db
      .updateTable('post_series')
      .set({ ...set, ...UNLEASED })
      .where('id', '=', row.id)
      .where(heldBy(worker))
      .where('version', '=', row.version)
      .executeTakeFirst();
    if (failure && failure !== row.last_error && Number(released.numUpdatedRows) > 0) {
      await this.notifications.add(row.account_id, `A repeating post could not create its next occurrence: ${failure}`, `/api/public/v1/series/${row.id}`);
    }
    return created;
  }

  /**
   * Plans the occurrence as POST /posts would and stores it with its occurrence
   * row, in one transaction that also checks this worker still holds the series
   * at the version it read.
   */
  async createOccurrence(row: PostSeriesRow, occurrence: Occurrence, worker: string, now: number): Promise<OccurrenceOutcome> {
    const template = JSON.parse(row.template) as Template;
    let plan: Awaited<ReturnType<Posts['plan']>>;
    try {
      plan = await this.posts.plan(row.account_id, this.postsBody(template, occurrence.at), now, { author: row.author_id ?? undefined });
    } catch (err) {
      if (err instanceof ApiError) return { failed: err.message };
      throw err;
    }
    try {
      await this.posts.commit(plan, now, async (tx, created) => {
        const held = await tx
          .updateTable('post_series')
          .set({ lease_until: now + SERIES_LEASE_MS })
          .where('id', '=', row.id)
          .where(heldBy(worker))
          .where('version', '=', row.version)
          .where('deleted_at', 'is', null)
          .executeTakeFirst();
        if (Number(held.numUpdatedRows) === 0) throw new SeriesChanged();
        const inserted = await tx
          .insertInto('post_series_occurrences')
          .values({
            series_id: row.id,
            occurrence_at: occurrence.at,
            occurrence_index: occurrence.index,
            series_version: row.version,
            created_by: worker,
            created_at: now,
          })
          .onConflict((oc) => oc.columns(['series_id', 'occurrence_at']).doNothing())
          .executeTakeFirst();
        if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 0) throw new AlreadyCreated();
        const roots = created.map((c) => c.postId);
        await tx
          .updateTable('posts')
          .set({ series_id: row.id, occurrence_at: occurrence.at })
          .where((eb) => eb.or([eb('id', 'in', roots), eb('root_id', 'in', roots)]))
          .execute();
      });
      return 'created';
    } catch (err) {
      if (err instanceof AlreadyCreated) return 'exists';
      if (err instanceof SeriesChanged) return 'series_changed';
      throw err;
    }
  }
}
