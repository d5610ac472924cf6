/**
 * Talking to Nostr relays (NIP-01) over WebSocket: send an event and read the
 * relay's ["OK", id, accepted, message], or ask for events with REQ until EOSE.
 * Every relay address passes the outbound guard like any URL a user gave:
 * literal addresses are checked, names resolved and the checked address used.
 */
import type WebSocket from 'ws';
import type { Event } from 'nostr-tools/pure';
import { OutboundRefused, type OutboundGuard } from '../../lib/outbound.ts';

export interface RelayOptions {
  outbound: OutboundGuard;
  signal: AbortSignal;
  /** Longest wait for the connection and for the relay's answer. */
  timeoutMs: number;
}

/**
 * What one relay did with an event:
 * - accepted: OK true (a duplicate is accepted too: the relay has the event);
 * - rejected: OK false; `message` starts with the NIP-01 prefix (invalid:, blocked:, rate-limited: ...);
 * - unreachable: no connection, so the event was not sent;
 * - silent: the event was sent and no OK came back (the relay may have it).
 */
export interface RelayOutcome {
  relay: string;
  status: 'accepted' | 'rejected' | 'unreachable' | 'silent';
  message: string;
}

export type Filter = Record<string, unknown>;

/** A relay URL a user may give: ws:// or wss://, checked like any outbound address. */
export function checkRelayUrl(raw: string, outbound: OutboundGuard): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new OutboundRefused('is not a valid URL');
  }
  if (url.protocol !== 'wss:' && url.protocol !== 'ws:') throw new OutboundRefused('must be a ws:// or wss:// relay address');
  // The guard knows http(s); the address rules are the same.
  outbound.checkUrl(url.toString().replace(/^ws/, 'http'));
  return raw;
}

/** ws, loaded with the first relay connection: only Nostr channels use it. */
const loadWebSocket = () => import('ws');

async function connect(relay: string, options: RelayOptions): Promise<WebSocket> {
  const { default: WebSocketClient } = await loadWebSocket();
  return new Promise((resolve, reject) => {
    let socket: WebSocket;
    try {
      checkRelayUrl(relay, options.outbound);
      const lookup = (host: string, opts: { all?: boolean }, callback: (...args: any[]) => void) => {
        options.outbound.resolve(host).then(
          (address) => {
            const family = address.includes(':') ? 6 : 4;
            if (opts.all) callback(null, [{ address, family }]);
            else callback(null, address, family);
          },
          (err) => callback(err),
        );
      };
      // `lookup` reaches net.connect through ws's request options (not in its type declarations).
      socket = new WebSocketClient(relay, {
        handshakeTimeout: options.timeoutMs,
        maxPayload: 1024 * 1024,
        followRedirects: false,
        lookup,
      } as WebSocket.ClientOptions);
    } catch (err) {
      reject(err);
      return;
    }
    const onAbort = () => socket.terminate();
    options.signal.addEventListener('abort', onAbort, { once: true });
    socket.once('open', () => {
      options.signal.removeEventListener('abort', onAbort);
      resolve(socket);
    });
    socket.once('error', (err) => {
      options.signal.removeEventListener('abort', onAbort);
      reject(err);
    });
  });
}

function parse(data: WebSocket.RawData): unknown[] | undefined {
  try {
    const message = JSON.parse(data.toString());
    return Array.isArray(message) ? message : undefined;
  } catch {
    return undefined;
  }
}

function reason(err: unknown): string {
  if (err instanceof OutboundRefused) return `address refused: ${err.reason}`;
  const e = err as { code?: string; message?: string };
  return e.code ?? e.message ?? 'connection failed';
}

/** Sends the event to one relay and waits for its OK. */
export async function sendEvent(relay: string, event: Event, options: RelayOptions): Promise<RelayOutcome> {
  let socket: WebSocket;
  try {
    socket = await connect(relay, options);
  } catch (err) {
    return { relay, status: 'unreachable', message: reason(err) };
  }
  return new Promise<RelayOutcome>((resolve) => {
    const finish = (outcome: RelayOutcome) => {
      clearTimeout(timer);
      socket.removeAllListeners();
      socket.on('error', () => {});
      socket.close();
      resolve(outcome);
    };
    const timer = setTimeout(() => finish({ relay, status: 'silent', message: `no answer within ${options.timeoutMs} ms` }), options.timeoutMs);
    socket.on('message', (data) => {
      const message = parse(data);
      if (message?.[0] === 'OK' && message[1] === event.id) {
        finish({ relay, status: message[2] === true ? 'accepted' : 'rejected', message: String(message[3] ?? '') });
      }
    });
    socket.on('close', () => finish({ relay, status: 'silent', message: 'the relay closed the connection before answering' }));
    socket.on('error', (err) => finish({ relay, status: 'silent', message: reason(err) }));
    socket.send(JSON.stringify(['EVENT', event]));
  });
}

/** Asks one relay for events; `reachable` false when it could not be asked at all. */
export async function queryRelay(relay: string, filter: Filter, options: RelayOptions): Promise<{ reachable: boolean; events: Event[] }> {
  let socket: WebSocket;
  try {
    socket = await connect(relay, options);
  } catch {
    return { reachable: false, events: [] };
  }
  const subscription = `herald-${Math.random().toString(36).slice(2, 10)}`;
  return new Promise((resolve) => {
    const events: Event[] = [];
    const finish = () => {
      clearTimeout(timer);
      socket.removeAllListeners();
      socket.on('error', () => {});
      if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(['CLOSE', subscription]));
      socket.close();
      resolve({ reachable: true, events });
    };
    const timer = setTimeout(finish, options.timeoutMs);
    socket.on('message', (data) => {
      const message = parse(data);
      if (message?.[1] !== subscription) return;
      if (message[0] === 'EVENT' && message[2] && typeof message[2] === 'object') events.push(message[2] as Event);
      else if (message[0] === 'EOSE' || message[0] === 'CLOSED') finish();
    });
    socket.on('close', finish);
    socket.on('error', finish);
    socket.send(JSON.stringify(['REQ', subscription, filter]));
  });
}
