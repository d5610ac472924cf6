/**
 * CSV import and export of posts. The import reads its body as it streams
 * (text/csv, or a multipart part named "file"); the export writes CSV as the
 * rows come from the store.
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { z } from 'zod';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { stringify } from 'csv-stringify';
import type { Services } from '../../app.ts';
import { ApiError, invalidField } from '../../domain/errors.ts';
import { describeBytes } from '../../domain/media.ts';
import { limitHeaders } from '../../domain/rate-limit.ts';
import { allows } from '../../domain/scopes.ts';
import {
  EXPORT_COLUMNS,
  IMPORT_MAX_BYTES,
  IMPORT_MAX_ROWS,
  importQuery,
  importRefused,
  importReport,
  listPostsQuery,
  type ImportReport,
} from '../../contract/index.ts';
import { errorBody } from '../errors.ts';
import { cutOff, storeFromUrl } from './media.ts';
import { routeErrors } from './route-errors.ts';

const tags = ['posts'];
/** Problems the error message spells out; `problems` and `errors` carry them all. */
const PROBLEMS_IN_MESSAGE = 5;

export function importRoutes(services: Services): FastifyPluginAsyncZod {
  const { csv, rateLimiter, config } = services;
  return async (app) => {
    // Left unread here: the handler parses the request's own stream as it arrives, a file of thousands of rows is never held whole.
    app.addContentTypeParser('text/csv', (_request, _payload, done) => done(null, undefined));

    app.post('/posts/import', {
      schema: {
        tags,
        summary: 'Import posts from a CSV file (or only check it, with dryRun=true)',
        description:
          'Send the file as the body (Content-Type: text/csv, UTF-8) or as a multipart/form-data part named "file". ' +
          'The whole file is checked first: with dryRun=true the answer is the report of every problem by line and column, and nothing is stored; ' +
          'without it, a file with any problem is refused (400 invalid_csv, the same report in `problems`) and a good one is imported in one transaction, ' +
          `as POST /posts would store it. Rows imported before are skipped. At most ${IMPORT_MAX_ROWS} rows. The columns are in the README (CSV import and export).`,
        consumes: ['text/csv', 'multipart/form-data'],
        querystring: importQuery,
        response: { 200: importReport, 201: importReport, ...routeErrors(409, 413, 415), 400: importRefused },
      },
      handler: async (request, reply) => {
        try {
          return await importCsv(request, reply, request.query.dryRun);
        } catch (err) {
          // The rest of a refused body (a file over the cap) is not read: the connection ends.
          if (!request.raw.complete) cutOff(request, reply);
          throw err;
        }
      },
    });

    async function importCsv(request: FastifyRequest, reply: FastifyReply, dryRun: boolean) {
      if (Number(request.headers['content-length']) > IMPORT_MAX_BYTES + 64 * 1024) {
        throw new ApiError(413, 'body_too_large', `body: larger than the ${describeBytes(IMPORT_MAX_BYTES)} one import takes; split the file`, [
          { path: 'body', message: `must be at most ${IMPORT_MAX_BYTES} bytes` },
        ]);
      }
      const { accountId, scopes } = request.principal;
      const file = await csvBody(request);
      const report = await csv
        .run(accountId, file, {
          dryRun,
          canAddMedia: allows(scopes, 'media:write'),
          fetchMedia: (url) => storeFromUrl(services, accountId, url),
          // A member's posts may wait for approval, as with POST /posts.
          author: request.principal.userId,
          // An import is one request against the hourly POST /posts allowance.
          beforeCommit: async () => {
            const limit = await rateLimiter.consumeSliding(`posts:${accountId}`, config.postsPerHour, 3_600_000, 'POST /posts');
            reply.headers(limitHeaders(limit));
          },
        })
        .catch((err: unknown) => {
          // The multipart part's own stream failed: the body is malformed or cut short, the client's fault.
          throw file !== request.raw && file.errored && !(err instanceof ApiError) ? brokenMultipart(err) : err;
        });
      // A reading that stopped early (too many rows) leaves the rest of the body unread: the connection ends after the answer.
      if (!request.raw.complete) cutOff(request, reply);
      if (!report.valid && !report.dryRun) return reply.code(400).send(refusal(report));
      return reply.code(report.created.length > 0 ? 201 : 200).send(report);
    }

    app.get('/posts/export', {
      schema: {
        tags,
        summary: 'The posts of a date range as CSV (the import reads it back)',
        description:
          `Columns: ${EXPORT_COLUMNS.join(', ')}. One row per post (first item of a thread) due in the range, ` +
          'followed by its later thread items (same group). Dates are UTC.',
        querystring: listPostsQuery,
        produces: ['text/csv'],
        response: { 200: { description: 'The CSV file', content: { 'text/csv': { schema: z.string() } } }, ...routeErrors() },
      },
      handler: async (request, reply) => {
        const { startDate, endDate, customer } = request.query;
        const rows = csv.exportRows(request.principal.accountId, startDate, endDate, customer);
        // The first page is read before answering, so a bad range or an unavailable store still gets its JSON error.
        const first = await rows.next();
        const all = async function* () {
          if (first.done) return;
          yield first.value;
          yield* rows;
        };
        const out = stringify({ header: true, columns: [...EXPORT_COLUMNS], bom: true });
        // A failure half-way ends the download early (the status has gone out); the client sees it cut.
        pipeline(Readable.from(all()), out).catch((err: unknown) => request.log.warn({ err }, 'CSV export broke off'));
        const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
        return (
          reply
            .type('text/csv; charset=utf-8')
            .header('content-disposition', `attachment; filename="herald-posts-${day(startDate)}-${day(endDate)}.csv"`)
            // The schema documents the CSV text; what is sent is the stream that writes it.
            .send(out as unknown as string)
        );
      },
    });
  };
}

/** The CSV body as a stream: the request itself (text/csv) or its multipart part "file". */
async function csvBody(request: FastifyRequest): Promise<Readable> {
  if (request.isMultipart()) {
    const part = await request
      .file({ limits: { fileSize: IMPORT_MAX_BYTES + 1, files: 1, fields: 10, parts: 11 } })
      .catch((err: unknown) => Promise.reject(typeof (err as { statusCode?: unknown }).statusCode === 'number' ? err : brokenMultipart(err)));
    if (!part) throw invalidField('file', 'is required: a multipart part named "file" holding the CSV', 'invalid_multipart');
    if (part.fieldname !== 'file') throw invalidField(part.fieldname, 'unexpected part; the CSV part must be named "file"', 'invalid_multipart');
    return part.file;
  }
  if ((request.headers['content-type'] ?? '').toLowerCase().startsWith('text/csv')) return request.raw;
  throw new ApiError(415, 'unsupported_content_type', 'body: send the CSV file as text/csv, or as multipart/form-data with a part named "file"', [
    { path: 'headers.content-type', message: 'must be text/csv or multipart/form-data' },
  ]);
}

function brokenMultipart(err: unknown): ApiError {
  return new ApiError(400, 'invalid_multipart', `body: is not valid multipart/form-data (${(err as Error).message})`, [
    { path: 'body', message: 'must be complete multipart/form-data with a boundary' },
  ]);
}

/** 400 invalid_csv: the error body, each problem also as an `errors` entry (path line.N.column), and the report's problems. */
function refusal(report: ImportReport) {
  const where = (p: { line: number; column: string }) => (p.column ? `line ${p.line}, ${p.column}` : `line ${p.line}`);
  const shown = report.problems.slice(0, PROBLEMS_IN_MESSAGE).map((p) => `${where(p)}: ${p.message}`);
  const more = report.problems.length - shown.length;
  const message = `The file has ${report.problems.length} problem(s); nothing was imported. ${shown.join('; ')}${more > 0 ? `; and ${more} more` : ''}`;
  const errors = report.problems.map((p) => ({ path: p.column ? `line.${p.line}.${p.column}` : `line.${p.line}`, message: p.message }));
  return { ...errorBody(400, 'invalid_csv', message, errors), problems: report.problems };
}
