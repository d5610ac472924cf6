/**
 * A local Nostr relay (NIP-01) on a WebSocket server: EVENT is checked with
 * nostr-tools (id recomputed, Schnorr signature verified) and answered
 * ["OK", id, true|false, "prefix: message"], a repeat with "duplicate:"; REQ
 * answers the stored events matching the filter, then EOSE; CLOSE ends a
 * subscription. Tests inject relay refusals or silence with `failNext`.
 */
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { verifyEvent, type Event } from 'nostr-tools/pure';

/** What the relay does with the next EVENT instead of storing it. */
export type RelayFailure = { ok: false; message: string } | { silent: true; store?: boolean };

export interface FakeRelay {
  url: string;
  /** Events stored, in arrival order. */
  events: Event[];
  /** Every message clients sent, parsed. */
  received: unknown[][];
  failNext(failure: RelayFailure, times?: number): void;
  /** Stores an event as if another client had published it. */
  seed(event: Event): void;
  close(): Promise<void>;
}

function matches(event: Event, filter: Record<string, any>): boolean {
  if (filter.ids && !filter.ids.includes(event.id)) return false;
  if (filter.authors && !filter.authors.includes(event.pubkey)) return false;
  if (filter.kinds && !filter.kinds.includes(event.kind)) return false;
  if (filter.since && event.created_at < filter.since) return false;
  if (filter.until && event.created_at > filter.until) return false;
  for (const [key, values] of Object.entries(filter)) {
    if (!key.startsWith('#')) continue;
    const name = key.slice(1);
    if (!event.tags.some((t) => t[0] === name && (values as string[]).includes(t[1]))) return false;
  }
  return true;
}

export async function startFakeRelay(): Promise<FakeRelay> {
  const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  const events: Event[] = [];
  const received: unknown[][] = [];
  const failures: { failure: RelayFailure; times: number }[] = [];
  const send = (socket: WebSocket, message: unknown[]) => socket.send(JSON.stringify(message));

  server.on('connection', (socket) => {
    socket.on('message', (data) => {
      let message: unknown[];
      try {
        message = JSON.parse(data.toString());
        if (!Array.isArray(message)) throw new Error('not an array');
      } catch {
        send(socket, ['NOTICE', 'error: could not parse the message']);
        return;
      }
      received.push(message);
      const [type] = message;
      if (type === 'EVENT') {
        const event = message[1] as Event;
        const failure = failures[0];
        if (failure) {
          if (--failure.times <= 0) failures.shift();
          if ('silent' in failure.failure) {
            // A relay that stored the event but whose OK was lost.
            if (failure.failure.store && verifyEvent({ ...event })) events.push(event);
            return;
          }
          send(socket, ['OK', event?.id, false, failure.failure.message]);
          return;
        }
        if (!event || typeof event !== 'object' || !verifyEvent({ ...event })) {
          send(socket, ['OK', event?.id ?? '', false, 'invalid: event id or signature does not verify']);
          return;
        }
        if (events.some((e) => e.id === event.id)) {
          send(socket, ['OK', event.id, true, 'duplicate: already have this event']);
          return;
        }
        events.push(event);
        send(socket, ['OK', event.id, true, '']);
      } else if (type === 'REQ') {
        const [, subscription, ...filters] = message as [string, string, ...Record<string, any>[]];
        for (const filter of filters) {
          const found = events.filter((e) => matches(e, filter)).sort((a, b) => b.created_at - a.created_at);
          for (const event of found.slice(0, filter.limit ?? found.length)) send(socket, ['EVENT', subscription, event]);
        }
        send(socket, ['EOSE', subscription]);
      } else if (type !== 'CLOSE') {
        send(socket, ['NOTICE', `error: unknown message type ${String(type)}`]);
      }
    });
  });

  return {
    url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}`,
    events,
    received,
    failNext(failure, times = 1) {
      failures.push({ failure, times });
    },
    seed(event) {
      events.push(event);
    },
    close: () =>
      new Promise((resolve) => {
        for (const client of server.clients) client.terminate();
        server.close(() => resolve());
      }),
  };
}
