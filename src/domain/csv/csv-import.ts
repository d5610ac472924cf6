/**
 * A CSV file of posts imported for one caller, and the export's writer: what
 * POST /posts/import, GET /posts/export and the MCP tools import_posts_csv and
 * export_posts_csv share. The caller's scopes decide whether media URLs may be
 * fetched into the library; a member's posts may wait for approval; an import
 * counts once against the hourly posting allowance, once the file is good.
 */
import type { Readable } from 'node:stream';
import { stringify } from 'csv-stringify';
import { EXPORT_COLUMNS, type ImportReport } from '../../contract/index.ts';
import type { Principal } from '../accounts.ts';
import { neutralised } from './csv-cells.ts';
import type { CsvPosts } from './csv-posts.ts';
import { storeFromUrl, type MediaFromUrlDeps } from '../media-from-url.ts';
import type { LimitState } from '../sliding-window.ts';
import { allows } from '../scopes.ts';

type ImportDeps = MediaFromUrlDeps & { csv: CsvPosts };

/** Checks `file` and, unless `dryRun` or a problem was found, imports it; `counted` hears the allowance once it is taken. */
export function importCsvFor(
  deps: ImportDeps,
  principal: Principal,
  file: Readable,
  dryRun: boolean,
  counted?: (limit: LimitState) => void,
): Promise<ImportReport> {
  const { accountId, scopes } = principal;
  return deps.csv.run(accountId, file, {
    dryRun,
    canAddMedia: allows(scopes, 'media:write'),
    fetchMedia: (url) => storeFromUrl(deps, accountId, url),
    author: principal.userId,
    counted,
  });
}

/**
 * Writes export rows as CSV, header first; a byte order mark tells spreadsheets the file is UTF-8.
 * No cell is one a spreadsheet would run as a formula (csv-cells.ts).
 */
export function csvExportWriter(options: { bom: boolean }) {
  return stringify({ header: true, columns: [...EXPORT_COLUMNS], bom: options.bom, cast: { string: neutralised } });
}
