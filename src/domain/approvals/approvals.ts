/**
 * Approvals: an account may ask that posts by its members wait for an owner or
 * admin before they are scheduled. A waiting post is a DRAFT to the engine (so
 * it can never go out) with its approval "pending"; approving puts it in the
 * queue at its time, or at its channel's next free slot when that time has
 * passed; returning it ("rejected") gives it back to its author with a comment.
 * Every request, decision and preview-link visitor's verdict is kept as the
 * post's history, and each decision fires account webhooks and a notification
 * in the same transaction as the change.
 *
 * Whose posts wait: those a person with the member role writes, through the web
 * application or an application they authorised (OAuth). API keys act for the
 * account (only owners and admins make them), so their posts never wait.
 */
import type { Kysely, Transaction } from 'kysely';
import type { ApprovalState, Database, PostReviewRow, PostRow, PostState } from '../../db/schema.ts';
import { newId } from '../../lib/ids.ts';
import { iso } from '../../lib/time.ts';
import type { Principal } from '../accounts.ts';
import { authorColumns, authorView, personAuthor, principalAuthor, type Author } from './authors.ts';
import type { Channels } from '../channels.ts';
import { ApiError, conflict, invalidField } from '../errors.ts';
import { postEventData, type Events, type WebhookEvent } from '../events.ts';
import type { Notifications } from '../notifications.ts';
import { can } from '../people.ts';
import { decideApproval } from '../posts/post-queue.ts';

export type ReviewAction = 'requested' | 'approved' | 'rejected' | 'client_approved' | 'changes_requested';

/** What a stored review says, as the API shows it. */
export function reviewView(row: PostReviewRow) {
  return {
    id: row.id,
    action: row.action as ReviewAction,
    by: authorView(row),
    comment: row.comment,
    at: iso(row.created_at),
    viaPreviewLink: row.link_id !== null,
  };
}

import { excerpt } from '../notifications.ts';

export { excerpt };

/** Whether a post waits for an owner's or admin's decision: the one rule for lists and for returning it. */
export function awaitsApproval(post: Pick<PostRow, 'state' | 'approval'>): boolean {
  return post.state === 'DRAFT' && post.approval === 'pending';
}

/** What changing a post does to its approval (see Approvals.afterEdit and onStatus). */
export interface ApprovalOutcome {
  state: PostState;
  approval: ApprovalState | null;
  /** The post now asks for approval anew: record the request and tell the reviewers. */
  asks: boolean;
}

export interface ApprovalsOptions {
  /** The root post of any item id of the account (404 otherwise). */
  root(accountId: string, id: string): Promise<PostRow>;
  /** A post was put in the queue, due at `at`: the engine looks then. */
  onQueued?(at: number): void;
}

export class Approvals {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly channels: Channels,
    private readonly notifications: Notifications,
    private readonly events: Events | undefined,
    private readonly options: ApprovalsOptions,
  ) {}

  // The account's setting ------------------------------------------------------

  async settings(accountId: string): Promise<{ membersNeedApproval: boolean }> {
    const row = await this.db.selectFrom('accounts').select('members_need_approval').where('id', '=', accountId).executeTakeFirst();
    return { membersNeedApproval: Number(row?.members_need_approval ?? 0) === 1 };
  }

  /** Owners and admins (and API keys, which act for the account) decide; posts already waiting keep waiting when it is turned off. */
  async setSettings(principal: Principal, settings: { membersNeedApproval: boolean }): Promise<{ membersNeedApproval: boolean }> {
    await this.requireReviewer(principal, 'change whether posts need approval');
    await this.db
      .updateTable('accounts')
      .set({ members_need_approval: settings.membersNeedApproval ? 1 : 0 })
      .where('id', '=', principal.accountId)
      .execute();
    return this.settings(principal.accountId);
  }

  /** Whether posts written by this person wait for approval: a member's, in an account that asks for it. API keys (no person) never wait. */
  async gated(accountId: string, userId: string | undefined): Promise<boolean> {
    if (!userId) return false;
    const row = await this.db
      .selectFrom('users')
      .innerJoin('accounts', 'accounts.id', 'users.account_id')
      .select(['users.role', 'accounts.members_need_approval'])
      .where('users.id', '=', userId)
      .where('users.account_id', '=', accountId)
      .executeTakeFirst();
    return row !== undefined && !can(row.role, 'review_posts') && Number(row.members_need_approval) === 1;
  }

  /** 403 unless the credential may decide: an owner or admin, or an API key. */
  private async requireReviewer(principal: Principal, action: string): Promise<void> {
    if (!principal.userId) return;
    const user = await this.db.selectFrom('users').select('role').where('id', '=', principal.userId).executeTakeFirst();
    if (!user || !can(user.role, 'review_posts')) {
      throw new ApiError('forbidden', `Your role (${user?.role ?? 'none'}) may not ${action}; it needs one of: owner, admin`);
    }
  }

  // What changes to a post mean for its approval (called by Posts) ----------------

  /** A new thread: a gated author's post (not a draft) waits. */
  forNewThread(type: string, gated: boolean): ApprovalOutcome {
    if (type === 'draft') return { state: 'DRAFT', approval: null, asks: false };
    return gated ? { state: 'DRAFT', approval: 'pending', asks: true } : { state: 'QUEUE', approval: null, asks: false };
  }

  /**
   * A thread written again (type "update"): a plain draft stays one; a waiting
   * post keeps waiting; a returned one asks again; a post that was to go out
   * asks again when a gated author changed it (what was approved is not what
   * would be published).
   */
  afterEdit(current: Pick<PostRow, 'state' | 'approval'>, gated: boolean): ApprovalOutcome {
    const approval = current.approval ?? null;
    if (approval === 'pending') return { state: 'DRAFT', approval, asks: false };
    if (approval === 'rejected') return { state: 'DRAFT', approval: 'pending', asks: true };
    if (current.state === 'DRAFT') return { state: 'DRAFT', approval, asks: false };
    return gated ? { state: 'DRAFT', approval: 'pending', asks: true } : { state: 'QUEUE', approval, asks: false };
  }

  /**
   * PUT /posts/{id}/status: to "draft" withdraws any request (asking again is a
   * new request); to "schedule", a gated author's draft asks for approval, and a
   * post that waits (or was returned) is refused: an owner or admin approves it.
   */
  async onStatus(accountId: string, root: PostRow, status: 'draft' | 'schedule', userId: string | undefined): Promise<ApprovalOutcome> {
    const approval = root.approval ?? null;
    if (status === 'draft') return { state: 'DRAFT', approval: null, asks: false };
    if (root.state !== 'DRAFT') return { state: 'QUEUE', approval, asks: false };
    if (await this.gated(accountId, userId)) return { state: 'DRAFT', approval: 'pending', asks: approval !== 'pending' };
    if (approval === 'pending' || approval === 'rejected') {
      throw conflict('awaiting_approval', `Post ${root.id} awaits approval: approve it (POST /posts/${root.id}/approve) to schedule it`);
    }
    return { state: 'QUEUE', approval, asks: false };
  }

  /**
   * Inside the transaction that made `root` wait: records the request (by
   * `requesterId`, else the post's author), its post.approval_requested event and
   * a notification for the reviewers.
   */
  async requested(tx: Transaction<Database>, accountId: string, root: PostRow, requesterId: string | undefined, now = Date.now()): Promise<void> {
    const who = requesterId ?? root.author_id ?? undefined;
    const by: Author = (who ? await personAuthor(tx, accountId, who) : undefined) ?? { kind: 'key', id: null, name: 'API key' };
    await this.record(tx, { accountId, root, action: 'requested', by, comment: null, now });
    const channel = await this.channelOf(tx, root);
    await this.notifications.add(accountId, `${by.name} asks for approval of a post on ${channel.name}: “${excerpt(root.content)}”`, `/posts/${root.id}`, tx);
    await this.tell(tx, accountId, root, channel, 'post.approval_requested', by, null);
  }

  // Decisions --------------------------------------------------------------------

  /** Schedules a waiting (or returned) post: at its time, or at its channel's next free slot when that time has passed. */
  async approve(principal: Principal, id: string, comment: string | undefined, now = Date.now()) {
    await this.requireReviewer(principal, 'approve posts');
    const { accountId } = principal;
    const root = await this.options.root(accountId, id);
    if (root.state !== 'DRAFT' || (root.approval !== 'pending' && root.approval !== 'rejected')) throw this.notPending(root);
    const channel = await this.channels.row(accountId, root.channel_id);
    if (channel.disabled) throw invalidField('channel', `"${channel.name}" is disabled: enable it before approving a post for it`);
    const moved = root.publish_at <= now;
    const at = moved ? await this.channels.findSlot(accountId, channel.id, now) : root.publish_at;
    const by = await principalAuthor(this.db, principal);
    await this.db.transaction().execute(async (tx) => {
      const set = { state: 'QUEUE' as const, approval: 'approved' as const, error: null, ...(moved ? { publish_at: at } : {}) };
      if ((await decideApproval(tx, root.group_id, ['pending', 'rejected'], set, now)) === 0) throw this.notPending(root);
      const decided = { ...root, ...set };
      await this.record(tx, { accountId, root, action: 'approved', by, comment: comment ?? null, now });
      const when = moved ? ` (its time had passed: it goes out at the next free slot, ${iso(at)})` : '';
      await this.notifications.add(accountId, `${by.name} approved the post on ${channel.name}: “${excerpt(root.content)}”${when}`, `/posts/${root.id}`, tx);
      await this.tell(tx, accountId, decided, channel, 'post.approved', by, comment ?? null);
    });
    this.events?.announce();
    this.options.onQueued?.(at);
    return this.status(accountId, root.id);
  }

  /** Returns a waiting post to its author with what to change; it stays a draft. */
  async reject(principal: Principal, id: string, comment: string, now = Date.now()) {
    await this.requireReviewer(principal, 'return posts');
    const { accountId } = principal;
    const root = await this.options.root(accountId, id);
    if (!awaitsApproval(root)) throw this.notPending(root);
    const by = await principalAuthor(this.db, principal);
    await this.db.transaction().execute(async (tx) => {
      if ((await decideApproval(tx, root.group_id, ['pending'], { approval: 'rejected' }, now)) === 0) throw this.notPending(root);
      await this.record(tx, { accountId, root, action: 'rejected', by, comment, now });
      const channel = await this.channelOf(tx, root);
      const author = root.author_id ? await personAuthor(tx, accountId, root.author_id) : undefined;
      const to = author ? ` to ${author.name}` : '';
      await this.notifications.add(accountId, `${by.name} returned the post on ${channel.name}${to}: “${excerpt(comment)}”`, `/posts/${root.id}`, tx);
      await this.tell(tx, accountId, { ...root, approval: 'rejected' }, channel, 'post.rejected', by, comment);
    });
    this.events?.announce();
    return this.status(accountId, root.id);
  }

  /** A preview link's visitor approved or asked for changes: kept in the history and told to the team (it schedules nothing). */
  async feedback(
    tx: Transaction<Database>,
    input: { accountId: string; root: PostRow; linkId: string; name: string; decision: 'approve' | 'changes'; comment: string | null; now: number },
  ): Promise<PostReviewRow> {
    const { accountId, root, name, comment, now } = input;
    const action: ReviewAction = input.decision === 'approve' ? 'client_approved' : 'changes_requested';
    const row = await this.record(tx, { accountId, root, action, by: { kind: 'guest', id: null, name }, comment, now, linkId: input.linkId });
    const channel = await this.channelOf(tx, root);
    const said = comment ? `: “${excerpt(comment)}”` : '';
    const verb = input.decision === 'approve' ? 'approved' : 'asked for changes to';
    await this.notifications.add(accountId, `${name} (preview link) ${verb} the post on ${channel.name}${said}`, `/posts/${root.id}`, tx);
    return row;
  }

  /** Where a post stands: its approval, who asked, and its whole history. */
  async status(accountId: string, id: string) {
    const root = await this.options.root(accountId, id);
    const history = await this.db
      .selectFrom('post_reviews')
      .selectAll()
      .where('post_id', '=', root.id)
      .where('account_id', '=', accountId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    const request = history.filter((r) => r.action === 'requested').at(-1);
    const author = root.author_id ? await personAuthor(this.db, accountId, root.author_id) : undefined;
    return {
      postId: root.id,
      state: root.approval ?? null,
      postState: root.state,
      publishDate: iso(root.publish_at),
      requestedBy: request ? authorView(request) : (author ?? null),
      history: history.map(reviewView),
    };
  }

  // Plumbing -----------------------------------------------------------------------

  private notPending(root: PostRow): ApiError {
    const now = root.approval ? `it is ${root.approval}` : 'it never needed approval';
    return conflict('not_pending', `Post ${root.id} is not awaiting approval (${now}, state ${root.state})`);
  }

  private async record(
    db: Kysely<Database>,
    entry: { accountId: string; root: PostRow; action: ReviewAction; by: Author; comment: string | null; now: number; linkId?: string },
  ): Promise<PostReviewRow> {
    const row: PostReviewRow = {
      id: newId(),
      account_id: entry.accountId,
      post_id: entry.root.id,
      action: entry.action,
      ...authorColumns(entry.by),
      link_id: entry.linkId ?? null,
      comment: entry.comment,
      created_at: entry.now,
    };
    await db.insertInto('post_reviews').values(row).execute();
    return row;
  }

  /** The post's channel (read through the transaction: SQLite has one connection, which it holds). */
  private async channelOf(db: Kysely<Database>, root: PostRow) {
    return db.selectFrom('channels').select(['id', 'provider', 'name']).where('id', '=', root.channel_id).executeTakeFirstOrThrow();
  }

  /** The decision's own event, after the post.updated every change of a post sends. */
  private async tell(
    tx: Kysely<Database>,
    accountId: string,
    root: PostRow,
    channel: { id: string; provider: string; name: string },
    type: WebhookEvent,
    by: Author,
    comment: string | null,
  ): Promise<void> {
    if (!this.events) return;
    const data = postEventData(root, channel);
    const approval = { state: root.approval ?? null, by, comment };
    const events = type === 'post.approval_requested' ? [] : [{ type: 'post.updated' as const, data }];
    await this.events.record(tx, accountId, [...events, { type, data: { ...data, approval } }]);
  }
}
