/**
 * RSS and Atom subscriptions: an account names a feed, the channels its new
 * items go to, the text of those posts and when they go out. Reading a feed is
 * one step on a claimed subscription (claim, then read): the first successful
 * read only records the items that exist; each later one posts the items not
 * seen before, each once (feed-posting.ts). A read that fails is tried again
 * later and later, and after a few in a row the account is told, once.
 *
 * A feed's posts are its author's: the person who set it up or last changed it
 * (none for an API key), so a member's feed waits for approval as the member's
 * posts do. What a feed remembers is bounded: the items of its current document,
 * and the KEPT_ABSENT_ITEMS seen most recently before them.
 */
import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../../db/index.ts';
import { claimRows, extendLease, heldBy, leaseFree, UNLEASED } from '../../db/lease.ts';
import type { Database, FeedItemRow, FeedRow } from '../../db/schema.ts';
import type { CreateFeedBody, UpdateFeedBody } from '../../contract/index.ts';
import { newId } from '../../lib/ids.ts';
import { OutboundRefused, type OutboundGuard } from '../../lib/outbound.ts';
import { iso } from '../../lib/time.ts';
import { errorFields, log } from '../../lib/log.ts';
import { conflict, invalidField, invalidFields, notFound, type FieldProblem } from '../errors.ts';
import { postItem, type FeedPostingDeps } from './feed-posting.ts';
import { FeedReadError, readFeed, type FeedEntry } from './feed-source.ts';
import type { Notifications } from '../notifications.ts';

/** How long a reader holds a claimed feed; a reader that died leaves it to another after this. */
export const FEED_LEASE_MS = 5 * 60_000;
/** Failed reads in a row after which the account is told. */
export const FAILURES_BEFORE_NOTICE = 3;
/** The longest wait between reads of a failing feed. */
const LONGEST_BACKOFF_MS = 24 * 60 * 60_000;
/** New items posted from one read; older ones beyond these are recorded without posting. */
export const NEW_ITEMS_PER_READ = 10;
/** Items shown with a subscription. */
const RECENT_ITEMS = 20;
/** Keys looked up per query (SQLite and PostgreSQL cap the parameters of one statement). */
const KEY_SLICE = 500;
/**
 * Items no longer in the feed's document that are still remembered (the most
 * recently seen first): an item that comes back within these is not posted again.
 * A feed whose ids change on every read so keeps at most this many plus one document's.
 */
export const KEPT_ABSENT_ITEMS = 1000;

export type FeedOutcome = 'posted' | 'unchanged' | 'recorded' | 'failed';

export interface FeedReadResult {
  outcome: FeedOutcome;
  newItems: number;
  posts: string[];
}

export function feedView(row: FeedRow) {
  const state = row.paused ? 'paused' : row.last_fetched_at === null ? 'waiting' : row.failures > 0 ? 'failing' : 'ok';
  return {
    id: row.id,
    url: row.url,
    name: row.name,
    title: row.title,
    channels: JSON.parse(row.channels) as string[],
    template: row.template,
    mode: row.mode,
    attachImage: row.attach_image === 1,
    paused: row.paused === 1,
    state: state as 'paused' | 'waiting' | 'failing' | 'ok',
    lastError: row.last_error,
    failures: row.failures,
    lastFetchedAt: row.last_fetched_at === null ? null : iso(row.last_fetched_at),
    lastSuccessAt: row.last_success_at === null ? null : iso(row.last_success_at),
    nextFetchAt: row.paused ? null : iso(row.next_fetch_at),
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}

function itemView(row: FeedItemRow) {
  return {
    key: row.item_key,
    title: row.title,
    link: row.link,
    postIds: row.post_ids === null ? [] : (JSON.parse(row.post_ids) as string[]),
    note: row.note,
    seenAt: iso(row.seen_at),
  };
}

/** Waits after the n-th failed read in a row: the interval, doubled each time, at most a day. */
export function failureBackoffMs(failures: number, intervalMs: number): number {
  return Math.min(LONGEST_BACKOFF_MS, intervalMs * 2 ** Math.min(20, Math.max(0, failures - 1)));
}

/** Newest items last: by date where both have one, otherwise the reverse of the document (feeds list the newest first). */
function oldestFirst(entries: FeedEntry[]): FeedEntry[] {
  return entries
    .map((entry, index) => ({ entry, index }))
    .sort((a, b) => {
      if (a.entry.published !== null && b.entry.published !== null && a.entry.published !== b.entry.published) return a.entry.published - b.entry.published;
      return b.index - a.index;
    })
    .map((x) => x.entry);
}

export interface FeedsOptions {
  /** How often a healthy feed is read. */
  pollMs: number;
}

export class Feeds {
  constructor(
    private readonly db: Kysely<Database>,
    /** Claiming differs between the stores (db/lease.ts). */
    private readonly dialect: Dialect,
    private readonly deps: FeedPostingDeps & { outbound: OutboundGuard; notifications: Notifications },
    private readonly options: FeedsOptions,
  ) {}

  private async row(accountId: string, id: string): Promise<FeedRow> {
    const row = await this.db
      .selectFrom('feeds')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    if (!row) throw notFound('Feed', id);
    return row;
  }

  async list(accountId: string) {
    const rows = await this.db
      .selectFrom('feeds')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('deleted_at', 'is', null)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows.map(feedView);
  }

  async get(accountId: string, id: string) {
    const row = await this.row(accountId, id);
    const items = await this.db
      .selectFrom('feed_items')
      .selectAll()
      .where('feed_id', '=', id)
      .orderBy('seen_at', 'desc')
      .orderBy('item_key')
      .limit(RECENT_ITEMS)
      .execute();
    return { ...feedView(row), recentItems: items.map(itemView) };
  }

  /** The feed must be a public address (or one the operator allowed), and every channel the account's. */
  private async check(accountId: string, input: { url?: string; channels?: string[] }): Promise<void> {
    const problems: FieldProblem[] = [];
    if (input.url !== undefined) {
      try {
        await this.deps.outbound.checkReachable(input.url);
      } catch (err) {
        if (!(err instanceof OutboundRefused)) throw err;
        throw invalidField('url', err.reason, 'url_refused');
      }
    }
    if (input.channels !== undefined) {
      const found = await this.deps.channels.rowsById(accountId, input.channels);
      input.channels.forEach((id, i) => {
        if (!found.has(id)) problems.push({ path: `channels.${i}`, message: `channel ${JSON.stringify(id)} does not exist in this account` });
      });
    }
    if (problems.length > 0) throw invalidFields(problems);
  }

  /** `author`: the person subscribing (undefined for an API key). */
  async create(accountId: string, input: CreateFeedBody, author?: string, now = Date.now()) {
    await this.check(accountId, input);
    const row: FeedRow = {
      id: newId(),
      account_id: accountId,
      url: input.url,
      name: input.name ?? null,
      title: null,
      channels: JSON.stringify([...new Set(input.channels)]),
      template: input.template,
      mode: input.mode,
      attach_image: input.attachImage ? 1 : 0,
      paused: input.paused ? 1 : 0,
      primed: 0,
      etag: null,
      last_modified: null,
      next_fetch_at: now,
      lease_owner: null,
      lease_until: null,
      last_fetched_at: null,
      last_success_at: null,
      last_error: null,
      failures: 0,
      author_id: author ?? null,
      created_at: now,
      updated_at: now,
      deleted_at: null,
    };
    await this.db.insertInto('feeds').values(row).execute();
    return feedView(row);
  }

  /** `author`: the person changing it, whose the feed's posts become (undefined for an API key, which keeps the author). */
  async update(accountId: string, id: string, input: UpdateFeedBody, author?: string, now = Date.now()) {
    const old = await this.row(accountId, id);
    await this.check(accountId, input);
    const set: Partial<FeedRow> = { updated_at: now };
    if (author !== undefined) set.author_id = author;
    if (input.url !== undefined && input.url !== old.url) {
      // Another feed: its first read records what it has, as for a new subscription.
      Object.assign(set, {
        url: input.url,
        title: null,
        primed: 0,
        etag: null,
        last_modified: null,
        last_fetched_at: null,
        last_success_at: null,
        failures: 0,
        last_error: null,
        next_fetch_at: now,
      });
    }
    if (input.channels !== undefined) set.channels = JSON.stringify([...new Set(input.channels)]);
    if (input.template !== undefined) set.template = input.template;
    if (input.mode !== undefined) set.mode = input.mode;
    if (input.attachImage !== undefined) set.attach_image = input.attachImage ? 1 : 0;
    if (input.name !== undefined) set.name = input.name;
    if (input.paused !== undefined) {
      set.paused = input.paused ? 1 : 0;
      // Resumed: read soon, not after what may be a long backoff.
      if (!input.paused && old.paused) set.next_fetch_at = now;
    }
    await this.db.updateTable('feeds').set(set).where('id', '=', id).where('account_id', '=', accountId).execute();
    return feedView(await this.row(accountId, id));
  }

  /** Ends a subscription; the posts it made stay. */
  async remove(accountId: string, id: string, now = Date.now()): Promise<void> {
    await this.row(accountId, id);
    await this.db.updateTable('feeds').set({ deleted_at: now, updated_at: now }).where('id', '=', id).execute();
  }

  /** Feeds due for a read at `now` that nobody holds, earliest first. */
  async due(now: number, limit: number): Promise<string[]> {
    const rows = await this.db
      .selectFrom('feeds')
      .select('id')
      .where('next_fetch_at', '<=', now)
      .where('deleted_at', 'is', null)
      .where('paused', '=', 0)
      .where(leaseFree(now))
      .orderBy('next_fetch_at')
      .limit(limit)
      .execute();
    return rows.map((r) => r.id);
  }

  /**
   * Takes the feed for one read, in one statement: only while nobody holds it and
   * (unless `anyTime`, for "check now") its time has come. Undefined when another
   * reader has it or read it meanwhile.
   */
  async claim(id: string, owner: string, now: number, anyTime = false): Promise<FeedRow | undefined> {
    const [claimed] = await claimRows(this.db, this.dialect, {
      table: 'feeds',
      as: 'f',
      due: anyTime ? sql`f.id = ${id} AND f.deleted_at IS NULL` : sql`f.id = ${id} AND f.deleted_at IS NULL AND f.paused = 0 AND f.next_fetch_at <= ${now}`,
      limit: 1,
      now,
      hold: { owner, ms: FEED_LEASE_MS },
    });
    return claimed;
  }

  /** POST /feeds/{id}/check: reads the feed now (posting what is new), whatever its schedule. */
  async checkNow(accountId: string, id: string, owner: string, now = Date.now()) {
    const row = await this.row(accountId, id);
    if (row.paused) throw conflict('feed_paused', `Feed ${id} is paused; resume it to read it`);
    const claimed = await this.claim(id, owner, now, true);
    if (!claimed) throw conflict('feed_busy', `Feed ${id} is being read right now; try again in a moment`);
    const result = await this.read(claimed, owner, now);
    return { feed: feedView(await this.row(accountId, id)), ...result };
  }

  /** One read of a feed this reader claimed: fetch, then record or post, then the next read's time. */
  async read(row: FeedRow, owner: string, now: number): Promise<FeedReadResult> {
    let read: Awaited<ReturnType<typeof readFeed>>;
    try {
      // The validators of a read that recorded nothing would hide the items from the first real one.
      read = await readFeed(this.deps.outbound, row.url, row.primed ? { etag: row.etag, lastModified: row.last_modified } : { etag: null, lastModified: null });
    } catch (err) {
      if (!(err instanceof FeedReadError)) throw err;
      return this.failed(row, owner, err.message, now);
    }
    if (read.kind === 'unchanged') {
      await this.succeeded(row, owner, now, {});
      return { outcome: 'unchanged', newItems: 0, posts: [] };
    }
    const validators = { etag: read.etag, last_modified: read.lastModified, title: read.title ?? row.title };
    if (!row.primed) {
      await this.record(row, read.entries, now, null);
      await this.succeeded(row, owner, now, { ...validators, primed: 1 });
      return { outcome: 'recorded', newItems: 0, posts: [] };
    }
    const ids = JSON.parse(row.channels) as string[];
    const found = await this.deps.channels.rowsById(row.account_id, ids);
    const targets = ids.flatMap((id) => {
      const channel = found.get(id);
      const provider = channel && this.deps.channels.providerOrUndefined(channel);
      return channel && provider ? [{ channel, provider }] : [];
    });
    if (targets.length === 0) return this.failed(row, owner, "None of the feed's channels exists any more: choose others.", now);

    const fresh = oldestFirst(await this.unseen(row.id, read.entries, now));
    const skipped = fresh.slice(0, Math.max(0, fresh.length - NEW_ITEMS_PER_READ));
    if (skipped.length > 0) {
      await this.record(row, skipped, now, `Not posted: the feed had ${fresh.length} new items at once; the newest ${NEW_ITEMS_PER_READ} were posted.`);
    }
    const posts: string[] = [];
    let newItems = 0;
    const started = Date.now();
    for (const entry of fresh.slice(skipped.length)) {
      try {
        // Images take a while to fetch: the claim is kept for as long as this reader works on the feed.
        await extendLease(this.db, 'feeds', row.id, owner, now + (Date.now() - started) + FEED_LEASE_MS);
        const posted = await postItem(this.deps, row, targets, entry, now);
        if (!posted) continue;
        newItems++;
        posts.push(...posted.postIds);
      } catch (err) {
        // Left unseen, and the validators kept, so the next read gets the document again and tries it again.
        log.warn({ feed: row.id, item: entry.key, ...errorFields(err) }, 'a feed item could not be posted');
        return { ...(await this.failed(row, owner, `An item could not be posted: ${(err as Error).message}`, now)), newItems, posts };
      }
    }
    await this.succeeded(row, owner, now, validators);
    await this.forgetOld(row.id, now);
    return { outcome: newItems > 0 ? 'posted' : 'unchanged', newItems, posts };
  }

  /** The entries whose key this feed has not seen; those it has are marked as seen in this read. */
  private async unseen(feedId: string, entries: FeedEntry[], now: number): Promise<FeedEntry[]> {
    const seen = new Set<string>();
    for (let i = 0; i < entries.length; i += KEY_SLICE) {
      const keys = entries.slice(i, i + KEY_SLICE).map((e) => e.key);
      const rows = await this.db
        .updateTable('feed_items')
        .set({ last_seen_at: now })
        .where('feed_id', '=', feedId)
        .where('item_key', 'in', keys)
        .returning('item_key')
        .execute();
      for (const r of rows) seen.add(r.item_key);
    }
    return entries.filter((e) => !seen.has(e.key));
  }

  /**
   * Forgets the items this read did not find beyond the KEPT_ABSENT_ITEMS seen most
   * recently, in one statement (the document's own items were all marked seen at `now`).
   */
  private async forgetOld(feedId: string, now: number): Promise<void> {
    const oldest = await this.db
      .selectFrom('feed_items')
      .select('last_seen_at')
      .where('feed_id', '=', feedId)
      .where('last_seen_at', '<', now)
      .orderBy('last_seen_at', 'desc')
      .offset(KEPT_ABSENT_ITEMS)
      .limit(1)
      .executeTakeFirst();
    if (!oldest || oldest.last_seen_at === null) return;
    await this.db.deleteFrom('feed_items').where('feed_id', '=', feedId).where('last_seen_at', '<=', oldest.last_seen_at).execute();
  }

  /** Records entries as seen without posting them (those there already are left as they are). */
  private async record(row: FeedRow, entries: FeedEntry[], now: number, note: string | null): Promise<void> {
    for (let i = 0; i < entries.length; i += 100) {
      const values = entries.slice(i, i + 100).map((e) => ({
        feed_id: row.id,
        item_key: e.key,
        title: e.title.slice(0, 500) || null,
        link: e.link.slice(0, 2000) || null,
        post_ids: null,
        note,
        seen_at: now,
        last_seen_at: now,
      }));
      await this.db
        .insertInto('feed_items')
        .values(values)
        .onConflict((oc) => oc.columns(['feed_id', 'item_key']).doNothing())
        .execute();
    }
  }

  /**
   * Ends this reader's claim with what the read found. The feed's address may have
   * changed meanwhile (another feed then): that one's state is left alone, only the claim goes.
   */
  private async finish(row: FeedRow, owner: string, set: Partial<FeedRow>): Promise<boolean> {
    const mine = this.db.updateTable('feeds').where('id', '=', row.id).where(heldBy(owner));
    const done = await mine
      .set({ ...set, ...UNLEASED })
      .where('url', '=', row.url)
      .executeTakeFirst();
    if (Number(done.numUpdatedRows) === 1) return true;
    await mine.set(UNLEASED).execute();
    return false;
  }

  private async succeeded(row: FeedRow, owner: string, now: number, set: Partial<FeedRow>): Promise<void> {
    await this.finish(row, owner, {
      ...set,
      next_fetch_at: now + this.options.pollMs,
      last_fetched_at: now,
      last_success_at: now,
      last_error: null,
      failures: 0,
    });
  }

  private async failed(row: FeedRow, owner: string, reason: string, now: number): Promise<FeedReadResult> {
    const failures = row.failures + 1;
    const recorded = await this.finish(row, owner, {
      failures,
      last_error: reason,
      last_fetched_at: now,
      next_fetch_at: now + failureBackoffMs(failures, this.options.pollMs),
    });
    // Told once per run of failures: only the reader that wrote the third failure tells.
    if (recorded && failures === FAILURES_BEFORE_NOTICE) {
      const name = row.name ?? row.title ?? row.url;
      await this.deps.notifications.add(
        row.account_id,
        `The feed "${name}" could not be read ${failures} times in a row: ${reason} Herald keeps trying, less and less often.`,
        `/api/public/v1/feeds/${row.id}`,
      );
    }
    return { outcome: 'failed', newItems: 0, posts: [] };
  }
}
