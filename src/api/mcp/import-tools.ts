/**
 * Tools about CSV files of posts: check or import one (POST /posts/import), and
 * export a date range (GET /posts/export). The import goes through the function
 * the route calls, so the checks, the all-or-nothing transaction, the skipping
 * of rows imported before and the hourly allowance are the route's own.
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { z } from 'zod';
import { EXPORT_COLUMNS, exportQuery, IMPORT_COLUMNS, IMPORT_MAX_BYTES, IMPORT_MAX_ROWS, listPostsQuery } from '../../contract/index.ts';
import { importRefusal } from '../../domain/csv/csv-posts.ts';
import { csvExportWriter, importCsvFor } from '../../domain/csv/csv-import.ts';
import { invalidField } from '../../domain/errors.ts';
import { describeBytes } from '../../domain/media.ts';
import { defineTool } from './tool.ts';

const EXAMPLE_CSV = 'date,type,channels,group,content,delay\\n2026-12-01T09:00:00Z,schedule,Newsroom,launch,Launch day,\\n,,,launch,More at noon,180\\n';

export const importPostsCsv = defineTool({
  name: 'import_posts_csv',
  title: 'Import posts from CSV',
  description: [
    'Checks a CSV file of posts and, with "dry_run": false, imports it. Call it with "dry_run": true first: that answers the report of every problem',
    '("problems": [{"line", "column", "message"}], the header being line 1) and stores nothing. The real import is all or nothing: a file with any',
    'problem is refused with the same problems and nothing is stored; a good file is stored in one transaction, and each call counts once against',
    'the hourly posting allowance. Rows imported before are skipped ("alreadyImported"), so importing the same file again creates nothing new.',
    `Columns (header row, any order): ${IMPORT_COLUMNS.join(', ')}; "channels" and "content" are required. "channels" takes channel ids or names`,
    '(from list_channels), several separated by |; rows sharing a "group" value are one post and its thread; "type" is schedule (the default, needs',
    `"date", ISO 8601), draft or now; "delay" is minutes after the previous thread item. Example: {"csv": "${EXAMPLE_CSV}", "dry_run": true}.`,
    `Size: at most ${IMPORT_MAX_ROWS} rows, and the whole call must fit the server's request limit (HERALD_BODY_LIMIT, 1 MiB unless the server`,
    `sets another, JSON escaping included: a larger call is refused whole with HTTP 413 body_too_large); POST /api/public/v1/posts/import takes`,
    `files up to ${describeBytes(IMPORT_MAX_BYTES)}.`,
    'Answers {valid, rows, posts, alreadyImported, skippedPublished, problems, created: [{line, postId, integration}]}; follow the posts with get_post.',
  ].join(' '),
  scope: 'posts:write',
  input: z
    .object({
      csv: z.string().min(1, 'must not be empty').describe('The whole CSV file as text, UTF-8, header row first'),
      dry_run: z.boolean().describe('true: only check the file and answer the report, storing nothing. false: import it'),
    })
    .strict(),
  hints: { readOnly: false, idempotent: true },
  async run({ csv, dry_run: dryRun }, { services, principal }) {
    const report = await importCsvFor(services, principal, Readable.from([Buffer.from(csv, 'utf8')]), dryRun);
    if (!report.valid && !report.dryRun) throw importRefusal(report);
    return report;
  },
});

export const exportPostsCsv = defineTool({
  name: 'export_posts_csv',
  title: 'Export posts as CSV',
  description: [
    "Answers the posts whose publishing time is between startDate and endDate as CSV text, one row per post followed by its thread's later items",
    `(same "group"), in the columns ${EXPORT_COLUMNS.join(', ')}. Dates are UTC, or with "timezone" local times in that zone with their offset. import_posts_csv reads the text back (posts whose state is`,
    'PUBLISHED are skipped there), e.g. to copy a week to another account whose channels have the same names.',
    'Example: {"startDate": "2026-12-01T00:00:00Z", "endDate": "2026-12-31T23:59:59Z"}. Answers {"rows": <rows written, thread items included>, "csv": <the text>}.',
    `A range of more than ${describeBytes(IMPORT_MAX_BYTES)} of CSV is refused: export it in shorter ranges.`,
  ].join(' '),
  scope: 'posts:read',
  input: z
    .object({
      startDate: listPostsQuery.shape.startDate.describe('Start of the range: an ISO 8601 date-time, e.g. 2026-12-01T00:00:00Z'),
      endDate: listPostsQuery.shape.endDate.describe('End of the range (included): an ISO 8601 date-time, e.g. 2026-12-31T23:59:59Z'),
      customer: listPostsQuery.shape.customer.describe("Only the posts of this customer's channels (a customer id)"),
      timezone: exportQuery.shape.timezone,
    })
    .strict(),
  hints: { readOnly: true },
  async run({ startDate, endDate, customer, timezone }, { services, principal }) {
    const rows = services.csv.exportRows(principal.accountId, startDate, endDate, customer, timezone);
    let count = 0;
    const counted = async function* () {
      for await (const row of rows) {
        count += 1;
        yield row;
      }
    };
    // The answer is held whole, unlike the route's stream: a range too large for one answer is refused.
    let bytes = 0;
    const chunks: Buffer[] = [];
    await pipeline(Readable.from(counted()), csvExportWriter({ bom: false }), async (text: AsyncIterable<Buffer | string>) => {
      for await (const chunk of text) {
        const part = Buffer.from(chunk);
        bytes += part.length;
        if (bytes > IMPORT_MAX_BYTES) {
          throw invalidField(
            'endDate',
            `the range holds more than ${describeBytes(IMPORT_MAX_BYTES)} of CSV, more than one answer carries: export shorter ranges`,
          );
        }
        chunks.push(part);
      }
    });
    return { rows: count, csv: Buffer.concat(chunks).toString('utf8') };
  },
});
