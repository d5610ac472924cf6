/** CSV import and export of posts: the columns, the check report and the import's answer. */
import { z } from 'zod';
import { isTimeZone } from '../lib/time.ts';
import { errorBody } from './common.ts';
import { listPostsQuery } from './posts.ts';

/** The columns the import reads, in the order the export writes them. */
export const IMPORT_COLUMNS = ['date', 'timezone', 'type', 'channels', 'group', 'content', 'media', 'delay', 'settings'] as const;
/** What the export adds: how each post stands. The import reads them back and skips published posts. */
export const EXPORT_COLUMNS = [...IMPORT_COLUMNS, 'state', 'releaseURL', 'error'] as const;
export type ExportColumn = (typeof EXPORT_COLUMNS)[number];

/** The most rows (thread items included) one file may carry, and its largest size: one import is one transaction. */
export const IMPORT_MAX_ROWS = 10_000;
export const IMPORT_MAX_BYTES = 20 * 1024 * 1024;

export const importQuery = z.object({
  dryRun: z
    .enum(['true', 'false'], { error: 'must be true or false' })
    .optional()
    .default('false')
    .transform((v) => v === 'true')
    .describe('true: only check the file and answer the report; nothing is stored'),
});

export const exportQuery = listPostsQuery.extend({
  timezone: z
    .string()
    .max(100)
    .refine(isTimeZone, { error: 'must be an IANA time zone such as Europe/Berlin or UTC' })
    .optional()
    .describe(
      'Write each date as the local time in this IANA zone with its offset (2026-12-01T09:00:00+01:00), and the zone in the timezone column; UTC (…Z) without it',
    ),
});

export const importProblem = z.object({
  line: z.number().describe('Line of the file (the header is line 1) where the row starts'),
  column: z.string().describe('The column at fault; empty when the problem is the whole line or file'),
  message: z.string(),
});
export type ImportProblem = z.output<typeof importProblem>;

export const importedPost = z.object({
  line: z.number().describe('Line of the row the post came from (the first row of its group)'),
  postId: z.string(),
  integration: z.string().describe('The channel id'),
});

export const importReport = z.object({
  dryRun: z.boolean(),
  valid: z.boolean().describe('No problem found: the file can be imported as it is'),
  rows: z.number().describe('Rows read, the header not counted'),
  posts: z.number().describe('Posts (one per channel) created, or to be created by a real import'),
  alreadyImported: z.number().describe('Posts skipped because the same row was imported into this account before'),
  skippedPublished: z.number().describe('Posts skipped because their state column says PUBLISHED (an export read back)'),
  problems: z.array(importProblem),
  created: z.array(importedPost).describe('The posts this import created (empty on a dry run)'),
});
export type ImportReport = z.output<typeof importReport>;

/** A refused import: the error body, with the same problems the check reports. */
export const importRefused = errorBody.extend({
  problems: z.array(importProblem).optional().describe('Every problem of the file by line and column (when the file itself is at fault)'),
});
