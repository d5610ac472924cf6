import { z } from 'zod';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { limitHeaders } from '../../domain/rate-limit.ts';
import { idempotent, jsonBodyHash } from '../idempotent.ts';
import { sendJsonText } from '../json-text.ts';
import type { Services } from '../../services.ts';
import {
  createdPosts,
  createPostsBody,
  deletedGroup,
  deletedPost,
  idParam,
  listPostsQuery,
  postDetail,
  postSettings,
  postSettingsBody,
  postStatus,
  postStatusBody,
  postsList,
  recentPost,
  releaseIdBody,
  releaseIdSet,
} from '../../contract/index.ts';
import { routeErrors } from './route-errors.ts';

const tags = ['posts'];

export function postsRoutes(services: Services): FastifyPluginAsyncZod {
  const { posts, config } = services;
  return async (app) => {
    app.get('/posts', {
      schema: {
        tags,
        summary: 'List posts (first items of threads) in a date range',
        querystring: listPostsQuery,
        response: { 200: postsList, ...routeErrors() },
      },
      // The database builds the list's JSON (see Posts.listJson): sent as it comes, not parsed and serialised again.
      handler: async (request, reply) => {
        const { startDate, endDate, customer } = request.query;
        const list = await posts.listJson(request.principal.accountId, startDate, endDate, customer);
        return sendJsonText(reply, `{"posts":${list}}`);
      },
    });

    app.post('/posts', {
      schema: {
        tags,
        summary: 'Create, schedule, publish now or update posts on one or more channels',
        description: `Limited to ${config.postsPerHour} requests per hour per account; send several channels in one call. Accepts an Idempotency-Key header.`,
        body: createPostsBody,
        response: { 201: createdPosts, ...routeErrors(404) },
      },
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

    app.get('/posts/:id', {
      schema: {
        tags,
        summary: 'One post with its whole thread, per-item state, errors and attempts',
        params: idParam,
        response: { 200: postDetail, ...routeErrors(404) },
      },
      handler: async (request) => posts.detail(request.principal.accountId, request.params.id),
    });

    app.delete('/posts/:id', {
      schema: {
        tags,
        summary: "Delete a post's group (the post and its thread)",
        params: idParam,
        response: { 200: deletedPost, ...routeErrors(404) },
      },
      handler: async (request) => ({ deleted: true, ...(await posts.deletePost(request.principal.accountId, request.params.id)) }),
    });

    app.delete('/posts/group/:group', {
      schema: {
        tags,
        summary: 'Delete a whole group',
        params: z.object({ group: z.string().min(1).max(200) }),
        response: { 200: deletedGroup, ...routeErrors(404) },
      },
      handler: async (request) => ({
        deleted: true,
        group: request.params.group,
        ids: await posts.deleteGroup(request.principal.accountId, request.params.group),
      }),
    });

    app.put('/posts/:id/status', {
      schema: {
        tags,
        summary: 'Move a post between DRAFT and QUEUE',
        params: idParam,
        body: postStatusBody,
        response: { 200: postStatus, ...routeErrors(404) },
      },
      handler: async (request) => ({
        id: request.params.id,
        state: await posts.setStatus(request.principal.accountId, request.params.id, request.body.status, request.principal.userId),
      }),
    });

    app.put('/posts/:id/settings', {
      schema: {
        tags,
        summary: 'Merge provider settings into a post not yet published',
        params: idParam,
        body: postSettingsBody,
        response: { 200: postSettings, ...routeErrors(404) },
      },
      handler: async (request) => ({
        id: request.params.id,
        settings: await posts.mergeSettings(request.principal.accountId, request.params.id, request.body.settings, request.principal.userId),
      }),
    });

    app.put('/posts/:id/release-id', {
      schema: {
        tags,
        summary: "Attach the network's id to a post published by hand",
        params: idParam,
        body: releaseIdBody,
        response: { 200: releaseIdSet, ...routeErrors(404) },
      },
      handler: async (request) => posts.attachReleaseId(request.principal.accountId, request.params.id, request.body.releaseId),
    });

    app.get('/posts/:id/missing', {
      schema: {
        tags,
        summary: "Recent network posts that could be this post's release (for networks that list them; [] for others)",
        params: idParam,
        response: {
          200: z.array(recentPost),
          ...routeErrors(404, 409, 502),
        },
      },
      handler: async (request) =>
        (await services.reads.recentPosts(request.principal.accountId, request.params.id)).map((p) => ({
          ...p,
          at: p.at === undefined ? undefined : new Date(p.at).toISOString(),
        })),
    });

    app.post('/posts/:id/retry', {
      schema: {
        tags,
        summary: 'Put the failed items of a post back in the queue, due now',
        params: idParam,
        response: { 200: postDetail, ...routeErrors(404, 409) },
      },
      handler: async (request) => posts.retry(request.principal.accountId, request.params.id),
    });
  };
}
