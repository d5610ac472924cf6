/**
 * Failures that say the store cannot be reached or cannot write right now (a
 * lost or refused PostgreSQL connection, a database restarting, a full disk),
 * as opposed to a query that is wrong. The API answers them with 503 and a retry
 * hint; the engine waits for the store instead of judging the post.
 */

/**
 * PostgreSQL SQLSTATE classes and codes: connection exceptions (08), operator
 * intervention (57P), insufficient resources (53), and a database refusing connections.
 */
const PG_CODES = /^(08...|57P0[1-4]|53...|55000)$/;
/** Node's socket errors on the way to the server. */
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);
/** SQLite: the disk is full or the file cannot be written or locked for long. */
const SQLITE_CODES = new Set(['SQLITE_FULL', 'SQLITE_IOERR', 'SQLITE_BUSY', 'SQLITE_READONLY', 'SQLITE_CANTOPEN']);
/** node-postgres reports a dropped connection by message only. */
const PG_MESSAGES =
  /Connection terminated|Client has encountered a connection error|timeout exceeded when trying to connect|Connection terminated due to connection timeout/;

export function isStoreUnavailable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (PG_CODES.test(code) || SOCKET_CODES.has(code)) return true;
    if ([...SQLITE_CODES].some((c) => code === c || code.startsWith(`${c}_`))) return true;
  }
  return PG_MESSAGES.test(err.message);
}

/** Seconds a client is told to wait before trying again. */
export const STORE_RETRY_AFTER_SECONDS = 5;
