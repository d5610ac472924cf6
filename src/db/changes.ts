/**
 * Telling in-memory read caches that data they hold may have changed, in this
 * process and in every other process on the same store.
 *
 * A change counts when a statement writes one of WATCHED_TABLES; each cache
 * follows only the tables it reads. Each store connection notices its own writes
 * from the SQL text and the number of rows the statement changed (a write that
 * matched no row, like the engine's idle poll, changed nothing and says nothing),
 * and signals them once the write is committed (or at once outside a
 * transaction). Other processes learn of them:
 * - on SQLite, through a file beside the database that grows by one byte per
 *   committed change, the byte naming the tables written (one bit each): one
 *   fstat tells whether anything changed, and only then are the new bytes read.
 *   The file is looked at once per turn of the event loop (the requests handled
 *   in one turn are concurrent with any commit elsewhere), and again after each
 *   change of this process's own;
 * - on PostgreSQL, through statement triggers that NOTIFY on commit with the
 *   table's name when the statement changed a row (migrations 007, 009 and
 *   025), heard by one listening connection.
 *   While that connection is down the generation is unknown and caches stand aside.
 *
 * Readers take the generation before they read the store and keep what they read
 * under it, so a change committed during the read is never hidden.
 */
import fs from 'node:fs';
import { listenTo, type Listener } from './pg-listen.ts';

/** The tables whose rows the read caches hold: API keys, channel lists and what they show, webhooks, post lists. */
export const WATCHED_TABLES = ['accounts', 'api_keys', 'channels', 'customers', 'webhooks', 'posts'] as const;
export type WatchedTable = (typeof WATCHED_TABLES)[number];

/** The NOTIFY channel of the triggers. */
export const CHANGES_CHANNEL = 'herald_changes';

/** A set of watched tables, one bit each (at most 7: a change is one byte in the SQLite file). */
export type Tables = number;
const BITS = new Map<string, number>(WATCHED_TABLES.map((table, i) => [table, 1 << i]));
const EVERY_TABLE: Tables = (1 << WATCHED_TABLES.length) - 1;

export function tables(...names: WatchedTable[]): Tables {
  return names.reduce((set, name) => set | BITS.get(name)!, 0);
}

export interface ChangeSignal {
  /** Changes so far to any of `tables`, as a number that only moves on; undefined when changes cannot be followed right now. */
  generation(tables: Tables): number | undefined;
  /** A committed write to `tables` (by this process). */
  changed(tables: Tables): void;
  close(): Promise<void>;
}

/** Per-table change counts; a generation is the sum over the tables asked about. */
class Counts {
  private readonly counts = WATCHED_TABLES.map(() => 0);

  add(set: Tables): void {
    for (let i = 0; i < this.counts.length; i++) if (set & (1 << i)) this.counts[i]!++;
  }

  sum(set: Tables): number {
    let total = 0;
    for (let i = 0; i < this.counts.length; i++) if (set & (1 << i)) total += this.counts[i]!;
    return total;
  }
}

type StatementKind = 'begin' | 'end' | Tables;

const BEGIN = /^\s*(begin|start\s+transaction|savepoint)\b/i;
// A savepoint's release does not commit; only the outer commit or rollback ends the transaction.
const END = /^\s*(commit|end|rollback)\b(?!\s+to\b)/i;
const WATCHED_WRITE = new RegExp(
  `\\b(?:insert\\s+(?:or\\s+\\w+\\s+)?into|replace\\s+into|update|delete\\s+from)\\s+"?(${WATCHED_TABLES.join('|')})"?[\\s(]`,
  'gi',
);

const kinds = new Map<string, StatementKind>();
const KNOWN_TEXTS = 2_000;

/** 'begin', 'end', or the watched tables the statement writes (0: none). */
function kindOf(sql: string): StatementKind {
  let kind = kinds.get(sql);
  if (kind === undefined) {
    if (BEGIN.test(sql)) kind = 'begin';
    else if (END.test(sql)) kind = 'end';
    else kind = [...`${sql} `.matchAll(WATCHED_WRITE)].reduce((set, match) => set | BITS.get(match[1]!.toLowerCase())!, 0);
    if (kinds.size < KNOWN_TEXTS) kinds.set(sql, kind);
  }
  return kind;
}

/**
 * Follows one connection's statements: call it after each one ran (or failed),
 * with the number of rows it changed (0 when it failed). Watched writes inside a
 * transaction are signalled when the transaction ends, rolled-back ones too: a
 * needless signal only costs a cache reload.
 */
export function connectionWatcher(signal: Pick<ChangeSignal, 'changed'>): (sql: string, changedRows: number) => void {
  let depth = 0;
  let pending: Tables = 0;
  return (sql, changedRows) => {
    const kind = kindOf(sql);
    if (kind === 'begin') {
      depth++;
    } else if (kind === 'end') {
      depth = 0;
      if (pending) signal.changed(pending);
      pending = 0;
    } else if (kind && changedRows > 0) {
      if (depth > 0) pending |= kind;
      else signal.changed(kind);
    }
  };
}

/** A change record in the SQLite file: the high bit marks the format, the others name the tables. */
const RECORD = 0x80;
/** More unread records than this (a process that slept long) are not read one by one: everything counts as changed. */
const MOST_RECORDS_READ = 64 * 1024;

/** SQLite: `<database>-changes`, shared by every process on the file, one byte per committed change. */
export function fileChangeSignal(databaseFile: string): ChangeSignal {
  const fd = fs.openSync(`${databaseFile}-changes`, 'a+');
  const counts = new Counts();
  let read = fs.fstatSync(fd).size;
  let open = true;
  let looked = false;
  const lookAgain = () => {
    looked = false;
  };
  const catchUp = () => {
    if (looked) return;
    looked = true;
    setImmediate(lookAgain);
    const size = fs.fstatSync(fd).size;
    if (size === read) return;
    if (size < read || size - read > MOST_RECORDS_READ) {
      counts.add(EVERY_TABLE);
    } else {
      const records = Buffer.allocUnsafe(size - read);
      const got = fs.readSync(fd, records, 0, records.length, read);
      // A byte without the format bit (an older Herald's '.') names no tables: it counts for all.
      for (let i = 0; i < got; i++) counts.add(records[i]! & RECORD ? records[i]! & EVERY_TABLE : EVERY_TABLE);
    }
    read = size;
  };
  return {
    generation(set) {
      if (!open) return undefined;
      catchUp();
      return counts.sum(set);
    },
    changed(set) {
      if (!open) return;
      fs.writeSync(fd, Buffer.of(RECORD | set));
      looked = false;
    },
    close: async () => {
      if (!open) return;
      open = false;
      fs.closeSync(fd);
    },
  };
}

/**
 * PostgreSQL: counts moved by this process's own commits and by every NOTIFY
 * of the triggers. The listening connection opens on first use, so short-lived
 * commands that never read through a cache never open it.
 */
export function notifyChangeSignal(databaseUrl: string): ChangeSignal {
  const counts = new Counts();
  let listening = false;
  let listener: Listener | undefined;
  let closed = false;
  return {
    generation(set) {
      if (!listener && !closed) {
        listener = listenTo(databaseUrl, CHANGES_CHANNEL, {
          notify: (table) => counts.add(BITS.get(table) ?? EVERY_TABLE),
          // Whatever changed while nobody listened is unknown: start over.
          up: () => {
            counts.add(EVERY_TABLE);
            listening = true;
          },
          down: () => {
            listening = false;
            counts.add(EVERY_TABLE);
          },
        });
      }
      return listening ? counts.sum(set) : undefined;
    },
    changed: (set) => counts.add(set),
    close: async () => {
      closed = true;
      listening = false;
      await listener?.stop();
    },
  };
}
