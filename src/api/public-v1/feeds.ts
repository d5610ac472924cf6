/** RSS and Atom subscriptions: feeds whose new items Herald posts to channels. */
import { z } from 'zod';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { Services } from '../../services.ts';
import { createFeedBody, deletedFeed, feed, feedCheck, feedDetail, idParam, updateFeedBody } from '../../contract/index.ts';
import { newId } from '../../lib/ids.ts';
import { routeErrors } from './route-errors.ts';

const tags = ['feeds'];

export function feedsRoutes(services: Services): FastifyPluginAsyncZod {
  const { feeds } = services;
  return async (app) => {
    app.get('/feeds', {
      schema: {
        tags,
        summary: "The account's RSS and Atom subscriptions, with each one's state and last error",
        response: { 200: z.array(feed), ...routeErrors() },
      },
      handler: async (request) => feeds.list(request.principal.accountId),
    });

    app.post('/feeds', {
      schema: {
        tags,
        summary: 'Subscribe to an RSS or Atom feed',
        description:
          'The first read records the items the feed already has and posts none of them; every item that appears after that is posted once ' +
          "to each channel, as the template says, at once, at the channel's next free slot or as a draft.",
        body: createFeedBody,
        response: { 201: feed, ...routeErrors() },
      },
      handler: async (request, reply) => reply.code(201).send(await feeds.create(request.principal.accountId, request.body, request.principal.userId)),
    });

    app.get('/feeds/:id', {
      schema: { tags, summary: 'A subscription and the items it saw last', params: idParam, response: { 200: feedDetail, ...routeErrors(404) } },
      handler: async (request) => feeds.get(request.principal.accountId, request.params.id),
    });

    app.patch('/feeds/:id', {
      schema: {
        tags,
        summary: 'Change the URL, channels, template, mode, image or name of a subscription, or pause and resume it',
        description: 'Another URL is another feed: its first read records what it has, as for a new subscription.',
        params: idParam,
        body: updateFeedBody,
        response: { 200: feed, ...routeErrors(404) },
      },
      handler: async (request) => feeds.update(request.principal.accountId, request.params.id, request.body, request.principal.userId),
    });

    app.delete('/feeds/:id', {
      schema: { tags, summary: 'End a subscription; the posts it made stay', params: idParam, response: { 200: deletedFeed, ...routeErrors(404) } },
      handler: async (request) => {
        await feeds.remove(request.principal.accountId, request.params.id);
        return { deleted: true, id: request.params.id };
      },
    });

    app.post('/feeds/:id/check', {
      schema: {
        tags,
        summary: 'Read the feed now and post what is new',
        description: 'Answers what the read did; a feed that fails is answered 200 with outcome "failed" and the reason in feed.lastError.',
        params: idParam,
        response: { 200: feedCheck, ...routeErrors(404, 409) },
      },
      handler: async (request) => feeds.checkNow(request.principal.accountId, request.params.id, `api-${process.pid}-${newId().slice(0, 8)}`),
    });
  };
}
