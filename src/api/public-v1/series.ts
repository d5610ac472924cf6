/** Repeating posts: a rule and the post to repeat; the engine creates each occurrence as a post of its own. */
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { Services } from '../../services.ts';
import { limitHeaders } from '../../domain/rate-limit.ts';
import { publicRoutes } from '../../contract/routes/public.ts';
import { idempotent, jsonBodyHash } from '../idempotent.ts';
import { serve } from '../serve.ts';

const { routes } = publicRoutes;
const tags = ['series'];

const ABOUT =
  'The post is checked as POST /posts checks it, at its first occurrence. Occurrences due within the next 14 days (and always the next one) ' +
  'exist as posts, each with `seriesId`, and are created by the publishing engine as time goes on: at once in a process that runs one, ' +
  'otherwise within HERALD_SERIES_INTERVAL_SECONDS.';

export function seriesRoutes(services: Services): FastifyPluginAsyncZod {
  return async (app) => {
    serve(app, routes.seriesList, {
      tags,
      summary: "The account's repeating posts, newest first",
      handler: async (request) => services.series.list(request.principal.accountId),
    });

    serve(app, routes.createSeries, {
      tags,
      summary: 'Create a repeating post: every N days or weeks, or on chosen weekdays, until a date or for a number of times',
      description: `${ABOUT} Counts as one request against the hourly POST /posts limit (${services.config.postsPerHour} per account). Accepts an Idempotency-Key header.`,
      handler: async (request, reply) => {
        const { accountId, userId } = request.principal;
        return idempotent(services, request, reply, 'POST /series', jsonBodyHash(request), async () => ({
          status: 201,
          body: await services.series.create(accountId, request.body, userId, { counted: (limit) => reply.headers(limitHeaders(limit)) }),
        }));
      },
    });

    serve(app, routes.series, {
      tags,
      summary: 'One repeating post with its latest occurrences (up to 100) and their posts',
      handler: async (request) => services.series.get(request.principal.accountId, request.params.id),
    });

    serve(app, routes.updateSeries, {
      tags,
      summary: 'Change the rule and the post of a series',
      description:
        'Future occurrences not yet published are made again from the new rule and post, except those changed on their own ' +
        '(edited, moved or deleted one by one), which stay as they are. Published occurrences are kept.',
      handler: async (request) => services.series.update(request.principal.accountId, request.params.id, request.body, request.principal.userId),
    });

    serve(app, routes.deleteSeries, {
      tags,
      summary: 'Stop a series: its future occurrences not yet published are deleted; what was published stays',
      handler: async (request) => ({
        deleted: true,
        id: request.params.id,
        removedPosts: await services.series.remove(request.principal.accountId, request.params.id),
      }),
    });
  };
}
