/**
 * A dedicated PostgreSQL connection that LISTENs on one channel and comes back
 * when it drops. `up` runs after every (re)connect, once LISTEN is in place, and
 * `down` when the connection is lost: notifications sent meanwhile are gone, so
 * callers use these to resynchronise.
 */
import pg from 'pg';

const RECONNECT_MS = 1_000;

export interface ListenHandlers {
  notify(payload: string): void;
  up?(): void;
  down?(): void;
}

export interface Listener {
  /** Resolves once the first LISTEN is in place. */
  listening: Promise<void>;
  stop(): Promise<void>;
}

export function listenTo(databaseUrl: string, channel: string, handlers: ListenHandlers): Listener {
  let client: pg.Client | undefined;
  let stopped = false;
  let retry: NodeJS.Timeout | undefined;
  let nowListening = () => {};
  const listening = new Promise<void>((resolve) => (nowListening = resolve));
  const again = () => {
    if (!stopped) retry = setTimeout(() => void connect(), RECONNECT_MS);
  };
  const connect = async () => {
    const c = new pg.Client({ connectionString: databaseUrl });
    c.on('error', () => {});
    c.on('end', () => {
      if (client !== c) return;
      client = undefined;
      handlers.down?.();
      again();
    });
    c.on('notification', (message) => handlers.notify(message.payload ?? ''));
    try {
      await c.connect();
      await c.query(`LISTEN ${channel}`);
      // Resolved even when stopped meanwhile, so nobody waits for a listener that is gone.
      nowListening();
      if (stopped) return void (await c.end());
      client = c;
      handlers.up?.();
    } catch {
      await c.end().catch(() => {});
      again();
    }
  };
  void connect();
  return {
    listening,
    stop: async () => {
      stopped = true;
      clearTimeout(retry);
      const c = client;
      client = undefined;
      await c?.end().catch(() => {});
    },
  };
}
