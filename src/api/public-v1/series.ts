/** Repeating posts: a rule and the post to repeat; the engine creates each occurrence as a post of its own. */
import { z } from 'zod';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { Services } from '../../services.ts';
import { limitHeaders } from '../../domain/rate-limit.ts';
import { deletedSeries, idParam, series, seriesBody, seriesDetail } from '../../contract/index.ts';
import { idempotent, jsonBodyHash } from '../idempotent.ts';
import { routeErrors } from './route-errors.ts';

const tags = ['series'];

const ABOUT =
  'The post is checked as POST /posts checks it, at its first occurrence. Occurrences due within the next 14 days (and always the next one) ' +
  'exist as posts, each with `seriesId`, and are created by the publishing engine as time goes on: at once in a process that runs one, ' +
  'otherwise within HERALD_SERIES_INTERVAL_SECONDS.';

export function seriesRoutes(services: Services): FastifyPluginAsyncZod {
  return async (app) => {
    app.get('/series', {
      schema: { tags, summary: "The account's repeating posts, newest first", response: { 200: z.array(series), ...routeErrors() } },
      handler: async (request) => services.series.list(request.principal.accountId),
    });

    app.post('/series', {
      schema: {
        tags,
        summary: 'Create a repeating post: every N days or weeks, or on chosen weekdays, until a date or for a number of times',
        description: `${ABOUT} Counts as one request against the hourly POST /posts limit (${services.config.postsPerHour} per account). Accepts an Idempotency-Key header.`,
        body: seriesBody,
        response: { 201: series, ...routeErrors(404) },
      },
      handler: async (request, reply) => {
        const { accountId, userId } = request.principal;
        return idempotent(services, request, reply, 'POST /series', jsonBodyHash(request), async () => ({
          status: 201,
          body: await services.series.create(accountId, request.body, userId, { counted: (limit) => reply.headers(limitHeaders(limit)) }),
        }));
      },
    });

    app.get('/series/:id', {
      schema: {
        tags,
        summary: 'One repeating post with its latest occurrences (up to 100) and their posts',
        params: idParam,
        response: { 200: seriesDetail, ...routeErrors(404) },
      },
      handler: async (request) => services.series.get(request.principal.accountId, request.params.id),
    });

    app.put('/series/:id', {
      schema: {
        tags,
        summary: 'Change the rule and the post of a series',
        description:
          'Future occurrences not yet published are made again from the new rule and post, except those changed on their own ' +
          '(edited, moved or deleted one by one), which stay as they are. Published occurrences are kept.',
        params: idParam,
        body: seriesBody,
        response: { 200: seriesDetail, ...routeErrors(404, 409) },
      },
      handler: async (request) => services.series.update(request.principal.accountId, request.params.id, request.body, request.principal.userId),
    });

    app.delete('/series/:id', {
      schema: {
        tags,
        summary: 'Stop a series: its future occurrences not yet published are deleted; what was published stays',
        params: idParam,
        response: { 200: deletedSeries, ...routeErrors(404, 409) },
      },
      handler: async (request) => ({
        deleted: true,
        id: request.params.id,
        removedPosts: await services.series.remove(request.principal.accountId, request.params.id),
      }),
    });
  };
}
