/**
 * Preview links: a shareable address that shows one post as its network will
 * show it to someone without an account (a client), who can comment and approve
 * or ask for changes. The link is a long random token: only its SHA-256 is
 * stored, it expires (a week by default) and can be revoked at any time; an
 * unknown, expired or revoked token never shows the post.
 */
import type { Kysely } from 'kysely';
import type { Database, PreviewLinkRow, PostCommentRow, PostReviewRow, PostRow } from '../../db/schema.ts';
import { newId } from '../../lib/ids.ts';
import { randomToken, sha256 } from '../../lib/secrets.ts';
import { iso } from '../../lib/time.ts';
import { PREVIEW_SETTINGS } from '../../contract/approvals.ts';
import type { Principal } from '../accounts.ts';
import { excerpt, type Approvals } from './approvals.ts';
import type { Channels } from '../channels.ts';
import type { Comments } from './comments.ts';
import { ApiError, conflict, invalidField, notFound } from '../errors.ts';
import type { Notifications } from '../notifications.ts';

const TOKEN_PREFIX = 'hp_';
const HOUR_MS = 3_600_000;

export type LinkState = 'active' | 'expired' | 'revoked';

function stateOf(row: PreviewLinkRow, now: number): LinkState {
  if (row.revoked_at !== null) return 'revoked';
  return row.expires_at <= now ? 'expired' : 'active';
}

function linkView(row: PreviewLinkRow, now: number) {
  return {
    id: row.id,
    postId: row.post_id,
    createdAt: iso(row.created_at),
    expiresAt: iso(row.expires_at),
    revokedAt: row.revoked_at === null ? null : iso(row.revoked_at),
    state: stateOf(row, now),
  };
}

/** A visitor's comment or verdict as the preview page shows it: a name, never the team's ids. */
function guestComment(row: PostCommentRow) {
  return { id: row.id, kind: 'comment' as const, name: row.author_name, text: row.content, at: iso(row.created_at) };
}

function guestVerdict(row: PostReviewRow) {
  return { id: row.id, kind: row.action as 'client_approved' | 'changes_requested', name: row.author_name, text: row.comment, at: iso(row.created_at) };
}

export interface PreviewLinksOptions {
  publicUrl: string;
  /** The root post of any item id of the account (404 otherwise). */
  root(accountId: string, id: string): Promise<PostRow>;
}

export class PreviewLinks {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly channels: Channels,
    private readonly comments: Comments,
    private readonly approvals: Approvals,
    private readonly notifications: Notifications,
    private readonly options: PreviewLinksOptions,
  ) {}

  // The team's side ------------------------------------------------------------

  /** A new link; its token (and address) is answered this once. */
  async create(principal: Principal, postId: string, hours: number, now = Date.now()) {
    const root = await this.options.root(principal.accountId, postId);
    const token = randomToken(TOKEN_PREFIX);
    const row: PreviewLinkRow = {
      id: newId(),
      account_id: principal.accountId,
      post_id: root.id,
      token_hash: sha256(token),
      created_by: principal.userId ? `person:${principal.userId}` : `key:${principal.keyId}`,
      created_at: now,
      expires_at: now + hours * HOUR_MS,
      revoked_at: null,
    };
    await this.db.insertInto('preview_links').values(row).execute();
    return { ...linkView(row, now), token, url: `${this.options.publicUrl}/p/${token}` };
  }

  /** The links of a post, newest first (without their tokens, which are not kept). */
  async list(accountId: string, postId: string, now = Date.now()) {
    const root = await this.options.root(accountId, postId);
    const rows = await this.db
      .selectFrom('preview_links')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('post_id', '=', root.id)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .execute();
    return rows.map((r) => linkView(r, now));
  }

  /** Stops a link at once; revoking it again changes nothing. */
  async revoke(accountId: string, postId: string, linkId: string, now = Date.now()): Promise<void> {
    const root = await this.options.root(accountId, postId);
    const row = await this.db
      .selectFrom('preview_links')
      .select(['id', 'revoked_at'])
      .where('id', '=', linkId)
      .where('post_id', '=', root.id)
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    if (!row) throw notFound('Preview link', linkId);
    if (row.revoked_at === null) await this.db.updateTable('preview_links').set({ revoked_at: now }).where('id', '=', linkId).execute();
  }

  // The visitor's side ---------------------------------------------------------

  /** Where a token stands, for the preview page's status: the post is shown only while "active". */
  async state(token: string, now = Date.now()): Promise<LinkState | 'unknown'> {
    return (await this.find(token, now)).state;
  }

  private async find(token: string, now: number): Promise<{ state: LinkState | 'unknown'; link?: PreviewLinkRow; root?: PostRow }> {
    const link = await this.db.selectFrom('preview_links').selectAll().where('token_hash', '=', sha256(token)).executeTakeFirst();
    if (!link) return { state: 'unknown' };
    const state = stateOf(link, now);
    if (state !== 'active') return { state, link };
    const root = await this.db
      .selectFrom('posts')
      .selectAll()
      .where('id', '=', link.post_id)
      .where('account_id', '=', link.account_id)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    return root ? { state, link, root } : { state: 'unknown', link };
  }

  /** The link and its post; 404 for an unknown token or a deleted post, 410 once expired or revoked. */
  private async open(token: string, now: number): Promise<{ link: PreviewLinkRow; root: PostRow }> {
    const { state, link, root } = await this.find(token, now);
    if (state === 'revoked') throw new ApiError('link_expired', 'This preview link was revoked: ask the team for a new one');
    if (state === 'expired') throw new ApiError('link_expired', `This preview link expired on ${iso(link!.expires_at)}: ask the team for a new one`);
    if (!link || !root) throw new ApiError('not_found', 'This preview link does not exist (or its post was deleted): check that the whole address was copied');
    return { link, root };
  }

  /** The post as its network will show it, with what visitors of its links said so far. */
  async view(token: string, now = Date.now()) {
    const { link, root } = await this.open(token, now);
    const accountId = link.account_id;
    const channel = await this.channels.row(accountId, root.channel_id);
    const provider = this.channels.providerOrUndefined(channel);
    const items = await this.db
      .selectFrom('posts')
      .select(['content', 'media', 'delay_minutes'])
      .where('group_id', '=', root.group_id)
      .where('deleted_at', 'is', null)
      .orderBy('thread_index')
      .execute();
    const refs = items.map((i) => JSON.parse(i.media) as { id: string; path: string }[]);
    const ids = [...new Set(refs.flat().map((m) => m.id))].filter(Boolean);
    const known = new Map(
      (ids.length === 0
        ? []
        : await this.db
            .selectFrom('media')
            .select(['id', 'mime_type', 'thumbnail_url', 'alt', 'name'])
            .where('account_id', '=', accountId)
            .where('id', 'in', ids)
            .execute()
      ).map((m) => [m.id, m]),
    );
    const rules = provider?.rules;
    return {
      post: {
        id: root.id,
        publishDate: iso(root.publish_at),
        state: root.state,
        approval: root.approval ?? null,
        releaseURL: root.release_url,
        settings: shownSettings(root.settings),
        items: items.map((item, i) => ({
          content: item.content,
          delay: item.delay_minutes,
          media: refs[i]!.map((m) => {
            const found = known.get(m.id);
            return {
              path: m.path,
              mimeType: found?.mime_type ?? '',
              thumbnail: found?.thumbnail_url ?? null,
              alt: found?.alt ?? null,
              name: found?.name ?? '',
            };
          }),
        })),
      },
      channel: { id: channel.id, name: channel.name, picture: channel.picture, profile: channel.profile },
      network: {
        identifier: channel.provider,
        name: provider?.name ?? channel.provider,
        rules: {
          maxLength: rules?.maxLength ?? 100_000,
          counting: rules?.counting ?? 'codePoints',
          maxMedia: rules?.maxMedia ?? 100,
          minMedia: rules?.minMedia ?? 0,
          mediaKinds: rules?.mediaKinds ?? ['image', 'video'],
          threads: rules?.threads ?? true,
        },
      },
      feedback: await this.feedbackOf(this.db, accountId, root.id),
      expiresAt: iso(link.expires_at),
      canDecide: root.state !== 'PUBLISHED',
    };
  }

  /** A visitor's comment, shown to the team on the post (and a notification). */
  async comment(token: string, input: { name: string; content: string }, now = Date.now()) {
    const { link, root } = await this.open(token, now);
    const row = await this.db.transaction().execute(async (tx) => {
      const by = { kind: 'guest' as const, id: null, name: input.name };
      const made = await this.comments.insert(tx, { accountId: link.account_id, root, by, content: input.content, linkId: link.id, now });
      const channel = await tx.selectFrom('channels').select('name').where('id', '=', root.channel_id).executeTakeFirstOrThrow();
      await this.notifications.add(
        link.account_id,
        `${input.name} (preview link) commented on the post on ${channel.name}: “${excerpt(input.content)}”`,
        `/posts/${root.id}`,
        tx,
      );
      return made;
    });
    return guestComment(row);
  }

  /** A visitor approves or asks for changes (which needs a comment): recorded in the post's history for the team. */
  async decide(token: string, input: { name: string; decision: 'approve' | 'changes'; comment?: string }, now = Date.now()) {
    if (input.decision === 'changes' && !input.comment) throw invalidField('comment', 'is required when asking for changes: say what should change');
    const { link, root } = await this.open(token, now);
    if (root.state === 'PUBLISHED') throw conflict('already_published', 'This post is already published: there is nothing left to approve');
    const row = await this.db.transaction().execute((tx) =>
      this.approvals.feedback(tx, {
        accountId: link.account_id,
        root,
        linkId: link.id,
        name: input.name,
        decision: input.decision,
        comment: input.comment ?? null,
        now,
      }),
    );
    return guestVerdict(row);
  }

  /** What visitors of the post's links said, oldest first. */
  private async feedbackOf(db: Kysely<Database>, accountId: string, rootId: string) {
    const [comments, verdicts] = await Promise.all([
      this.comments.rowsOf(db, accountId, rootId, true),
      db.selectFrom('post_reviews').selectAll().where('post_id', '=', rootId).where('account_id', '=', accountId).where('link_id', 'is not', null).execute(),
    ]);
    return [...comments.map(guestComment), ...verdicts.map(guestVerdict)].sort((a, b) => a.at.localeCompare(b.at) || a.id.localeCompare(b.id));
  }
}

/** Of a post's settings, those its preview shows (PREVIEW_SETTINGS). */
function shownSettings(stored: string): Record<string, unknown> {
  const settings = JSON.parse(stored || '{}') as Record<string, unknown>;
  return Object.fromEntries(PREVIEW_SETTINGS.filter((name) => settings[name] !== undefined).map((name) => [name, settings[name]]));
}
