/**
 * Reading an import file: csv-parse streams its records (no hand-made splitting),
 * each with the line it starts on; the header names the columns; each row is
 * read cell by cell into a post, and the rows that share a `group` value into one
 * thread. Every problem is collected with its line and column, none stops the
 * reading (only a file that is not CSV at all, or too large).
 */
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { CsvError, parse } from 'csv-parse';
import { EXPORT_COLUMNS, IMPORT_MAX_BYTES, IMPORT_MAX_ROWS, type ExportColumn, type ImportProblem } from '../../contract/index.ts';
import { isTimeZone, parseInstant, zonedInstant } from '../../lib/time.ts';
import { restored } from './csv-cells.ts';
import { ApiError } from '../errors.ts';
import { describeBytes } from '../media.ts';

export interface CsvRecord {
  /** The line of the file the record starts on (a quoted cell may span several). */
  line: number;
  cells: Record<ExportColumn, string>;
  /** Cells refused as they were read (a NUL character): left empty, and not reported again. */
  refused: ExportColumn[];
}

export type ImportType = 'schedule' | 'draft' | 'now';

export interface ItemDraft {
  line: number;
  content: string;
  media: string[];
  /** Minutes after the previous item. */
  delay: number;
}

/** One row, or the rows of one group: a post for each of its channels. */
export interface PostDraft {
  line: number;
  type: ImportType;
  /** Undefined for `now`, and for a draft without a date. */
  at: number | undefined;
  channels: string[];
  settings: Record<string, unknown> | undefined;
  /** The state column says PUBLISHED: an exported post that already went out, never sent again. */
  published: boolean;
  items: ItemDraft[];
  /** "line:column" of the cells already reported, so the later checks do not report them again. */
  faulty: Set<string>;
}

const BY_NAME = new Map<string, ExportColumn>(EXPORT_COLUMNS.map((c) => [c.toLowerCase(), c]));
const LINE_BREAK = /\r\n|\r|\n/g;
/** A date and time without an offset: local time in the row's `timezone`. */
const LOCAL_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2}))?$/;
const HAS_OFFSET = /\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}(?::?\d{2})?)$/i;
/** The largest delay a thread item may have (the API's own bound: 30 days). */
const MAX_DELAY_MINUTES = 60 * 24 * 30;
/** How far in the past a scheduled row may be (clocks differ a little). */
const PAST_TOLERANCE_MS = 60_000;
/** As deep as a JSON body of the API may nest. */
const MAX_SETTINGS_DEPTH = 64;
/** Columns a later row of a group takes from the group's first row. */
const POST_COLUMNS = ['date', 'timezone', 'type', 'channels', 'settings'] as const;

/** A cell's text in a message: quoted, and cut when long (a message must not carry a whole file back). */
export function shown(text: string): string {
  return JSON.stringify(text.length > 100 ? `${text.slice(0, 100)}…` : text);
}

class TooLarge extends Error {}
class TooManyRows extends Error {}

function lineBreaks(text: string): number {
  return text.match(LINE_BREAK)?.length ?? 0;
}

/** Holds a body to the import's size cap while it streams. */
function capBytes(max: number): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      seen += chunk.length;
      done(seen > max ? new TooLarge() : null, chunk);
    },
  });
}

/**
 * Reads the records of a CSV body with their lines; problems of the header and of the
 * file's shape go to `problems`. `whole` is false when the reading had to stop (broken
 * quoting, too many rows): the rows read are then not worth checking further.
 */
export async function readRecords(body: Readable, problems: ImportProblem[]): Promise<{ records: CsvRecord[]; whole: boolean }> {
  const records: CsvRecord[] = [];
  let columns: (ExportColumn | undefined)[] | undefined;
  let breaksSeen = 0;
  let lastLine = 1;
  let whole = true;
  const parser = parse({ bom: true, raw: true, relax_column_count: true, skip_empty_lines: true });
  // Piped rather than part of the pipeline: a refusal must leave the request open for its answer.
  const cap = capBytes(IMPORT_MAX_BYTES);
  // A multipart part can fail (a body cut short) before this reads it: piping a stream that already failed would wait forever.
  if (body.destroyed) cap.destroy(body.errored ?? Object.assign(new Error('the body was closed before it was read'), { code: 'ERR_STREAM_PREMATURE_CLOSE' }));
  else {
    body.on('error', (err) => cap.destroy(err));
    body.pipe(cap);
  }
  const take = (record: string[], raw: string) => {
    // Skipped empty lines come at the start of the next record's raw text.
    const leading = lineBreaks(/^[\r\n]*/.exec(raw)![0]);
    const line = breaksSeen + 1 + leading;
    breaksSeen += lineBreaks(raw);
    lastLine = line;
    if (!columns) {
      const header = readHeader(record, problems);
      columns = header.columns;
      // Without the channels or the content, every row would only repeat what the header lacks.
      whole = header.complete;
      return;
    }
    // A row of empty cells (",,,," from a spreadsheet) is an empty line.
    if (record.every((cell) => cell.trim() === '')) return;
    if (records.length === IMPORT_MAX_ROWS) throw new TooManyRows();
    const refused: ExportColumn[] = [];
    records.push({ line, cells: rowCells(record, columns, line, problems, refused), refused });
  };
  try {
    // Each record is taken as the parser emits it: iterating would lose the records still buffered
    // when a broken quote fails the parse at the end of a small body (the header among them).
    parser.on('data', ({ record, raw }: { record: string[]; raw: string }) => {
      try {
        take(record, raw);
      } catch (err) {
        parser.destroy(err as Error);
      }
    });
    await pipeline(cap, parser);
  } catch (err) {
    if (err instanceof TooLarge) {
      throw new ApiError('body_too_large', `body: the file is larger than the ${describeBytes(IMPORT_MAX_BYTES)} one import takes; split it`, [
        { path: 'body', message: `must be at most ${IMPORT_MAX_BYTES} bytes` },
      ]);
    }
    whole = false;
    if (err instanceof TooManyRows) {
      problems.push({ line: lastLine, column: '', message: `the file has more than ${IMPORT_MAX_ROWS} rows, the most one import takes: split it` });
    } else if (err instanceof CsvError) {
      // The parser cannot say where the next row starts once quoting is broken: the reading stops here.
      problems.push({ line: breaksSeen + 1, column: '', message: `is not valid CSV: ${err.message}` });
    } else if (isCutShort(err)) {
      throw new ApiError('invalid_csv', 'body: the file broke off before its end', [{ path: 'body', message: 'must arrive whole' }]);
    } else {
      throw err;
    }
  }
  if (!columns) problems.push({ line: 1, column: '', message: 'the file is empty: it needs a header row naming the columns, then a row per post' });
  else if (records.length === 0 && whole) problems.push({ line: 2, column: '', message: 'the file has a header but no row' });
  return { records, whole };
}

function isCutShort(err: unknown): boolean {
  const code = (err as { code?: string }).code;
  return code === 'ERR_STREAM_PREMATURE_CLOSE' || code === 'ECONNRESET' || (err as Error).message === 'aborted';
}

function readHeader(record: string[], problems: ImportProblem[]): { columns: (ExportColumn | undefined)[]; complete: boolean } {
  const seen = new Set<ExportColumn>();
  const columns = record.map((name) => {
    const column = BY_NAME.get(name.trim().toLowerCase());
    if (!column) {
      if (name.trim() !== '') {
        problems.push({ line: 1, column: name.trim().slice(0, 100), message: `is not a column of an import; the columns are ${EXPORT_COLUMNS.join(', ')}` });
      }
      return undefined;
    }
    if (seen.has(column)) problems.push({ line: 1, column, message: 'appears twice in the header' });
    seen.add(column);
    return column;
  });
  const missing = (['channels', 'content'] as const).filter((needed) => !seen.has(needed));
  for (const column of missing) problems.push({ line: 1, column, message: 'is missing from the header: every import names the channels and the content' });
  return { columns, complete: missing.length === 0 };
}

function rowCells(
  record: string[],
  columns: (ExportColumn | undefined)[],
  line: number,
  problems: ImportProblem[],
  refused: ExportColumn[],
): Record<ExportColumn, string> {
  const cells = Object.fromEntries(EXPORT_COLUMNS.map((c) => [c, ''])) as Record<ExportColumn, string>;
  for (const [i, value] of record.entries()) {
    const column = columns[i];
    // The stores cannot keep it (and no network wants it): refused as the JSON API refuses it.
    if (column && value.includes('\u0000')) {
      problems.push({ line, column, message: 'must not contain the NUL character (U+0000)' });
      refused.push(column);
    } else if (column) cells[column] = restored(value);
    else if (i >= columns.length && value.trim() !== '') {
      problems.push({ line, column: '', message: `has ${record.length} cells, but the header names ${columns.length} columns` });
      break;
    }
  }
  return cells;
}

/**
 * The posts of the file: a row without `group` is a post; the rows sharing a
 * `group` value are one post, the first row its first item and the others its
 * thread, in file order.
 */
export function postsOf(records: CsvRecord[], problems: ImportProblem[], now: number): PostDraft[] {
  const posts: PostDraft[] = [];
  const groups = new Map<string, { post: PostDraft; first: CsvRecord }>();
  for (const record of records) {
    const label = record.cells.group.trim();
    const existing = label ? groups.get(label) : undefined;
    if (existing) {
      // The thread of a published post is history too: not read, not checked.
      if (existing.post.published) continue;
      for (const column of record.refused) existing.post.faulty.add(`${record.line}:${column}`);
      existing.post.items.push(readItem(record, existing.post, false, problems));
      for (const column of POST_COLUMNS) {
        const here = record.cells[column].trim();
        if (here !== '' && here !== existing.first.cells[column].trim()) {
          problems.push({
            line: record.line,
            column,
            message: `belongs to group ${shown(label)}, which takes its ${column} from its first row (line ${existing.first.line}): leave it empty here`,
          });
        }
      }
      continue;
    }
    const post = readPost(record, problems, now);
    posts.push(post);
    if (label) groups.set(label, { post, first: record });
  }
  return posts;
}

function readPost(record: CsvRecord, problems: ImportProblem[], now: number): PostDraft {
  const { line, cells } = record;
  const post: PostDraft = {
    line,
    type: 'schedule',
    at: undefined,
    channels: [],
    settings: undefined,
    published: cells.state.trim().toUpperCase() === 'PUBLISHED',
    items: [],
    faulty: new Set(record.refused.map((column) => `${line}:${column}`)),
  };
  const problem = (column: ExportColumn, message: string) => {
    post.faulty.add(`${line}:${column}`);
    problems.push({ line, column, message });
  };
  post.channels = [
    ...new Set(
      cells.channels
        .split(/[|;]/)
        .map((c) => c.trim())
        .filter(Boolean),
    ),
  ];
  // A published post is never imported: only counted, whatever its other cells say.
  if (post.published) return post;
  if (post.channels.length === 0) problem('channels', 'is required: channel ids or names, several separated by | or ;');

  const type = cells.type.trim().toLowerCase() || 'schedule';
  if (type === 'schedule' || type === 'draft' || type === 'now') post.type = type;
  else problem('type', `is ${shown(cells.type.trim())}; it must be schedule, draft or now (empty means schedule)`);

  const date = cells.date.trim();
  const zone = cells.timezone.trim();
  if (zone && !isTimeZone(zone)) problem('timezone', `${shown(zone)} is not an IANA time zone such as Europe/Berlin`);
  if (post.type === 'now') {
    if (date) problem('date', 'must be empty when type is now (the post goes out at once)');
  } else if (!date) {
    if (post.type === 'schedule') problem('date', 'is required when type is schedule');
  } else {
    const at = readDate(date, zone, (message) => problem('date', message));
    if (at !== undefined && post.type === 'schedule' && at < now - PAST_TOLERANCE_MS) {
      problem('date', `${shown(date)} is in the past; a scheduled post needs a time to come (type now publishes at once)`);
    } else {
      post.at = at;
    }
  }

  const settings = cells.settings.trim();
  if (settings) {
    try {
      const parsed: unknown = JSON.parse(settings);
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) problem('settings', 'must be a JSON object, e.g. {"title": "Launch"}');
      else if (depthOf(parsed) > MAX_SETTINGS_DEPTH) problem('settings', `nests deeper than ${MAX_SETTINGS_DEPTH} levels`);
      else post.settings = parsed as Record<string, unknown>;
    } catch (err) {
      problem('settings', `is not valid JSON (${(err as Error).message})`);
    }
  }
  post.items.push(readItem(record, post, true, problems));
  return post;
}

/** How deep a JSON value nests, found without recursion (a hostile cell may nest thousands of levels). */
function depthOf(value: unknown): number {
  let deepest = 0;
  const pending: [unknown, number][] = [[value, 0]];
  while (pending.length > 0) {
    const [item, depth] = pending.pop()!;
    deepest = Math.max(deepest, depth);
    if (item !== null && typeof item === 'object' && depth <= MAX_SETTINGS_DEPTH) for (const child of Object.values(item)) pending.push([child, depth + 1]);
  }
  return deepest;
}

/** An instant from a date with an offset, or from a local date and time in `zone`. */
function readDate(text: string, zone: string, problem: (message: string) => void): number | undefined {
  if (HAS_OFFSET.test(text)) {
    const at = parseInstant(text);
    if (at === undefined) problem(`${shown(text)} is not an ISO 8601 date and time, e.g. 2026-12-01T09:00:00+01:00`);
    return at;
  }
  const local = LOCAL_DATE_TIME.exec(text);
  if (!local || parseInstant(`${text}Z`) === undefined) {
    problem(`${shown(text)} is not an ISO 8601 date and time, e.g. 2026-12-01T09:00:00+01:00`);
    return undefined;
  }
  if (!zone) {
    problem(`${shown(text)} has no offset: add one (2026-12-01T09:00:00+01:00, or Z for UTC) or name the zone in the timezone column`);
    return undefined;
  }
  if (!isTimeZone(zone)) return undefined;
  const [, y, mo, d, h, mi, s = '0'] = local;
  return zonedInstant(zone, +y, +mo, +d, +h, +mi) + Number(s) * 1000;
}

function readItem(record: CsvRecord, post: PostDraft, first: boolean, problems: ImportProblem[]): ItemDraft {
  const { line, cells } = record;
  const problem = (column: ExportColumn, message: string) => {
    post.faulty.add(`${line}:${column}`);
    problems.push({ line, column, message });
  };
  // Spreadsheets end lines inside a cell with \r\n; the networks count \n.
  const content = cells.content.replace(/\r\n?/g, '\n');
  const media = cells.media.split(/[\s|]+/).filter(Boolean);
  for (const url of media) {
    let parsed: URL | undefined;
    try {
      parsed = new URL(url);
    } catch {
      parsed = undefined;
    }
    if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) {
      problem('media', `${shown(url)} is not an http(s) URL; several are separated by | or spaces`);
    }
  }
  let delay = 0;
  const delayText = cells.delay.trim();
  if (delayText) {
    if (!/^\d{1,6}$/.test(delayText) || Number(delayText) > MAX_DELAY_MINUTES) {
      problem('delay', `is ${shown(delayText)}; it must be a whole number of minutes from 0 to ${MAX_DELAY_MINUTES}`);
    } else if (first && Number(delayText) !== 0) {
      problem('delay', 'must be empty on the first row of a post: it is the wait after the previous item of a thread');
    } else {
      delay = Number(delayText);
    }
  }
  return { line, content, media, delay };
}
