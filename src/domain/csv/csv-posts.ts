/**
 * Posts in and out as CSV. An import is checked as a whole first (every problem
 * by line and column, nothing stored), then stored in one transaction through
 * Posts.plan and Posts.create, so every rule of POST /posts applies. Each
 * row (per channel) gets a key made from its content: importing the same file
 * again creates nothing new. The export writes the import's columns (and each
 * post's state, link and error), so an export reads back in.
 */
import type { Readable } from 'node:stream';
import type { Kysely, Transaction } from 'kysely';
import type { Database, PostRow } from '../../db/schema.ts';
import { createPostsBody, EXPORT_COLUMNS, type ExportColumn, type ImportProblem, type ImportReport } from '../../contract/index.ts';
import { sha256 } from '../../lib/secrets.ts';
import { iso, zonedIso } from '../../lib/time.ts';
import type { Channels, ChannelView } from '../channels.ts';
import { ApiError, conflict, invalidField, type FieldProblem } from '../errors.ts';
import type { Media } from '../media.ts';
import type { PlanOptions, PostPlan, Posts } from '../posts/posts.ts';
import { postsOf, readRecords, shown, type PostDraft } from './csv-rows.ts';
import type { LimitState } from '../sliding-window.ts';

export interface ImportRun {
  /** Only check: answer the report, store nothing. */
  dryRun: boolean;
  /** Whether the caller may add files to the media library (media:write): a URL not in it is fetched into it. */
  canAddMedia: boolean;
  /** Fetches a URL into the account's media library (what POST /upload-from-url does); throws ApiError naming `url`. */
  fetchMedia: (url: string) => Promise<{ id: string; url: string }>;
  /** The person importing (not for API keys): a member's posts may wait for approval, as with POST /posts. */
  author?: string;
  /** Told what is left of the hourly posting allowance once the import, known to be good, is counted against it (Posts.create). */
  counted?: (limit: LimitState) => void;
  now?: number;
}

/** One post of the file on the channels it is not yet imported to. */
interface Candidate {
  draft: PostDraft;
  channels: ChannelView[];
  keys: string[];
  /** Keys of the same rows imported before whose post was deleted since: replaced by this import. */
  stale: { key: string; postId: string }[];
  plan?: PostPlan;
}

/** Problems the refusal's message spells out; its `errors` carry them all. */
const PROBLEMS_IN_MESSAGE = 5;

/** Why a file with problems was not imported (400 invalid_csv): the first problems in words, each one as an `errors` entry (path line.N.column). */
export function importRefusal(report: ImportReport): ApiError {
  const where = (p: ImportProblem) => (p.column ? `line ${p.line}, ${p.column}` : `line ${p.line}`);
  const spelled = report.problems.slice(0, PROBLEMS_IN_MESSAGE).map((p) => `${where(p)}: ${p.message}`);
  const more = report.problems.length - spelled.length;
  const message = `The file has ${report.problems.length} problem(s); nothing was imported. ${spelled.join('; ')}${more > 0 ? `; and ${more} more` : ''}`;
  const errors = report.problems.map((p) => ({ path: p.column ? `line.${p.line}.${p.column}` : `line.${p.line}`, message: p.message }));
  return new ApiError('invalid_csv', message, errors);
}

/** Roots of posts read per query by the export. */
const EXPORT_PAGE = 500;
/** Keys looked up or written per statement (SQLite and PostgreSQL cap the parameters of one). */
const KEY_SLICE = 200;
/** Files fetched at once by an import. */
const FETCHES_AT_ONCE = 4;
/** A scheduled row whose date is wrong is still checked for everything else, as if it were due tomorrow. */
const STAND_IN_DELAY_MS = 86_400_000;
const COLUMN_ORDER = new Map<string, number>(EXPORT_COLUMNS.map((c, i) => [c, i]));

export class CsvPosts {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly posts: Posts,
    private readonly channels: Channels,
    private readonly media: Media,
  ) {}

  /** Checks the file and, unless it is a dry run or a problem was found, imports it. The report says which. */
  async run(accountId: string, body: Readable, run: ImportRun): Promise<ImportReport> {
    const now = run.now ?? Date.now();
    const problems: ImportProblem[] = [];
    const { records, whole } = await readRecords(body, problems);
    const drafts = whole ? postsOf(records, problems, now) : [];
    const report: ImportReport = {
      dryRun: run.dryRun,
      valid: false,
      rows: records.length,
      posts: 0,
      alreadyImported: 0,
      skippedPublished: 0,
      problems,
      created: [],
    };
    const candidates = await this.candidates(accountId, drafts, report, problems);
    const own = await this.media.byUrls(accountId, [...new Set(candidates.flatMap((c) => c.draft.items.flatMap((i) => i.media)))]);
    const pending = (url: string) => !own.has(url);
    if (!run.canAddMedia) {
      for (const { draft } of candidates)
        for (const item of draft.items)
          for (const url of item.media.filter(pending))
            problems.push({
              line: item.line,
              column: 'media',
              message: `${url}: is not in this account's media library, and adding it needs media:write`,
            });
    }
    for (const candidate of candidates) {
      candidate.plan = await this.planned(accountId, candidate, (url) => url, now, problems, { pendingMedia: pending, author: run.author });
      report.posts += candidate.channels.length;
    }
    const done = (valid: boolean) => {
      report.valid = valid;
      report.problems = tidy(problems);
      return report;
    };
    if (problems.length > 0 || run.dryRun || candidates.length === 0) return done(problems.length === 0);

    const fetched = new Map<string, { id: string; url: string }>();
    let committed = false;
    try {
      await this.fetchAll(candidates, pending, run.fetchMedia, fetched, problems);
      if (problems.length > 0) return done(false);
      for (const candidate of candidates) {
        if (!candidate.draft.items.some((i) => i.media.some((url) => fetched.has(url)))) continue;
        // Now that the files are in the library their types are known: checked again in full.
        candidate.plan = await this.planned(accountId, candidate, (url) => fetched.get(url)?.url ?? url, now, problems, { author: run.author });
      }
      if (problems.length > 0) return done(false);
      const created = await this.posts.create(
        accountId,
        candidates.map((c) => c.plan!),
        { now, alongside: (tx, results) => this.recordKeys(tx, accountId, candidates, results, now), counted: run.counted },
      );
      committed = true;
      report.created = candidates.flatMap((c, i) => created[i].map((p) => ({ line: c.draft.line, postId: p.postId, integration: p.integration })));
      return done(true);
    } finally {
      // Files fetched for an import that stored nothing go again.
      if (!committed) for (const file of fetched.values()) await this.media.remove(accountId, file.id).catch(() => undefined);
    }
  }

  /** The posts still to create: channels resolved, rows imported before left out. */
  private async candidates(accountId: string, drafts: PostDraft[], report: ImportReport, problems: ImportProblem[]): Promise<Candidate[]> {
    const resolve = channelResolver(JSON.parse(await this.channels.listJson(accountId)) as ChannelView[]);
    const wanted: { draft: PostDraft; channels: ChannelView[]; keys: string[] }[] = [];
    const occurrences = new Map<string, number>();
    for (const draft of drafts) {
      if (draft.published) {
        report.skippedPublished += draft.channels.length;
        continue;
      }
      const channels = new Map<string, ChannelView>();
      for (const ref of draft.channels) {
        const found = resolve(ref);
        if (typeof found === 'string') {
          draft.faulty.add(`${draft.line}:channels`);
          problems.push({ line: draft.line, column: 'channels', message: found });
        } else {
          channels.set(found.id, found);
        }
      }
      const keys = [...channels.keys()].map((channelId) => {
        // Two identical rows are two posts: the second one's key counts it.
        const base = rowKey(accountId, channelId, draft);
        const seen = occurrences.get(base) ?? 0;
        occurrences.set(base, seen + 1);
        return seen === 0 ? base : sha256(`${base}\n${seen}`);
      });
      wanted.push({ draft, channels: [...channels.values()], keys });
    }
    const imported = await this.importedKeys(
      accountId,
      wanted.flatMap((w) => w.keys),
    );
    const candidates: Candidate[] = [];
    for (const { draft, channels, keys } of wanted) {
      const fresh: Candidate = { draft, channels: [], keys: [], stale: [] };
      for (const [i, key] of keys.entries()) {
        const before = imported.get(key);
        if (before?.live) {
          report.alreadyImported += 1;
          continue;
        }
        if (before) fresh.stale.push({ key, postId: before.postId });
        fresh.channels.push(channels[i]);
        fresh.keys.push(key);
      }
      if (fresh.channels.length > 0) candidates.push(fresh);
    }
    return candidates;
  }

  /** Keys of rows imported before, and whether the post each became is still there. */
  private async importedKeys(accountId: string, keys: string[]): Promise<Map<string, { postId: string; live: boolean }>> {
    const found = new Map<string, { postId: string; live: boolean }>();
    for (let start = 0; start < keys.length; start += KEY_SLICE) {
      const rows = await this.db
        .selectFrom('post_imports')
        .leftJoin('posts', (join) => join.onRef('posts.id', '=', 'post_imports.post_id').on('posts.deleted_at', 'is', null))
        .select(['post_imports.row_key', 'post_imports.post_id', 'posts.id as live'])
        .where('post_imports.account_id', '=', accountId)
        .where('post_imports.row_key', 'in', keys.slice(start, start + KEY_SLICE))
        .execute();
      for (const row of rows) found.set(row.row_key, { postId: row.post_id, live: row.live !== null });
    }
    return found;
  }

  /** Writes the keys of what this import created, in its transaction; a key another import wrote meanwhile undoes it all. */
  private async recordKeys(
    tx: Transaction<Database>,
    accountId: string,
    candidates: Candidate[],
    created: { postId: string; integration: string }[][],
    now: number,
  ): Promise<void> {
    for (const { key, postId } of candidates.flatMap((c) => c.stale)) {
      await tx.deleteFrom('post_imports').where('account_id', '=', accountId).where('row_key', '=', key).where('post_id', '=', postId).execute();
    }
    const rows = candidates.flatMap((c, i) =>
      c.keys.map((key, j) => ({ account_id: accountId, row_key: key, post_id: created[i][j].postId, created_at: now })),
    );
    for (let start = 0; start < rows.length; start += KEY_SLICE) {
      const slice = rows.slice(start, start + KEY_SLICE);
      const written = await tx
        .insertInto('post_imports')
        .values(slice)
        .onConflict((oc) => oc.columns(['account_id', 'row_key']).doNothing())
        .returning('row_key')
        .execute();
      if (written.length < slice.length) {
        throw conflict(
          'import_conflict',
          'Another import created some of these rows at the same moment; nothing was imported. Import the file again: what is in already is skipped.',
        );
      }
    }
  }

  /** The candidate as POST /posts would take it, planned; its problems are added by line and column. */
  private async planned(
    accountId: string,
    candidate: Candidate,
    mediaPath: (url: string) => string,
    now: number,
    problems: ImportProblem[],
    options: PlanOptions,
  ): Promise<PostPlan | undefined> {
    const { draft, channels } = candidate;
    const standIn = draft.type === 'schedule' && draft.at === undefined ? now + STAND_IN_DELAY_MS : undefined;
    const at = draft.at ?? standIn;
    const body = createPostsBody.safeParse({
      type: draft.type,
      ...(at === undefined ? {} : { date: iso(at) }),
      shortLink: false,
      tags: [],
      creationMethod: 'csv',
      posts: channels.map((channel) => ({
        integration: { id: channel.id },
        value: draft.items.map((item) => ({ content: item.content, image: item.media.map((url) => ({ path: mediaPath(url) })), delay: item.delay })),
        // The channel's default settings first, as in the composer; the row's own win.
        settings: { ...channel.defaultSettings, ...draft.settings },
      })),
    });
    // A cell the reading of the row already found wrong is not reported again in other words.
    const add = (problem: ImportProblem) => draft.faulty.has(`${problem.line}:${problem.column}`) || problems.push(problem);
    if (!body.success) {
      for (const issue of body.error.issues) add(placed(draft, issue.path.join('.'), issue.message));
      return undefined;
    }
    try {
      return await this.posts.plan(accountId, body.data, now, options);
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      const found: FieldProblem[] = err.errors.length > 0 ? err.errors : [{ path: 'posts.0.integration.id', message: err.message }];
      for (const problem of found) add(placed(draft, problem.path, problem.message));
      return undefined;
    }
  }

  /** Fetches each URL not yet in the library once, a few at a time; a failure is a problem of every cell naming it. */
  private async fetchAll(
    candidates: Candidate[],
    pending: (url: string) => boolean,
    fetchMedia: ImportRun['fetchMedia'],
    fetched: Map<string, { id: string; url: string }>,
    problems: ImportProblem[],
  ): Promise<void> {
    const usedAt = new Map<string, number[]>();
    for (const { draft } of candidates)
      for (const item of draft.items)
        for (const url of item.media.filter(pending)) {
          const lines = usedAt.get(url) ?? [];
          lines.push(item.line);
          usedAt.set(url, lines);
        }
    const urls = [...usedAt.keys()];
    let next = 0;
    const worker = async () => {
      while (next < urls.length) {
        const url = urls[next++];
        try {
          fetched.set(url, await fetchMedia(url));
        } catch (err) {
          if (!(err instanceof ApiError)) throw err;
          const why = err.errors[0]?.message ?? err.message;
          for (const line of new Set(usedAt.get(url))) problems.push({ line, column: 'media', message: `${url}: ${why}` });
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(FETCHES_AT_ONCE, urls.length) }, worker));
  }

  /**
   * The rows of the posts (first items of threads) due in [from, to], each
   * followed by its thread's later items; read a page at a time, so a large
   * range is never held whole. Dates are UTC, or with `timezone` (a valid IANA
   * zone) the local time there with its offset and the zone in its column,
   * which the import reads back as the same instant.
   */
  async *exportRows(accountId: string, from: number, to: number, customer?: string, timezone?: string): AsyncGenerator<Record<ExportColumn, string>> {
    if (to < from) throw invalidField('endDate', 'must not be before startDate', 'invalid_query');
    const channelCell = channelNamer(JSON.parse(await this.channels.listJson(accountId)) as ChannelView[]);
    let after: { at: number; id: string } | undefined;
    for (;;) {
      let query = this.db
        .selectFrom('posts')
        .innerJoin('channels', 'channels.id', 'posts.channel_id')
        .selectAll('posts')
        .select('channels.name as channel_name')
        .where('posts.account_id', '=', accountId)
        .where('posts.deleted_at', 'is', null)
        .where('posts.thread_index', '=', 0)
        .where('posts.publish_at', '>=', from)
        .where('posts.publish_at', '<=', to);
      if (customer) query = query.where('channels.customer_id', '=', customer);
      if (after) {
        const { at, id } = after;
        query = query.where((eb) => eb.or([eb('posts.publish_at', '>', at), eb.and([eb('posts.publish_at', '=', at), eb('posts.id', '>', id)])]));
      }
      const roots = await query.orderBy('posts.publish_at').orderBy('posts.id').limit(EXPORT_PAGE).execute();
      if (roots.length === 0) return;
      const replies = await this.db
        .selectFrom('posts')
        .selectAll()
        .where('account_id', '=', accountId)
        .where(
          'group_id',
          'in',
          roots.map((r) => r.group_id),
        )
        .where('thread_index', '>', 0)
        .where('deleted_at', 'is', null)
        .orderBy('group_id')
        .orderBy('thread_index')
        .execute();
      const thread = new Map<string, PostRow[]>();
      for (const reply of replies) {
        const items = thread.get(reply.group_id) ?? [];
        items.push(reply);
        thread.set(reply.group_id, items);
      }
      for (const root of roots) {
        yield {
          ...itemCells(root),
          date: timezone ? zonedIso(timezone, root.publish_at) : iso(root.publish_at),
          timezone: timezone ?? '',
          type: root.state === 'DRAFT' ? 'draft' : 'schedule',
          channels: channelCell(root.channel_id, root.channel_name),
          delay: '',
          settings: root.settings,
        };
        for (const reply of thread.get(root.group_id) ?? []) {
          yield { ...itemCells(reply), date: '', timezone: '', type: '', channels: '', delay: String(reply.delay_minutes), settings: '' };
        }
      }
      if (roots.length < EXPORT_PAGE) return;
      const last = roots[roots.length - 1];
      after = { at: last.publish_at, id: last.id };
    }
  }
}

/** The cells every exported item has, whatever its place in the thread. */
function itemCells(row: PostRow) {
  return {
    group: row.group_id,
    content: row.content,
    media: (JSON.parse(row.media) as { path: string }[]).map((m) => m.path).join('|'),
    state: row.state,
    releaseURL: row.release_url ?? '',
    error: row.error ?? '',
  };
}

/** Stable over time: the same row in the same account on the same channel always has the same key. */
function rowKey(accountId: string, channelId: string, draft: PostDraft): string {
  const items = draft.items.map((i) => [i.content, i.media, i.delay]);
  return sha256(JSON.stringify([accountId, channelId, draft.type, draft.at ?? null, items, canonical(draft.settings ?? null)]));
}

/** JSON values with their object keys sorted, so {"a":1,"b":2} and {"b":2,"a":1} are one row. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, canonical((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}

/** A channel named by its id, or by its name when one channel of the account has it (any case). */
function channelResolver(channels: ChannelView[]): (ref: string) => ChannelView | string {
  const byId = new Map(channels.map((c) => [c.id, c]));
  const byName = new Map<string, ChannelView[]>();
  for (const channel of channels) {
    const name = channel.name.trim().toLowerCase();
    byName.set(name, [...(byName.get(name) ?? []), channel]);
  }
  return (ref) => {
    const exact = byId.get(ref);
    if (exact) return exact;
    const named = byName.get(ref.toLowerCase()) ?? [];
    if (named.length === 1) return named[0];
    if (named.length === 0) return `${shown(ref)} is neither the id nor the name of a channel of this account`;
    return `${named.length} channels are named ${shown(ref)} (${named.map((c) => c.id).join(', ')}): use the id`;
  };
}

/** How the export names a channel: by its name, which another account's import maps, unless the name would not read back as this channel. */
function channelNamer(channels: ChannelView[]): (id: string, name: string) => string {
  const uses = new Map<string, number>();
  for (const channel of channels) {
    const name = channel.name.trim().toLowerCase();
    uses.set(name, (uses.get(name) ?? 0) + 1);
  }
  return (id, name) => {
    const readsBack = name.trim() !== '' && !/[|;]/.test(name) && uses.get(name.trim().toLowerCase()) === 1;
    return readsBack ? name.trim() : id;
  };
}

/** The line and column a POST /posts problem path points at in the file. */
function placed(draft: PostDraft, path: string, message: string): ImportProblem {
  const [top, , field, index, leaf] = path.split('.');
  if (top === 'posts') {
    if (field === 'settings') return { line: draft.line, column: 'settings', message };
    if (field === 'value') {
      const item = draft.items[Number(index)] ?? draft.items[0];
      return { line: item.line, column: leaf === 'image' ? 'media' : leaf === 'delay' ? 'delay' : 'content', message };
    }
    return { line: draft.line, column: 'channels', message };
  }
  if (top === 'date' || top === 'type') return { line: draft.line, column: top, message };
  return { line: draft.line, column: '', message };
}

/** Problems in file order, each said once. */
function tidy(problems: ImportProblem[]): ImportProblem[] {
  const seen = new Set<string>();
  return problems
    .filter((p) => {
      const id = `${p.line}:${p.column}:${p.message}`;
      if (seen.has(id)) return false;
      seen.add(id);
      return true;
    })
    .sort((a, b) => a.line - b.line || (COLUMN_ORDER.get(a.column) ?? -1) - (COLUMN_ORDER.get(b.column) ?? -1));
}
