/** RSS and Atom subscriptions: feeds whose new items Herald posts to channels. */
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { Services } from '../../services.ts';
import { publicRoutes } from '../../contract/routes/public.ts';
import { newId } from '../../lib/ids.ts';
import { serve } from '../serve.ts';

const { routes } = publicRoutes;
const tags = ['feeds'];

export function feedsRoutes(services: Services): FastifyPluginAsyncZod {
  const { feeds } = services;
  return async (app) => {
    serve(app, routes.feeds, {
      tags,
      summary: "The account's RSS and Atom subscriptions, with each one's state and last error",
      handler: async (request) => feeds.list(request.principal.accountId),
    });

    serve(app, routes.createFeed, {
      tags,
      summary: 'Subscribe to an RSS or Atom feed',
      description:
        'The first read records the items the feed already has and posts none of them; every item that appears after that is posted once ' +
        "to each channel, as the template says, at once, at the channel's next free slot or as a draft.",
      handler: async (request, reply) => reply.code(201).send(await feeds.create(request.principal.accountId, request.body, request.principal.userId)),
    });

    serve(app, routes.feed, {
      tags,
      summary: 'A subscription and the items it saw last',
      handler: async (request) => feeds.get(request.principal.accountId, request.params.id),
    });

    serve(app, routes.updateFeed, {
      tags,
      summary: 'Change the URL, channels, template, mode, image or name of a subscription, or pause and resume it',
      description: 'Another URL is another feed: its first read records what it has, as for a new subscription.',
      handler: async (request) => feeds.update(request.principal.accountId, request.params.id, request.body, request.principal.userId),
    });

    serve(app, routes.deleteFeed, {
      tags,
      summary: 'End a subscription; the posts it made stay',
      handler: async (request) => {
        await feeds.remove(request.principal.accountId, request.params.id);
        return { deleted: true, id: request.params.id };
      },
    });

    serve(app, routes.checkFeed, {
      tags,
      summary: 'Read the feed now and post what is new',
      description: 'Answers what the read did; a feed that fails is answered 200 with outcome "failed" and the reason in feed.lastError.',
      handler: async (request) => feeds.checkNow(request.principal.accountId, request.params.id, `api-${process.pid}-${newId().slice(0, 8)}`),
    });
  };
}
