/**
 * Telling engines in other processes that work is due. On PostgreSQL a NOTIFY on
 * one channel reaches every listening worker at once; on SQLite all writers share
 * one machine and the engine's own timer and poll suffice.
 */
import { sql } from 'kysely';
import type { Store } from '../db/index.ts';
import { listenTo, type Listener } from '../db/pg-listen.ts';

const CHANNEL = 'herald_due';

/** Announces that an item is due at `at` (epoch ms). */
export async function announceDue(store: Store, at: number): Promise<void> {
  if (store.dialect !== 'postgres') return;
  await sql`SELECT pg_notify(${CHANNEL}, ${String(at)})`.execute(store.db);
}

/**
 * Listens for announcements until `stop` is called; `listening` resolves once the
 * first LISTEN is in place. A missed NOTIFY costs at most one poll, and whatever
 * was announced while the connection was down is found by looking at once.
 */
export function listenForDue(databaseUrl: string, onDue: (at: number) => void): Listener {
  return listenTo(databaseUrl, CHANNEL, {
    notify: (payload) => {
      const at = Number(payload);
      if (Number.isFinite(at)) onDue(at);
    },
    up: () => onDue(Date.now()),
  });
}
