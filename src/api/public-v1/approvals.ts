/**
 * Approvals, comments and preview links through the public API (and, with a
 * session, the web application): the account's setting, a post's approval with
 * its history, approving and returning, the team's comments, and the links that
 * show a post to someone without an account.
 */
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { Services } from '../../services.ts';
import { publicRoutes } from '../../contract/routes/public.ts';
import { serve } from '../serve.ts';

const { routes } = publicRoutes;
const tags = ['approvals'];

export function approvalsRoutes(services: Services): FastifyPluginAsyncZod {
  const { approvals, comments, previewLinks } = services;
  return async (app) => {
    serve(app, routes.approvalSettings, {
      tags,
      summary: 'Whether posts by members wait for approval',
      handler: async (request) => approvals.settings(request.principal.accountId),
    });

    serve(app, routes.setApprovalSettings, {
      tags,
      summary: 'Decide whether posts by members wait for approval (owners, admins and API keys)',
      description: 'Posts already waiting keep waiting when this is turned off; an owner or admin still approves or returns them.',
      handler: async (request) => approvals.setSettings(request.principal, request.body),
    });

    serve(app, routes.approval, {
      tags,
      summary: "A post's approval: where it stands, who asked, and every request, decision and preview-link verdict",
      handler: async (request) => approvals.status(request.principal.accountId, request.params.id),
    });

    serve(app, routes.approve, {
      tags,
      summary: 'Approve a post awaiting approval (owners, admins and API keys): it is scheduled at its time',
      description: "When its time has passed, it is scheduled at its channel's next free posting time instead. A returned post may be approved too.",
      handler: async (request) => approvals.approve(request.principal, request.params.id, request.body.comment),
    });

    serve(app, routes.reject, {
      tags,
      summary: 'Return a post awaiting approval to its author with a comment (owners, admins and API keys); it stays a draft',
      handler: async (request) => approvals.reject(request.principal, request.params.id, request.body.comment),
    });

    serve(app, routes.comments, {
      tags,
      summary: "The team's comments on a post (and those of its preview links' visitors), oldest first",
      handler: async (request) => comments.list(request.principal, request.params.id),
    });

    serve(app, routes.addComment, {
      tags,
      summary: 'Comment on a post',
      handler: async (request, reply) => reply.code(201).send(await comments.add(request.principal, request.params.id, request.body.content)),
    });

    serve(app, routes.deleteComment, {
      tags,
      summary: 'Delete a comment: your own, or any as an owner or admin',
      handler: async (request) => {
        await comments.remove(request.principal, request.params.id, request.params.commentId);
        return { deleted: true, id: request.params.commentId };
      },
    });

    serve(app, routes.previewLinks, {
      tags,
      summary: "A post's preview links, newest first (their tokens are not kept, so not shown)",
      handler: async (request) => previewLinks.list(request.principal.accountId, request.params.id),
    });

    serve(app, routes.createPreviewLink, {
      tags,
      summary: 'Make a link that shows the post to someone without an account, who may comment and approve or ask for changes',
      description: 'The answer carries the token and its URL this once; only a hash is kept. The link stops working when it expires or is revoked.',
      handler: async (request, reply) => reply.code(201).send(await previewLinks.create(request.principal, request.params.id, request.body.expiresInHours)),
    });

    serve(app, routes.revokePreviewLink, {
      tags,
      summary: 'Revoke a preview link at once',
      handler: async (request) => {
        await previewLinks.revoke(request.principal.accountId, request.params.id, request.params.linkId);
        return { revoked: true, id: request.params.linkId };
      },
    });
  };
}
