/**
 * CSV import and export of posts. The import reads its body as it streams
 * (text/csv, or a multipart part named "file"); the export writes CSV as the
 * rows come from the store.
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { Services } from '../../services.ts';
import { importRefusal } from '../../domain/csv/csv-posts.ts';
import { csvExportWriter, importCsvFor } from '../../domain/csv/csv-import.ts';
import { ApiError, invalidField } from '../../domain/errors.ts';
import { describeBytes } from '../../domain/media.ts';
import { limitHeaders } from '../../domain/rate-limit.ts';
import { iso, zonedIso } from '../../lib/time.ts';
import { EXPORT_COLUMNS, IMPORT_MAX_BYTES, IMPORT_MAX_ROWS, type ImportReport } from '../../contract/index.ts';
import { publicRoutes } from '../../contract/routes/public.ts';
import { errorBody } from '../errors.ts';
import { cutOff } from './media.ts';
import { serve } from '../serve.ts';

const { routes } = publicRoutes;
const tags = ['posts'];

export function importRoutes(services: Services): FastifyPluginAsyncZod {
  const { csv } = services;
  return async (app) => {
    // Left unread here: the handler parses the request's own stream as it arrives, a file of thousands of rows is never held whole.
    app.addContentTypeParser('text/csv', (_request, _payload, done) => done(null, undefined));

    serve(app, routes.importPosts, {
      tags,
      summary: 'Import posts from a CSV file (or only check it, with dryRun=true)',
      description:
        'Send the file as the body (Content-Type: text/csv, UTF-8) or as a multipart/form-data part named "file". ' +
        'The whole file is checked first: with dryRun=true the answer is the report of every problem by line and column, and nothing is stored; ' +
        'without it, a file with any problem is refused (400 invalid_csv, the same report in `problems`) and a good one is imported in one transaction, ' +
        `as POST /posts would store it. Rows imported before are skipped. At most ${IMPORT_MAX_ROWS} rows. The columns are in the README (CSV import and export).`,
      consumes: ['text/csv', 'multipart/form-data'],
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
        throw new ApiError('body_too_large', `body: larger than the ${describeBytes(IMPORT_MAX_BYTES)} one import takes; split the file`, [
          { path: 'body', message: `must be at most ${IMPORT_MAX_BYTES} bytes` },
        ]);
      }
      const file = await csvBody(request);
      const report = await importCsvFor(services, request.principal, file, dryRun, (limit) => reply.headers(limitHeaders(limit))).catch((err: unknown) => {
        // The multipart part's own stream failed: the body is malformed or cut short, the client's fault.
        throw file !== request.raw && file.errored && !(err instanceof ApiError) ? brokenMultipart(err) : err;
      });
      // A reading that stopped early (too many rows) leaves the rest of the body unread: the connection ends after the answer.
      if (!request.raw.complete) cutOff(request, reply);
      if (!report.valid && !report.dryRun) return reply.code(400).send(refusal(report));
      return reply.code(report.created.length > 0 ? 201 : 200).send(report);
    }

    serve(app, routes.exportPosts, {
      tags,
      summary: 'The posts of a date range as CSV (the import reads it back)',
      description:
        `Columns: ${EXPORT_COLUMNS.join(', ')}. One row per post (first item of a thread) due in the range, ` +
        'followed by its later thread items (same group). Dates are UTC, or with `timezone` the local time in that zone with its offset ' +
        '(the zone in the timezone column); either way the import reads the same instant back.',
      produces: ['text/csv'],
      handler: async (request, reply) => {
        const { startDate, endDate, customer, timezone } = request.query;
        const rows = csv.exportRows(request.principal.accountId, startDate, endDate, customer, timezone);
        // The first page is read before answering, so a bad range or an unavailable store still gets its JSON error.
        const first = await rows.next();
        const all = async function* () {
          if (first.done) return;
          yield first.value;
          yield* rows;
        };
        const out = csvExportWriter({ bom: true });
        // A failure half-way ends the download early (the status has gone out); the client sees it cut.
        pipeline(Readable.from(all()), out).catch((err: unknown) => request.log.warn({ err }, 'CSV export broke off'));
        // The file is named by the range's days where its dates are written: in the zone asked for.
        const day = (ms: number) => (timezone ? zonedIso(timezone, ms) : iso(ms)).slice(0, 10);
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
  throw new ApiError('unsupported_content_type', 'body: send the CSV file as text/csv, or as multipart/form-data with a part named "file"', [
    { path: 'headers.content-type', message: 'must be text/csv or multipart/form-data' },
  ]);
}

function brokenMultipart(err: unknown): ApiError {
  return new ApiError('invalid_multipart', `body: is not valid multipart/form-data (${(err as Error).message})`, [
    { path: 'body', message: 'must be complete multipart/form-data with a boundary' },
  ]);
}

/** 400 invalid_csv: the error body, each problem also as an `errors` entry, and the report's problems. */
function refusal(report: ImportReport) {
  const refused = importRefusal(report);
  return { ...errorBody(refused.code, refused.message, refused.errors), problems: report.problems };
}
