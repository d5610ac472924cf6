/**
 * Tools about reviewing posts: the posts waiting for approval, approving and
 * returning them, the team's comments, and preview links for people without an
 * account. Each calls the domain service its /posts/{id}/... route calls; who
 * may decide (an owner or admin, or an API key) is the domain's own check.
 */
import { z } from 'zod';
import { addCommentBody, approveBody, createPreviewLinkBody, idParam, listPostsQuery, rejectBody, type PostSummary } from '../../contract/index.ts';
import { awaitsApproval } from '../../domain/approvals/approvals.ts';
import { invalidField } from '../../domain/errors.ts';
import { defineTool } from './tool.ts';

const postId = idParam.shape.id.describe('The post id (from list_pending_approvals, list_posts or create_post)');

export const listPendingApprovals = defineTool({
  name: 'list_pending_approvals',
  title: 'List posts awaiting approval',
  description: [
    "Lists the posts whose publishing time is between startDate and endDate that wait for an owner's or admin's approval",
    '(in an account where members\' posts need approval, a member\'s post stays a DRAFT with "approval": "pending" until someone decides).',
    'Example: {"startDate": "2026-11-01T00:00:00Z", "endDate": "2026-12-31T00:00:00Z"}; a post whose time has passed still waits, so start the range',
    'in the past. Answers the posts as list_posts does (id, content, channel, publishDate). Next: list_comments to read what was said about one,',
    'then approve_post or reject_post.',
  ].join(' '),
  scope: 'posts:read',
  input: z
    .object({
      startDate: listPostsQuery.shape.startDate.describe('Start of the range: an ISO 8601 date-time, e.g. 2026-11-01T00:00:00Z'),
      endDate: listPostsQuery.shape.endDate.describe('End of the range (included): an ISO 8601 date-time, e.g. 2026-12-31T00:00:00Z'),
      customer: listPostsQuery.shape.customer.describe("Only the posts of this customer's channels (a customer id)"),
    })
    .strict(),
  hints: { readOnly: true },
  async run({ startDate, endDate, customer }, { services, principal }) {
    if (endDate < startDate) throw invalidField('endDate', 'must not be before startDate');
    const posts = JSON.parse(await services.posts.listJson(principal.accountId, startDate, endDate, customer)) as PostSummary[];
    return { posts: posts.filter(awaitsApproval) };
  },
});

export const approvePost = defineTool({
  name: 'approve_post',
  title: 'Approve a post',
  description: [
    "Approves a post that waits for approval (or one returned before): it is scheduled at its time, or at its channel's next free posting time",
    'when that time has passed. Only an owner or admin (or an API key) may approve; a member is refused. Example: {"id": "<post id>",',
    '"comment": "Good to go"}. Answers the post\'s approval: "state": "approved", "postState": "QUEUE", the "publishDate" it goes out at and',
    'the history of requests and decisions. Follow the post with get_post.',
  ].join(' '),
  scope: 'posts:write',
  input: z.object({ id: postId, comment: approveBody.shape.comment.describe('Optional. A word for the author, kept in the history') }).strict(),
  hints: { readOnly: false },
  async run({ id, comment }, { services, principal }) {
    return services.approvals.approve(principal, id, comment);
  },
});

export const rejectPost = defineTool({
  name: 'reject_post',
  title: 'Return a post to its author',
  description: [
    'Returns a post that waits for approval to its author with what to change; it stays a draft and is not published. Only an owner or admin',
    '(or an API key) may return a post. Example: {"id": "<post id>", "comment": "Say which prices go up, please"}. The comment goes to the author',
    '(a notification, and the approval history list_comments shows). Answers the post\'s approval with "state": "rejected".',
    'When the author changes the post it waits again; approve_post may also approve it as it is.',
  ].join(' '),
  scope: 'posts:write',
  input: z.object({ id: postId, comment: rejectBody.shape.comment.describe('Required. What the author should change') }).strict(),
  hints: { readOnly: false },
  async run({ id, comment }, { services, principal }) {
    return services.approvals.reject(principal, id, comment);
  },
});

export const listComments = defineTool({
  name: 'list_comments',
  title: "List a post's comments",
  description: [
    "The team's comments on a post, and those of its preview links' visitors (viaPreviewLink), oldest first, each with who wrote it;",
    'and the post\'s approval: its "state" (pending, approved, rejected, or null when it never needed approval) and the "history" of requests and',
    'decisions, where a returned post carries the comment it came back with. Example: {"id": "<post id>"}. Reply with add_comment.',
  ].join(' '),
  scope: 'posts:read',
  input: z.object({ id: postId }).strict(),
  hints: { readOnly: true },
  async run({ id }, { services, principal }) {
    const { comments } = await services.comments.list(principal, id);
    return { comments, approval: await services.approvals.status(principal.accountId, id) };
  },
});

export const addComment = defineTool({
  name: 'add_comment',
  title: 'Comment on a post',
  description: [
    "Adds a comment to a post's discussion, which the team reads in Herald (list_comments); it does not change the post or its approval.",
    'Example: {"id": "<post id>", "content": "Can we add the price?"}. Answers the comment with its id and author.',
  ].join(' '),
  scope: 'posts:write',
  input: z.object({ id: postId, content: addCommentBody.shape.content.describe('The comment: 1 to 5000 characters') }).strict(),
  hints: { readOnly: false },
  async run({ id, content }, { services, principal }) {
    return services.comments.add(principal, id, content);
  },
});

export const createPreviewLink = defineTool({
  name: 'create_preview_link',
  title: 'Create a preview link',
  description: [
    'Makes a shareable address that shows the post as its network will show it to someone without an account (a client), who may comment',
    'and approve or ask for changes there (their approval is advice: an owner or admin still decides with approve_post). Example:',
    '{"id": "<post id>", "expiresInHours": 48}. Answers "url" (give it to the person), "expiresAt" and the link\'s "id"; the address is answered',
    'this once and not kept. What visitors say comes back in list_comments.',
  ].join(' '),
  scope: 'posts:write',
  input: z.object({ id: postId, expiresInHours: createPreviewLinkBody.shape.expiresInHours }).strict(),
  hints: { readOnly: false },
  async run({ id, expiresInHours }, { services, principal }) {
    return services.previewLinks.create(principal, id, expiresInHours);
  },
});
