import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { limitHeaders } from '../../domain/rate-limit.ts';
import { idempotent, jsonBodyHash } from '../idempotent.ts';
import { sendJsonText } from '../json-text.ts';
import type { Services } from '../../services.ts';
import { publicRoutes } from '../../contract/routes/public.ts';
import { serve } from '../serve.ts';

const { routes } = publicRoutes;
const tags = ['posts'];

export function postsRoutes(services: Services): FastifyPluginAsyncZod {
  const { posts, config } = services;
  return async (app) => {
    serve(app, routes.posts, {
      tags,
      summary: 'List posts (first items of threads) in a date range',
      // The database builds the list's JSON (see Posts.listJson): sent as it comes, not parsed and serialised again.
      handler: async (request, reply) => {
        const { startDate, endDate, customer } = request.query;
        const list = await posts.listJson(request.principal.accountId, startDate, endDate, customer);
        return sendJsonText(reply, `{"posts":${list}}`);
      },
    });

    serve(app, routes.createPosts, {
      tags,
      summary: 'Create, schedule, publish now or update posts on one or more channels',
      description: `Limited to ${config.postsPerHour} requests per hour per account; send several channels in one call. Accepts an Idempotency-Key header.`,
      handler: async (request, reply) => {
        const { accountId } = request.principal;
        const hash = jsonBodyHash(request);
        return idempotent(services, request, reply, 'POST /posts', hash, async () => {
          // A member's posts may wait for approval (a person's credential carries userId; API keys act for the account).
          const plan = await posts.plan(accountId, request.body, undefined, { author: request.principal.userId });
          const [created] = await posts.create(accountId, [plan], { counted: (limit) => reply.headers(limitHeaders(limit)) });
          return { status: 201, body: created };
        });
      },
    });

    serve(app, routes.post, {
      tags,
      summary: 'One post with its whole thread, per-item state, errors and attempts',
      handler: async (request) => posts.detail(request.principal.accountId, request.params.id),
    });

    serve(app, routes.deletePost, {
      tags,
      summary: "Delete a post's group (the post and its thread)",
      handler: async (request) => ({ deleted: true, ...(await posts.deletePost(request.principal.accountId, request.params.id)) }),
    });

    serve(app, routes.deleteGroup, {
      tags,
      summary: 'Delete a whole group',
      handler: async (request) => ({
        deleted: true,
        group: request.params.group,
        ids: await posts.deleteGroup(request.principal.accountId, request.params.group),
      }),
    });

    serve(app, routes.setPostStatus, {
      tags,
      summary: 'Move a post between DRAFT and QUEUE',
      handler: async (request) => ({
        id: request.params.id,
        state: await posts.setStatus(request.principal.accountId, request.params.id, request.body.status, request.principal.userId),
      }),
    });

    serve(app, routes.mergePostSettings, {
      tags,
      summary: 'Merge provider settings into a post not yet published',
      handler: async (request) => ({
        id: request.params.id,
        settings: await posts.mergeSettings(request.principal.accountId, request.params.id, request.body.settings, request.principal.userId),
      }),
    });

    serve(app, routes.attachReleaseId, {
      tags,
      summary: "Attach the network's id to a post published by hand",
      handler: async (request) => posts.attachReleaseId(request.principal.accountId, request.params.id, request.body.releaseId),
    });

    serve(app, routes.missingRelease, {
      tags,
      summary: "Recent network posts that could be this post's release (for networks that list them; [] for others)",
      handler: async (request) =>
        (await services.reads.recentPosts(request.principal.accountId, request.params.id)).map((p) => ({
          ...p,
          at: p.at === undefined ? undefined : new Date(p.at).toISOString(),
        })),
    });

    serve(app, routes.retryPost, {
      tags,
      summary: 'Put the failed items of a post back in the queue, due now',
      handler: async (request) => posts.retry(request.principal.accountId, request.params.id),
    });
  };
}
