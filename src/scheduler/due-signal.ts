/**
 * Telling engines in other processes that work is due. On PostgreSQL a NOTIFY on
 * one channel reaches every listening worker at once; on SQLite all writers share
 * one machine and the engine's own timer and poll suffice.
 */
import pg from 'pg';
import { sql } from 'kysely';
import type { Store } from '../db/index.ts';

const CHANNEL = 'herald_due';
const RECONNECT_MS = 1_000;

/** Announces that an item is due at `at` (epoch ms). */
export async function announceDue(store: Store, at: number): Promise<void> {
  if (store.dialect !== 'postgres') return;
  await sql`SELECT pg_notify(${CHANNEL}, ${String(at)})`.execute(store.db);
}

/**
 * Listens for announcements until `stop` is called; `listening` resolves once the
 * first LISTEN is in place. The connection is re-opened when it drops; a missed
 * NOTIFY costs at most one poll.
 */
export function listenForDue(databaseUrl: string, onDue: (at: number) => void): { stop: () => Promise<void>; listening: Promise<void> } {
  let client: pg.Client | undefined;
  let stopped = false;
  let retry: NodeJS.Timeout | undefined;
  let nowListening = () => {};
  const listening = new Promise<void>((resolve) => (nowListening = resolve));
  const connect = async () => {
    const c = new pg.Client({ connectionString: databaseUrl });
    c.on('error', () => {});
    c.on('end', () => {
      if (client === c && !stopped) retry = setTimeout(() => void connect(), RECONNECT_MS);
    });
    c.on('notification', (message) => {
      const at = Number(message.payload);
      if (Number.isFinite(at)) onDue(at);
    });
    try {
      await c.connect();
      await c.query(`LISTEN ${CHANNEL}`);
      client = c;
      nowListening();
      if (stopped) await c.end();
      // Whatever was announced while we were away is found by looking now.
      else onDue(Date.now());
    } catch {
      await c.end().catch(() => {});
      if (!stopped) retry = setTimeout(() => void connect(), RECONNECT_MS);
    }
  };
  void connect();
  return {
    listening,
    stop: async () => {
      stopped = true;
      clearTimeout(retry);
      await client?.end().catch(() => {});
    },
  };
}
