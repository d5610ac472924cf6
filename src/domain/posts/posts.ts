/**
 * Posts: creating, changing, listing and deleting them. A post is a thread of
 * items (value[0] and its replies), one thread per channel, sharing a group id.
 * Every rule a post must satisfy before it is stored lives here.
 */
import type { Kysely, Transaction } from 'kysely';
import type { ApprovalState, ChannelRow, Database, PostRow, PostState } from '../../db/schema.ts';
import type { CreatePostsBody, PostSummary } from '../../contract/index.ts';
import { newId } from '../../lib/ids.ts';
import { iso } from '../../lib/time.ts';
import type { Dialect } from '../../db/index.ts';
import { fromRow, instant, json, jsonArray, objectTextSql, selections, value, type Shape } from '../../db/json-shape.ts';
import { hotQuery } from '../../db/hot-query.ts';
import { tables, type ChangeSignal } from '../../db/changes.ts';
import { ReadCache } from '../../db/read-cache.ts';
import { leaseLive } from '../../db/lease.ts';
import type { Provider } from '../../providers/types.ts';
import type { Channels } from '../channels.ts';
import type { Approvals } from '../approvals/approvals.ts';
import { ApiError, conflict, invalidField, invalidFields, notFound, type FieldProblem } from '../errors.ts';
import { postEventData, type AccountEvent, type Events, type WebhookEvent } from '../events.ts';
import type { LimitState } from '../sliding-window.ts';
import {
  addThread,
  assertNotPublishing,
  changeGroup,
  type GroupChange,
  deleteGroups,
  markPublishedByHand,
  requeueFailed,
  rewriteThread,
} from './post-queue.ts';
import { shortenLinks, type PendingLinks } from './shortlinks.ts';
import { contentProblems, type ContentProblem } from '../../providers/content-rules.ts';
import { validateSettings } from './provider-settings.ts';
import { excerpt } from '../notifications.ts';
import { calendarTilesQuery, firstItemsBetween } from './calendar-tiles.ts';

type Entry = CreatePostsBody['posts'][number];
type Tag = { value: string; label: string };
type MediaRefStored = { id: string; path: string };

/** Post lists kept in memory: at most this many, and this many characters of JSON in all (a 1,000-post list is about 0.5 M). */
const KEPT_LISTS = 200;
const KEPT_LISTS_CHARS = 8 * 1024 * 1024;

interface PlannedThread {
  channel: ChannelRow;
  provider: Provider;
  /** Root id of the post being updated, for type "update". */
  replaces?: PostRow;
  items: { content: string; media: MediaRefStored[]; delay: number }[];
  settings: Record<string, unknown>;
  warning: string | null;
  /** When this thread goes out, if not at the plan's time (a feed posts each channel at its own next free slot). */
  publishAt?: number;
}

export interface PostPlan {
  accountId: string;
  type: CreatePostsBody['type'];
  publishAt: number;
  /** type "update" without a date: each post keeps the time it was scheduled for. */
  keepsTime: boolean;
  tags: Tag[];
  creationMethod: string;
  threads: PlannedThread[];
  links: PendingLinks;
  /** The person writing (PlanOptions.author), and whether their posts wait for approval. */
  author?: string;
  gated?: boolean;
}

export interface PlanOptions {
  /** URLs a CSV check has not fetched yet: taken as media of unknown type instead of being refused. */
  pendingMedia?: (url: string) => boolean;
  /** The person writing (not for API keys): a member's posts may wait for approval (approvals.ts). */
  author?: string;
}

export interface MediaLookup {
  /** Media of this account at these URLs, by URL. */
  /** Each URL's media, with its size in pixels where known (content rules read it). */
  byUrls(accountId: string, urls: string[]): Promise<Map<string, { id: string; mime_type: string; width?: number | null; height?: number | null }>>;
}

/** What the API shows of a post (the root of a thread) in lists and in its detail. */
const SUMMARY: Shape = {
  id: value('posts.id'),
  content: value('posts.content'),
  publishDate: instant('posts.publish_at'),
  releaseURL: value('posts.release_url'),
  releaseId: value('posts.release_id'),
  state: value('posts.state'),
  group: value('posts.group_id'),
  creationMethod: value('posts.creation_method'),
  settings: json('posts.settings'),
  tags: json('posts.tags'),
  image: json('posts.media'),
  error: value('posts.error'),
  warning: value('posts.warning'),
  approval: value('posts.approval'),
  seriesId: value('posts.series_id'),
  integration: {
    id: value('posts.channel_id'),
    providerIdentifier: value('channels.provider'),
    name: value('channels.name'),
    picture: value('channels.picture'),
  },
};

/** How far in the past a moved post may land (the person's clock and ours differ a little). */
const RESCHEDULE_PAST_TOLERANCE_MS = 60_000;

/** The API's words for a broken content rule of the item at `at`, on the channel `who` names. */
function fieldProblem(p: ContentProblem, at: string, who: string, mediaKinds: readonly string[]): FieldProblem {
  switch (p.rule) {
    case 'max_length':
      return { path: `${at}.content`, message: `is ${p.actual} characters, but ${who} allows at most ${p.limit}` };
    case 'empty':
      return { path: `${at}.content`, message: `is empty and there is no media: ${who} needs text or media` };
    case 'max_media':
      return { path: `${at}.image`, message: `has ${p.actual} files, but ${who} allows at most ${p.limit}` };
    case 'min_media':
      return { path: `${at}.image`, message: `has ${p.actual} files, but ${who} needs at least ${p.limit}` };
    case 'media_kind':
      return { path: `${at}.image.${p.index}`, message: `is ${p.mimeType}, but ${who} accepts only ${mediaKinds.join(' and ')}` };
  }
}

/** A queued post the engine is retrying (GET /api/app/posts/retrying). */
export interface RetryingPost {
  id: string;
  attempt: number;
  nextTryAt: string | null;
  lastReason: string;
  excerpt: string;
  channel: { id: string; name: string };
}

export class Posts {
  /** GET /posts: compiled once, in the order of the index on (account, time, id). */
  private readonly listAll;
  private readonly listOfCustomer;
  private readonly tiles;

  /** Lists as JSON text, by account and query: pollers ask for the same range again and again. */
  private readonly lists: ReadCache<string>;

  constructor(
    private readonly db: Kysely<Database>,
    dialect: Dialect,
    changes: ChangeSignal,
    private readonly channels: Channels,
    private readonly media: MediaLookup,
    private readonly options: {
      publicUrl: string;
      uploadUrl: string;
      /** Counts one request against the account's hourly posting allowance (posting-allowance.ts). */
      takeAllowance: (accountId: string) => Promise<LimitState>;
      onQueued?: (at: number) => void;
      events?: Events;
      approvals?: Approvals;
    },
  ) {
    this.lists = new ReadCache(changes, tables('posts', 'channels'), { entries: KEPT_LISTS, total: { sizeOf: (text) => text.length, most: KEPT_LISTS_CHARS } });
    const listed = (p: { account: string; from: number; to: number }) =>
      firstItemsBetween(db, p).innerJoin('channels', 'channels.id', 'posts.channel_id').select(objectTextSql(SUMMARY, dialect).as('item'));
    this.listAll = hotQuery<{ account: string; from: number; to: number }, { item: string }>(db, ['account', 'from', 'to'], listed);
    this.listOfCustomer = hotQuery<{ account: string; from: number; to: number; customer: string }, { item: string }>(
      db,
      ['account', 'from', 'to', 'customer'],
      (p) => listed(p).where('channels.customer_id', '=', p.customer),
    );
    this.tiles = calendarTilesQuery(db, dialect);
  }

  /**
   * Checks a POST /posts body against everything it references and every content
   * rule, without writing anything. Throws ApiError listing every problem.
   */
  async plan(accountId: string, body: CreatePostsBody, now = Date.now(), options: PlanOptions = {}): Promise<PostPlan> {
    const draft = body.type === 'draft';
    if (body.type === 'schedule' && body.date === undefined) throw invalidField('date', 'is required when type is "schedule"');
    const channelIds = [...new Set(body.posts.map((p) => p.integration.id))];
    const channels = await this.channels.rowsById(accountId, channelIds);
    const problems: FieldProblem[] = [];
    const missing = body.posts.flatMap((p, i) =>
      channels.has(p.integration.id)
        ? []
        : [{ path: `posts.${i}.integration.id`, message: `channel ${JSON.stringify(p.integration.id)} does not exist in this account` }],
    );
    if (missing.length > 0) throw new ApiError('not_found', missing.map((m) => `${m.path}: ${m.message}`).join('; '), missing);

    const urls = body.posts.flatMap((p) => p.value.flatMap((v) => v.image.map((m) => m.path)));
    const ownMedia = await this.media.byUrls(accountId, [...new Set(urls)]);
    const links: PendingLinks = { rows: [] };
    const threads: PlannedThread[] = [];

    for (const [i, entry] of body.posts.entries()) {
      const channel = channels.get(entry.integration.id)!;
      const provider = this.channels.provider(channel);
      const at = `posts.${i}`;
      if (channel.disabled && !draft) problems.push({ path: `${at}.integration.id`, message: `channel "${channel.name}" is disabled` });
      const settings = validateSettings(provider, entry.settings, draft, `${at}.settings`);
      problems.push(...settings.problems);
      const replaces = body.type === 'update' ? await this.findUpdateTarget(accountId, entry, channel, at, problems) : undefined;

      let values = entry.value;
      let warning: string | null = null;
      if (!provider.rules.threads && values.length > 1) {
        warning = `${provider.name} has no threads: only the first item is published; ${values.length - 1} more item(s) were left out.`;
        values = values.slice(0, 1);
      }
      const items = values.map((v, j) => {
        const content = body.shortLink ? shortenLinks(v.content, accountId, this.options.publicUrl, links) : v.content;
        const media = v.image.map((m, k) => {
          const path = `${at}.value.${j}.image.${k}.path`;
          const found = ownMedia.get(m.path);
          if (options.pendingMedia?.(m.path)) {
            // Not fetched yet: its count is checked now, its type once it is in the library.
          } else if (!m.path.startsWith(this.options.uploadUrl + '/')) {
            problems.push({ path, message: `must be the path of media uploaded to this service (on ${this.options.uploadUrl}); upload the file first` });
          } else if (!found) {
            problems.push({ path, message: 'is not media of this account (upload it first)' });
          }
          return { id: found?.id ?? m.id ?? '', path: m.path, mime: found?.mime_type ?? '', width: found?.width, height: found?.height };
        });
        if (!draft) this.checkContentRules(provider, channel, content, media, `${at}.value.${j}`, problems, { threadIndex: j, settings: settings.value });
        return { content, media: media.map(({ id, path }) => ({ id, path })), delay: v.delay };
      });
      threads.push({ channel, provider, replaces, items, settings: settings.value, warning });
    }
    if (problems.length > 0) throw invalidFields(problems);
    const publishAt = body.type === 'now' ? now : (body.date ?? now);
    const keepsTime = body.type === 'update' && body.date === undefined;
    const gated = (await this.options.approvals?.gated(accountId, options.author)) ?? false;
    const creationMethod = body.creationMethod ?? 'api';
    return { accountId, type: body.type, publishAt, keepsTime, tags: body.tags, creationMethod, threads, links, author: options.author, gated };
  }

  /** The network's own rules (`rules.check`) first, then the limits every network has (content-rules.ts). */
  private checkContentRules(
    provider: Provider,
    channel: ChannelRow,
    content: string,
    media: { mime: string; width?: number | null; height?: number | null }[],
    at: string,
    problems: FieldProblem[],
    place: { threadIndex: number; settings: Record<string, unknown> },
  ): void {
    const who = `${provider.name} channel "${channel.name}"`;
    const { __type: _type, ...settings } = place.settings;
    const item = { content, media: media.map((m) => ({ mimeType: m.mime, width: m.width, height: m.height })) };
    for (const p of provider.rules.check?.({ ...item, threadIndex: place.threadIndex, settings }) ?? []) {
      problems.push({ path: `${at}.${p.field}`, message: `${p.message} (${who})` });
    }
    for (const p of contentProblems(provider.rules, item)) {
      problems.push(fieldProblem(p, at, who, provider.rules.mediaKinds));
    }
  }

  private async findUpdateTarget(accountId: string, entry: Entry, channel: ChannelRow, at: string, problems: FieldProblem[]): Promise<PostRow | undefined> {
    const byGroup = entry.group;
    const byId = entry.value[0]?.id;
    if (!byGroup && !byId) {
      problems.push({ path: `${at}.group`, message: 'type "update" needs the group (or value[0].id) of the post to change' });
      return undefined;
    }
    let query = this.db.selectFrom('posts').selectAll().where('account_id', '=', accountId).where('deleted_at', 'is', null).where('thread_index', '=', 0);
    query = byGroup ? query.where('group_id', '=', byGroup).where('channel_id', '=', channel.id) : query.where('id', '=', byId!);
    const root = await query.executeTakeFirst();
    const path = byGroup ? `${at}.group` : `${at}.value.0.id`;
    if (!root) {
      problems.push({ path, message: `no post ${JSON.stringify(byGroup ?? byId)} on this channel in this account` });
    } else if (root.channel_id !== channel.id) {
      problems.push({ path, message: 'names a post of another channel' });
    } else if (root.state === 'PUBLISHED') {
      problems.push({ path, message: 'names a post that is already published; it can no longer be changed' });
    }
    return root;
  }

  /**
   * Counts one caller's request against the account's hourly posting allowance:
   * 429 rate_limited, with Retry-After, once it is used up. create() takes it, and
   * so does a new series; what a feed or a series then posts on its own does not.
   * Taken once the request passed its checks: a refused one costs nothing.
   */
  takeAllowance(accountId: string): Promise<LimitState> {
    return this.options.takeAllowance(accountId);
  }

  /**
   * Stores the plans of one caller's request (POST /posts, the MCP tool
   * create_post, a CSV import) in one transaction, all or nothing, once the
   * request is counted against the posting allowance; `counted` hears what is left
   * of it. Returns, per plan, what commit() returns for it.
   */
  async create(
    accountId: string,
    plans: PostPlan[],
    options: {
      now?: number;
      alongside?: (tx: Transaction<Database>, created: { postId: string; integration: string }[][]) => Promise<void>;
      counted?: (limit: LimitState) => void;
    } = {},
  ): Promise<{ postId: string; integration: string }[][]> {
    const limit = await this.takeAllowance(accountId);
    options.counted?.(limit);
    return this.commitAll(plans, options.now, options.alongside);
  }

  /**
   * Stores a plan made by plan(), counting nothing (a feed's or a series' own posts); returns one { postId, integration } per entry.
   * `alongside` writes in the same transaction once the posts are in (a feed records the item it posted).
   */
  async commit(
    plan: PostPlan,
    now = Date.now(),
    alongside?: (tx: Transaction<Database>, created: { postId: string; integration: string }[]) => Promise<void>,
  ): Promise<{ postId: string; integration: string }[]> {
    const [results] = await this.commitAll([plan], now, alongside && ((tx, created) => alongside(tx, created[0])));
    return results;
  }

  /**
   * Stores several plans of one account in one transaction, all or nothing;
   * returns, per plan, what commit() returns for it.
   */
  private async commitAll(
    plans: PostPlan[],
    now = Date.now(),
    alongside?: (tx: Transaction<Database>, created: { postId: string; integration: string }[][]) => Promise<void>,
  ): Promise<{ postId: string; integration: string }[][]> {
    const created: { postId: string; integration: string }[][] = [];
    if (plans.length === 0) return created;
    await this.db.transaction().execute(async (tx) => {
      const events: AccountEvent[] = [];
      const asking: { plan: PostPlan; root: PostRow }[] = [];
      for (const plan of plans) {
        const results: { postId: string; integration: string }[] = [];
        if (plan.links.rows.length > 0) await tx.insertInto('short_links').values(plan.links.rows).execute();
        for (const thread of plan.threads) {
          const root = thread.replaces ? await this.replaceThread(tx, plan, thread, now) : await this.insertThread(tx, plan, thread, now);
          results.push({ postId: root.id, integration: thread.channel.id });
          events.push({ type: thread.replaces ? 'post.updated' : 'post.created', data: postEventData(root, thread.channel) });
          if (root.approval === 'pending' && thread.replaces?.approval !== 'pending') asking.push({ plan, root });
        }
        created.push(results);
      }
      await alongside?.(tx, created);
      await this.options.events?.record(tx, plans[0].accountId, events);
      for (const { plan, root } of asking) await this.options.approvals?.requested(tx, plan.accountId, root, plan.author, now);
    });
    const queued = plans.filter((p) => p.type !== 'draft').map((p) => p.publishAt);
    if (queued.length > 0) this.options.onQueued?.(queued.reduce((a, b) => Math.min(a, b)));
    this.options.events?.announce();
    return created;
  }

  private threadRows(
    plan: PostPlan,
    thread: PlannedThread,
    groupId: string,
    rootId: string,
    state: PostState,
    now: number,
    version: number,
    approval: ApprovalState | null = null,
  ): PostRow[] {
    let due = thread.publishAt ?? plan.publishAt;
    let parent: string | null = null;
    return thread.items.map((item, index) => {
      const id = index === 0 ? rootId : newId();
      if (index > 0) due += item.delay * 60_000;
      const row: PostRow = {
        id,
        account_id: plan.accountId,
        channel_id: thread.channel.id,
        group_id: groupId,
        root_id: index === 0 ? null : rootId,
        parent_id: parent,
        thread_index: index,
        content: item.content,
        media: JSON.stringify(item.media),
        settings: JSON.stringify(thread.settings),
        tags: JSON.stringify(plan.tags),
        state,
        publish_at: due,
        delay_minutes: index === 0 ? 0 : item.delay,
        release_id: null,
        release_url: null,
        error: null,
        warning: index === 0 ? thread.warning : null,
        creation_method: plan.creationMethod,
        version,
        lease_owner: null,
        lease_until: null,
        attempts: 0,
        created_at: now,
        updated_at: now,
        deleted_at: null,
        approval,
        author_id: thread.replaces ? (thread.replaces.author_id ?? null) : (plan.author ?? null),
      };
      parent = id;
      return row;
    });
  }

  private async insertThread(tx: Transaction<Database>, plan: PostPlan, thread: PlannedThread, now: number): Promise<PostRow> {
    const rootId = newId();
    const review = this.options.approvals?.forNewThread(plan.type, plan.gated ?? false);
    const rows = this.threadRows(plan, thread, newId(), rootId, review?.state ?? (plan.type === 'draft' ? 'DRAFT' : 'QUEUE'), now, 1, review?.approval);
    await addThread(tx, rows);
    return rows[0];
  }

  /** type "update": the thread is rewritten in place; the version bump stops any worker holding the old one. */
  private async replaceThread(tx: Transaction<Database>, plan: PostPlan, thread: PlannedThread, now: number): Promise<PostRow> {
    const old = thread.replaces!;
    const current = await tx
      .selectFrom('posts')
      .select(['state', 'version', 'approval'])
      .where('id', '=', old.id)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    if (!current) throw notFound('Post', old.id);
    if (current.state === 'PUBLISHED') throw conflict('already_published', `Post ${old.id} was published meanwhile; it can no longer be changed`);
    await assertNotPublishing(tx, [old.group_id], now);
    const review = this.options.approvals?.afterEdit(current, plan.gated ?? false);
    const state: PostState = review?.state ?? (current.state === 'DRAFT' ? 'DRAFT' : 'QUEUE');
    const planForUpdate = {
      ...plan,
      publishAt: plan.keepsTime ? old.publish_at : plan.publishAt,
      tags: plan.tags.length > 0 ? plan.tags : JSON.parse(old.tags),
    };
    const rows = this.threadRows(planForUpdate, thread, old.group_id, old.id, state, now, current.version + 1, review?.approval ?? current.approval ?? null);
    await rewriteThread(tx, old.group_id, rows);
    return rows[0];
  }

  /** The JSON array of the summaries of root posts due in [from, to], each built by the database. */
  async listJson(accountId: string, from: number, to: number, customer?: string): Promise<string> {
    if (to < from) throw invalidField('endDate', 'must not be before startDate', 'invalid_query');
    return this.lists.get(`${accountId}\n${from}\n${to}\n${customer ?? ''}`, async () => {
      const rows = customer ? await this.listOfCustomer({ account: accountId, from, to, customer }) : await this.listAll({ account: accountId, from, to });
      return jsonArray(rows.map((row) => row.item));
    });
  }

  /** The calendar's tiles of the root posts due in [from, to], as JSON text (calendar-tiles.ts); kept beside the lists. */
  async calendarJson(accountId: string, from: number, to: number): Promise<string> {
    if (to < from) throw invalidField('endDate', 'must not be before startDate', 'invalid_query');
    return this.lists.get(`tiles\n${accountId}\n${from}\n${to}`, async () =>
      jsonArray((await this.tiles({ account: accountId, from, to })).map((row) => row.item)),
    );
  }

  /** The root post of a thread (any item id resolves to its root). */
  async root(accountId: string, id: string): Promise<PostRow> {
    const row = await this.db
      .selectFrom('posts')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    if (!row) throw notFound('Post', id);
    if (row.root_id === null) return row;
    return this.root(accountId, row.root_id);
  }

  async detail(accountId: string, id: string) {
    const root = await this.root(accountId, id);
    const rows = await this.db
      .selectFrom('posts')
      .innerJoin('channels', 'channels.id', 'posts.channel_id')
      .selectAll('posts')
      .select(selections(SUMMARY) as never[])
      .where('posts.group_id', '=', root.group_id)
      .where('posts.deleted_at', 'is', null)
      .orderBy('posts.thread_index')
      .execute();
    const attempts = await this.db
      .selectFrom('post_attempts')
      .selectAll()
      .where(
        'post_id',
        'in',
        rows.map((r) => r.id),
      )
      .orderBy('started_at')
      .execute();
    const head = rows.find((r) => r.id === root.id)!;
    return {
      ...(fromRow(SUMMARY, head) as unknown as PostSummary),
      thread: rows.map((r) => ({
        id: r.id,
        content: r.content,
        image: JSON.parse(r.media) as MediaRefStored[],
        delay: r.delay_minutes,
        state: r.state,
        publishDate: iso(r.publish_at),
        releaseId: r.release_id,
        releaseURL: r.release_url,
        error: r.error,
        attempts: attempts
          .filter((a) => a.post_id === r.id)
          .map((a) => ({ startedAt: iso(a.started_at), finishedAt: a.finished_at ? iso(a.finished_at) : null, outcome: a.outcome, detail: a.detail })),
      })),
    };
  }

  /** Deletes a whole group (the post and its thread); the version bump stops a worker holding it. */
  async deleteGroup(accountId: string, groupId: string): Promise<string[]> {
    const now = Date.now();
    const owned = await this.db
      .selectFrom('posts')
      .select('id')
      .where('account_id', '=', accountId)
      .where('group_id', '=', groupId)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    if (!owned) throw notFound('Post group', groupId);
    const rows = await this.db.transaction().execute(async (tx) => {
      await assertNotPublishing(tx, [groupId], now);
      const deleted = await deleteGroups(tx, { account: accountId, groups: [groupId] }, now);
      if (deleted.length === 0) throw notFound('Post group', groupId);
      const root = deleted.find((r) => r.thread_index === 0);
      if (root) await this.recordEvent(tx, accountId, 'post.deleted', root);
      return deleted;
    });
    this.options.events?.announce();
    return rows.map((r) => r.id);
  }

  async deletePost(accountId: string, id: string): Promise<{ id: string; group: string }> {
    const root = await this.root(accountId, id);
    await this.deleteGroup(accountId, root.group_id);
    return { id: root.id, group: root.group_id };
  }

  private async unpublishedRoot(accountId: string, id: string): Promise<PostRow> {
    const root = await this.root(accountId, id);
    if (root.state === 'PUBLISHED') throw conflict('already_published', `Post ${root.id} is already published; it can no longer be changed`);
    return root;
  }

  /** Moves a whole thread between DRAFT and QUEUE (`author`: the person asking; a member's post may wait for approval instead). */
  async setStatus(accountId: string, id: string, status: 'draft' | 'schedule', author?: string): Promise<PostState> {
    const root = await this.unpublishedRoot(accountId, id);
    const review = await this.options.approvals?.onStatus(accountId, root, status, author);
    const state: PostState = review?.state ?? (status === 'draft' ? 'DRAFT' : 'QUEUE');
    if (status === 'schedule') {
      // Moving to the queue applies the content rules a draft was spared.
      const channel = await this.channels.row(accountId, root.channel_id);
      const provider = this.channels.provider(channel);
      const { problems } = validateSettings(provider, JSON.parse(root.settings), false, 'settings');
      if (channel.disabled) problems.push({ path: 'status', message: `channel "${channel.name}" is disabled` });
      const items = await this.db
        .selectFrom('posts')
        .selectAll()
        .where('group_id', '=', root.group_id)
        .where('deleted_at', 'is', null)
        .orderBy('thread_index')
        .execute();
      const refs = items.map((item) => JSON.parse(item.media) as MediaRefStored[]);
      const known = await this.media.byUrls(accountId, [...new Set(refs.flat().map((m) => m.path))]);
      for (const [j, item] of items.entries()) {
        const media = refs[j].map((m) => {
          const found = known.get(m.path);
          return { mime: found?.mime_type ?? '', width: found?.width, height: found?.height };
        });
        this.checkContentRules(provider, channel, item.content, media, `thread.${j}`, problems, { threadIndex: j, settings: JSON.parse(root.settings) });
      }
      if (problems.length > 0) throw invalidFields(problems);
    }
    const approval = review ? review.approval : (root.approval ?? null);
    const asks = review?.asks
      ? (tx: Transaction<Database>) => this.options.approvals!.requested(tx, accountId, { ...root, state, approval }, author)
      : undefined;
    await this.changeGroupAndTell(accountId, root, { state, error: null, approval }, asks);
    if (state === 'QUEUE') this.options.onQueued?.(root.publish_at);
    return state;
  }

  /**
   * Merges provider settings into a post that is not yet published. The settings
   * are part of what goes out: as for an edit (`author`: the person asking), a
   * member's change of an approved or queued post asks for approval again.
   */
  async mergeSettings(accountId: string, id: string, settings: Record<string, unknown>, author?: string): Promise<Record<string, unknown>> {
    const root = await this.unpublishedRoot(accountId, id);
    const channel = await this.channels.row(accountId, root.channel_id);
    const provider = this.channels.provider(channel);
    const merged = { ...JSON.parse(root.settings), ...settings };
    const { value, problems } = validateSettings(provider, merged, root.state === 'DRAFT', 'settings');
    if (problems.length > 0) throw invalidFields(problems);
    const gated = (await this.options.approvals?.gated(accountId, author)) ?? false;
    const review = this.options.approvals?.afterEdit(root, gated);
    const set: GroupChange = { settings: JSON.stringify(value), ...(review?.asks ? { state: review.state, approval: review.approval } : {}) };
    const asks = review?.asks ? (tx: Transaction<Database>) => this.options.approvals!.requested(tx, accountId, { ...root, ...set }, author) : undefined;
    await this.changeGroupAndTell(accountId, root, set, asks);
    return value;
  }

  /**
   * Moves a whole thread that is not yet published to another time (the
   * calendar's drag). A time in the past is refused: a slip of the mouse must
   * not publish a post at once.
   */
  async reschedule(accountId: string, id: string, at: number, now = Date.now()): Promise<{ id: string; publishDate: string }> {
    if (at < now - RESCHEDULE_PAST_TOLERANCE_MS) throw invalidFields([{ path: 'date', message: 'must not be in the past' }]);
    const root = await this.unpublishedRoot(accountId, id);
    await this.changeGroupAndTell(accountId, root, { publish_at: at });
    if (root.state !== 'DRAFT') this.options.onQueued?.(at);
    return { id: root.id, publishDate: iso(at) };
  }

  /** Posts (thread roots) a worker is sending right now: their items hold a live lease. */
  async publishing(accountId: string, now = Date.now()): Promise<string[]> {
    const rows = await this.db
      .selectFrom('posts')
      .select(['id', 'root_id'])
      .where('account_id', '=', accountId)
      .where('deleted_at', 'is', null)
      .where('state', '=', 'QUEUE')
      .where(leaseLive(now))
      .execute();
    return [...new Set(rows.map((r) => r.root_id ?? r.id))];
  }

  /**
   * Posts (thread roots) the engine retries: an item still queued after a failed
   * attempt keeps the failure's reason in `error` and waits, unleased, until its
   * next try (post-queue.ts, handBack). One per post: its furthest item.
   */
  async retrying(accountId: string, now = Date.now()): Promise<RetryingPost[]> {
    const rows = await this.db
      .selectFrom('posts')
      .innerJoin('channels', 'channels.id', 'posts.channel_id')
      .select(['posts.id', 'posts.root_id', 'posts.attempts', 'posts.error', 'posts.lease_owner', 'posts.lease_until', 'posts.content'])
      .select(['channels.id as channel_id', 'channels.name as channel_name'])
      .where('posts.account_id', '=', accountId)
      .where('posts.deleted_at', 'is', null)
      .where('posts.state', '=', 'QUEUE')
      .where('posts.attempts', '>', 0)
      .where('posts.error', 'is not', null)
      .orderBy('posts.thread_index')
      .execute();
    const byPost = new Map<string, RetryingPost>();
    for (const row of rows) {
      const sending = row.lease_owner !== null && (row.lease_until ?? 0) > now;
      const id = row.root_id ?? row.id;
      byPost.set(id, {
        id,
        attempt: row.attempts,
        nextTryAt: sending || row.lease_until === null ? null : iso(row.lease_until),
        lastReason: row.error!,
        excerpt: excerpt(row.content),
        channel: { id: row.channel_id, name: row.channel_name },
      });
    }
    return [...byPost.values()];
  }

  /** Records the network's id of a post that was published by hand. */
  async attachReleaseId(accountId: string, id: string, releaseId: string) {
    const root = await this.root(accountId, id);
    await markPublishedByHand(this.db, root.id, releaseId, Date.now());
    return { id: root.id, releaseId, state: 'PUBLISHED' as const };
  }

  /** Puts the failed items of a thread back in the queue, due now. */
  async retry(accountId: string, id: string, now = Date.now()) {
    const root = await this.root(accountId, id);
    const failed = await this.db
      .selectFrom('posts')
      .select('id')
      .where('group_id', '=', root.group_id)
      .where('state', '=', 'ERROR')
      .where('deleted_at', 'is', null)
      .execute();
    if (failed.length === 0) throw conflict('not_failed', `Post ${root.id} has no failed item to retry`);
    await requeueFailed(this.db, root.group_id, now);
    this.options.onQueued?.(now);
    return this.detail(accountId, root.id);
  }

  /** Records a post event in `tx`; the channel is read for its name (also when it was removed since). */
  private async recordEvent(
    tx: Kysely<Database>,
    accountId: string,
    type: WebhookEvent,
    root: Parameters<typeof postEventData>[0] & Pick<PostRow, 'channel_id'>,
  ): Promise<void> {
    if (!this.options.events) return;
    const channel = await tx.selectFrom('channels').select(['id', 'provider', 'name']).where('id', '=', root.channel_id).executeTakeFirst();
    if (channel) await this.options.events.record(tx, accountId, [{ type, data: postEventData(root, channel) }]);
  }

  /** A change to a whole unpublished group, with its post.updated event, unless a worker is sending it (409). */
  private async changeGroupAndTell(accountId: string, root: PostRow, set: GroupChange, alsoInTx?: (tx: Transaction<Database>) => Promise<void>): Promise<void> {
    const now = Date.now();
    await this.db.transaction().execute(async (tx) => {
      await assertNotPublishing(tx, [root.group_id], now);
      await changeGroup(tx, root.group_id, set, now);
      await this.recordEvent(tx, accountId, 'post.updated', { ...root, ...set });
      await alsoInTx?.(tx);
    });
    this.options.events?.announce();
  }
}
