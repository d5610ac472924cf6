/**
 * Comments on a post: the team's discussion of it, and what visitors of its
 * preview links write. Everyone with access to the account reads them; each
 * author may delete their own, and owners and admins any (a visitor's too).
 */
import type { Kysely } from 'kysely';
import type { Database, PostCommentRow, PostRow } from '../../db/schema.ts';
import { newId } from '../../lib/ids.ts';
import { iso } from '../../lib/time.ts';
import type { Principal } from '../accounts.ts';
import { authorColumns, authorView, isOwn, principalAuthor, type Author } from './authors.ts';
import { ApiError, notFound } from '../errors.ts';
import { can } from '../people.ts';

export function commentView(row: PostCommentRow, principal?: Principal) {
  const by = authorView(row);
  return { id: row.id, content: row.content, by, at: iso(row.created_at), viaPreviewLink: row.link_id !== null, own: principal ? isOwn(by, principal) : false };
}

export class Comments {
  constructor(
    private readonly db: Kysely<Database>,
    /** The root post of any item id of the account (404 otherwise). */
    private readonly root: (accountId: string, id: string) => Promise<PostRow>,
  ) {}

  /** Oldest first. */
  async list(principal: Principal, postId: string) {
    const root = await this.root(principal.accountId, postId);
    const rows = await this.rowsOf(this.db, principal.accountId, root.id);
    return { comments: rows.map((r) => commentView(r, principal)) };
  }

  async add(principal: Principal, postId: string, content: string, now = Date.now()) {
    const root = await this.root(principal.accountId, postId);
    const by = await principalAuthor(this.db, principal);
    const row = await this.insert(this.db, { accountId: principal.accountId, root, by, content, linkId: null, now });
    return commentView(row, principal);
  }

  /** The author's own comment, or any for an owner or admin. */
  async remove(principal: Principal, postId: string, commentId: string, now = Date.now()): Promise<void> {
    const root = await this.root(principal.accountId, postId);
    const row = await this.db
      .selectFrom('post_comments')
      .selectAll()
      .where('id', '=', commentId)
      .where('post_id', '=', root.id)
      .where('account_id', '=', principal.accountId)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    if (!row) throw notFound('Comment', commentId);
    if (!isOwn(authorView(row), principal) && !(await this.moderates(principal))) {
      throw new ApiError('forbidden', 'Only its author, an owner or an admin may delete this comment');
    }
    await this.db.updateTable('post_comments').set({ deleted_at: now }).where('id', '=', commentId).execute();
  }

  /** The comments of a post, in the caller's transaction when given. */
  async rowsOf(db: Kysely<Database>, accountId: string, rootId: string, onlyGuests = false): Promise<PostCommentRow[]> {
    let query = db.selectFrom('post_comments').selectAll().where('post_id', '=', rootId).where('account_id', '=', accountId).where('deleted_at', 'is', null);
    if (onlyGuests) query = query.where('link_id', 'is not', null);
    return query.orderBy('created_at').orderBy('id').execute();
  }

  async insert(
    db: Kysely<Database>,
    input: { accountId: string; root: PostRow; by: Author; content: string; linkId: string | null; now: number },
  ): Promise<PostCommentRow> {
    const row: PostCommentRow = {
      id: newId(),
      account_id: input.accountId,
      post_id: input.root.id,
      ...authorColumns(input.by),
      link_id: input.linkId,
      content: input.content,
      created_at: input.now,
      deleted_at: null,
    };
    await db.insertInto('post_comments').values(row).execute();
    return row;
  }

  private async moderates(principal: Principal): Promise<boolean> {
    if (!principal.userId) return false;
    const user = await this.db.selectFrom('users').select('role').where('id', '=', principal.userId).executeTakeFirst();
    return user !== undefined && can(user.role, 'review_posts');
  }
}
