/**
 * Approvals, comments and preview links: what their routes take and answer,
 * both the public API's (/approval-settings, /posts/{id}/approval, comments,
 * preview-links) and the preview page's, which a visitor without an account
 * reaches with a link's token (/api/preview/{token}).
 */
import { z } from 'zod';
import { wholeNumber } from './common.ts';

export const APPROVAL_STATES = ['pending', 'approved', 'rejected'] as const;

/** Where a post stands with its reviewers; null when it never needed approval. */
export const approvalState = z
  .enum(APPROVAL_STATES)
  .nullable()
  .describe('pending: waits for an owner or admin (the post stays DRAFT until then); approved; rejected: returned to its author; null: never asked');

/** What a decision or a preview link's visitor did. */
export const REVIEW_ACTIONS = ['requested', 'approved', 'rejected', 'client_approved', 'changes_requested'] as const;

const text = (max: number) => z.string().trim().min(1, 'must not be empty').max(max);
const commentText = text(5000);

export const author = z.object({
  kind: z.enum(['person', 'key', 'guest']).describe('a person of the team, an API key, or a visitor of a preview link'),
  id: z.string().nullable().describe("The person's or key's id; null for a visitor"),
  name: z.string().describe("The person's or key's name, or the name a visitor gave"),
});

export const approvalSettings = z.object({
  membersNeedApproval: z.boolean().describe('Posts created or changed by members wait for the approval of an owner or admin before they are scheduled'),
});

export const reviewEntry = z.object({
  id: z.string(),
  action: z.enum(REVIEW_ACTIONS),
  by: author,
  comment: z.string().nullable(),
  at: z.string(),
  viaPreviewLink: z.boolean(),
});

export const postApproval = z.object({
  postId: z.string(),
  state: approvalState,
  /** The post's state for the engine: a pending or rejected post is DRAFT. */
  postState: z.string(),
  publishDate: z.string(),
  requestedBy: author.nullable(),
  history: z.array(reviewEntry).describe('Requests, decisions and preview-link feedback, oldest first'),
});

export const approveBody = z.object({ comment: commentText.optional() });
export const rejectBody = z.object({ comment: commentText.describe('What the author should change; required') });

export const postComment = z.object({
  id: z.string(),
  content: z.string(),
  by: author,
  at: z.string(),
  viaPreviewLink: z.boolean(),
  own: z.boolean().describe('Written with this credential (a person, or this API key): it may delete it'),
});

export const commentsList = z.object({ comments: z.array(postComment) });
export const addCommentBody = z.object({ content: commentText });
export const commentParams = z.object({ id: z.string().min(1).max(200), commentId: z.string().min(1).max(200) });
export const deletedComment = z.object({ deleted: z.boolean(), id: z.string() });

export const previewLink = z.object({
  id: z.string(),
  postId: z.string(),
  createdAt: z.string(),
  expiresAt: z.string(),
  revokedAt: z.string().nullable(),
  state: z.enum(['active', 'expired', 'revoked']),
});

/** POST /posts/{id}/preview-links answers the token (and its URL) this once; only its hash is kept. */
export const createdPreviewLink = previewLink.extend({ token: z.string(), url: z.string() });

export const PREVIEW_LINK_DEFAULT_HOURS = 7 * 24;
export const PREVIEW_LINK_MAX_HOURS = 90 * 24;

export const createPreviewLinkBody = z.object({
  expiresInHours: wholeNumber(1, PREVIEW_LINK_MAX_HOURS)
    .optional()
    .default(PREVIEW_LINK_DEFAULT_HOURS)
    .describe(`Hours until the link stops working (default ${PREVIEW_LINK_DEFAULT_HOURS}, at most ${PREVIEW_LINK_MAX_HOURS})`),
});
export const previewLinkParams = z.object({ id: z.string().min(1).max(200), linkId: z.string().min(1).max(200) });
export const revokedPreviewLink = z.object({ revoked: z.boolean(), id: z.string() });

// What a visitor of a preview link sees and sends.

export const previewToken = z.object({ token: z.string().min(1).max(200) });

const guestName = text(80).describe('How the team will know you');

export const guestCommentBody = z.object({ name: guestName, content: commentText });
export const guestDecisionBody = z.object({
  name: guestName,
  decision: z.enum(['approve', 'changes']).describe('approve, or ask for changes (which needs a comment saying what)'),
  comment: commentText.optional(),
});

/** A comment or decision as a visitor sees it: names only, never the team's ids. */
export const guestEntry = z.object({
  id: z.string(),
  kind: z.enum(['comment', 'client_approved', 'changes_requested']),
  name: z.string(),
  text: z.string().nullable(),
  at: z.string(),
});

export const previewMedia = z.object({
  path: z.string(),
  mimeType: z.string(),
  thumbnail: z.string().nullable(),
  alt: z.string().nullable(),
  name: z.string(),
});

/**
 * The post settings a preview shows (titles, the board, the community, the
 * kind of post, covers): a visitor sees these and no other setting.
 */
export const PREVIEW_SETTINGS = [
  'title',
  'subtitle',
  'subject',
  'preview',
  'post_type',
  'board',
  'subreddit',
  'submolt',
  'carousel_name',
  'thumbnail',
  'main_image',
] as const;

export const previewView = z.object({
  post: z.object({
    id: z.string(),
    publishDate: z.string(),
    state: z.string(),
    approval: approvalState,
    releaseURL: z.string().nullable(),
    items: z.array(z.object({ content: z.string(), delay: z.number(), media: z.array(previewMedia) })),
    settings: z.record(z.string(), z.unknown()).describe('The settings of PREVIEW_SETTINGS the post has'),
  }),
  channel: z.object({ id: z.string(), name: z.string(), picture: z.string().nullable(), profile: z.string().nullable() }),
  network: z.object({
    identifier: z.string(),
    name: z.string(),
    rules: z.object({
      maxLength: z.number(),
      counting: z.string(),
      maxMedia: z.number(),
      minMedia: z.number(),
      mediaKinds: z.array(z.enum(['image', 'video'])),
      threads: z.boolean(),
    }),
  }),
  /** What visitors of this post's preview links said (the team's own comments stay with the team). */
  feedback: z.array(guestEntry),
  expiresAt: z.string(),
  /** Whether approving or asking for changes is still possible (not once the post is published). */
  canDecide: z.boolean(),
});

export const guestAnswer = guestEntry;
