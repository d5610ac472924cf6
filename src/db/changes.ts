/**
 * Telling in-memory read caches that data they hold may have changed, in this
 * process and in every other process on the same store.
 *
 * A change counts when a statement writes one of WATCHED_TABLES. Each store
 * connection notices its own writes from the SQL text and signals them once the
 * write is committed (or at once outside a transaction). Other processes learn
 * of them:
 * - on SQLite, through a file beside the database that grows by one byte per
 *   committed change: its size is the generation, read with one fstat;
 * - on PostgreSQL, through statement triggers that NOTIFY on commit (migration
 *   007), heard by one listening connection. While that connection is down the
 *   generation is unknown and caches stand aside.
 *
 * Readers take the generation before they read the store and keep what they read
 * under it, so a change committed during the read is never hidden.
 */
import fs from 'node:fs';
import { listenTo, type Listener } from './pg-listen.ts';

/** The tables whose rows the read caches hold: API keys, channel lists and what they show. */
export const WATCHED_TABLES = ['accounts', 'api_keys', 'channels', 'customers', 'webhooks'] as const;

/** The NOTIFY channel of migration 007's triggers. */
export const CHANGES_CHANNEL = 'herald_changes';

export interface ChangeSignal {
  /** Changes so far, as a number that only moves on; undefined when changes cannot be followed right now. */
  generation(): number | undefined;
  /** A committed write to a watched table (by this process). */
  changed(): void;
  close(): Promise<void>;
}

type StatementKind = 'begin' | 'end' | 'watched' | 'other';

const BEGIN = /^\s*(begin|start\s+transaction|savepoint)\b/i;
// A savepoint's release does not commit; only the outer commit or rollback ends the transaction.
const END = /^\s*(commit|end|rollback)\b(?!\s+to\b)/i;
const WATCHED_WRITE = new RegExp(`\\b(insert\\s+(or\\s+\\w+\\s+)?into|replace\\s+into|update|delete\\s+from)\\s+"?(${WATCHED_TABLES.join('|')})"?[\\s(]`, 'i');

const kinds = new Map<string, StatementKind>();
const KNOWN_TEXTS = 2_000;

function kindOf(sql: string): StatementKind {
  let kind = kinds.get(sql);
  if (kind === undefined) {
    kind = BEGIN.test(sql) ? 'begin' : END.test(sql) ? 'end' : WATCHED_WRITE.test(`${sql} `) ? 'watched' : 'other';
    if (kinds.size < KNOWN_TEXTS) kinds.set(sql, kind);
  }
  return kind;
}

/**
 * Follows one connection's statements: call it after each one ran (or failed).
 * A watched write inside a transaction is signalled when the transaction ends,
 * and a rolled-back one too: a needless signal only costs a cache reload.
 */
export function connectionWatcher(signal: Pick<ChangeSignal, 'changed'>): (sql: string) => void {
  let depth = 0;
  let pending = false;
  return (sql) => {
    switch (kindOf(sql)) {
      case 'begin':
        depth++;
        break;
      case 'end':
        depth = 0;
        if (pending) {
          pending = false;
          signal.changed();
        }
        break;
      case 'watched':
        if (depth > 0) pending = true;
        else signal.changed();
        break;
    }
  };
}

/** SQLite: the generation is the size of `<database>-changes`, shared by every process on the file. */
export function fileChangeSignal(databaseFile: string): ChangeSignal {
  const fd = fs.openSync(`${databaseFile}-changes`, 'a');
  const mark = Buffer.from('.');
  let open = true;
  return {
    generation: () => (open ? fs.fstatSync(fd).size : undefined),
    changed: () => {
      if (open) fs.writeSync(fd, mark);
    },
    close: async () => {
      if (!open) return;
      open = false;
      fs.closeSync(fd);
    },
  };
}

/**
 * PostgreSQL: a counter moved by this process's own commits and by every NOTIFY
 * of the triggers. The listening connection opens on first use, so short-lived
 * commands that never read through a cache never open it.
 */
export function notifyChangeSignal(databaseUrl: string): ChangeSignal {
  let counter = 0;
  let listening = false;
  let listener: Listener | undefined;
  let closed = false;
  return {
    generation() {
      if (!listener && !closed) {
        listener = listenTo(databaseUrl, CHANGES_CHANNEL, {
          notify: () => counter++,
          // Whatever changed while nobody listened is unknown: start over.
          up: () => {
            counter++;
            listening = true;
          },
          down: () => {
            listening = false;
            counter++;
          },
        });
      }
      return listening ? counter : undefined;
    },
    changed: () => void counter++,
    close: async () => {
      closed = true;
      listening = false;
      await listener?.stop();
    },
  };
}
