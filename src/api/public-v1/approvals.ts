/**
 * Approvals, comments and preview links through the public API (and, with a
 * session, the web application): the account's setting, a post's approval with
 * its history, approving and returning, the team's comments, and the links that
 * show a post to someone without an account.
 */
import { z } from 'zod';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { Services } from '../../services.ts';
import {
  addCommentBody,
  approvalSettings,
  approveBody,
  commentParams,
  commentsList,
  createdPreviewLink,
  createPreviewLinkBody,
  deletedComment,
  idParam,
  postApproval,
  postComment,
  previewLink,
  previewLinkParams,
  rejectBody,
  revokedPreviewLink,
} from '../../contract/index.ts';
import { routeErrors } from './route-errors.ts';

const tags = ['approvals'];

export function approvalsRoutes(services: Services): FastifyPluginAsyncZod {
  const { approvals, comments, previewLinks } = services;
  return async (app) => {
    app.get('/approval-settings', {
      schema: { tags, summary: 'Whether posts by members wait for approval', response: { 200: approvalSettings, ...routeErrors() } },
      handler: async (request) => approvals.settings(request.principal.accountId),
    });

    app.put('/approval-settings', {
      schema: {
        tags,
        summary: 'Decide whether posts by members wait for approval (owners, admins and API keys)',
        description: 'Posts already waiting keep waiting when this is turned off; an owner or admin still approves or returns them.',
        body: approvalSettings,
        response: { 200: approvalSettings, ...routeErrors() },
      },
      handler: async (request) => approvals.setSettings(request.principal, request.body),
    });

    app.get('/posts/:id/approval', {
      schema: {
        tags,
        summary: "A post's approval: where it stands, who asked, and every request, decision and preview-link verdict",
        params: idParam,
        response: { 200: postApproval, ...routeErrors(404) },
      },
      handler: async (request) => approvals.status(request.principal.accountId, request.params.id),
    });

    app.post('/posts/:id/approve', {
      schema: {
        tags,
        summary: 'Approve a post awaiting approval (owners, admins and API keys): it is scheduled at its time',
        description: "When its time has passed, it is scheduled at its channel's next free posting time instead. A returned post may be approved too.",
        params: idParam,
        body: approveBody,
        response: { 200: postApproval, ...routeErrors(404, 409) },
      },
      handler: async (request) => approvals.approve(request.principal, request.params.id, request.body.comment),
    });

    app.post('/posts/:id/reject', {
      schema: {
        tags,
        summary: 'Return a post awaiting approval to its author with a comment (owners, admins and API keys); it stays a draft',
        params: idParam,
        body: rejectBody,
        response: { 200: postApproval, ...routeErrors(404, 409) },
      },
      handler: async (request) => approvals.reject(request.principal, request.params.id, request.body.comment),
    });

    app.get('/posts/:id/comments', {
      schema: {
        tags,
        summary: "The team's comments on a post (and those of its preview links' visitors), oldest first",
        params: idParam,
        response: { 200: commentsList, ...routeErrors(404) },
      },
      handler: async (request) => comments.list(request.principal, request.params.id),
    });

    app.post('/posts/:id/comments', {
      schema: { tags, summary: 'Comment on a post', params: idParam, body: addCommentBody, response: { 201: postComment, ...routeErrors(404) } },
      handler: async (request, reply) => reply.code(201).send(await comments.add(request.principal, request.params.id, request.body.content)),
    });

    app.delete('/posts/:id/comments/:commentId', {
      schema: {
        tags,
        summary: 'Delete a comment: your own, or any as an owner or admin',
        params: commentParams,
        response: { 200: deletedComment, ...routeErrors(404) },
      },
      handler: async (request) => {
        await comments.remove(request.principal, request.params.id, request.params.commentId);
        return { deleted: true, id: request.params.commentId };
      },
    });

    app.get('/posts/:id/preview-links', {
      schema: {
        tags,
        summary: "A post's preview links, newest first (their tokens are not kept, so not shown)",
        params: idParam,
        response: { 200: z.array(previewLink), ...routeErrors(404) },
      },
      handler: async (request) => previewLinks.list(request.principal.accountId, request.params.id),
    });

    app.post('/posts/:id/preview-links', {
      schema: {
        tags,
        summary: 'Make a link that shows the post to someone without an account, who may comment and approve or ask for changes',
        description: 'The answer carries the token and its URL this once; only a hash is kept. The link stops working when it expires or is revoked.',
        params: idParam,
        body: createPreviewLinkBody,
        response: { 201: createdPreviewLink, ...routeErrors(404) },
      },
      handler: async (request, reply) => reply.code(201).send(await previewLinks.create(request.principal, request.params.id, request.body.expiresInHours)),
    });

    app.delete('/posts/:id/preview-links/:linkId', {
      schema: { tags, summary: 'Revoke a preview link at once', params: previewLinkParams, response: { 200: revokedPreviewLink, ...routeErrors(404) } },
      handler: async (request) => {
        await previewLinks.revoke(request.principal.accountId, request.params.id, request.params.linkId);
        return { revoked: true, id: request.params.linkId };
      },
    });
  };
}
