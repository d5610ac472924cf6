/**
 * Limits on what one client can hold open: a connection that sends nothing is
 * closed, a request body that does not arrive in time is answered 408, idle
 * keep-alive connections are dropped soon, and one address may hold only so
 * many connections at once. Without these, unfinished bodies stay open for ever
 * and one client can use up the process's file descriptors.
 */
import type http from 'node:http';
import type net from 'node:net';
import proxyaddr from '@fastify/proxy-addr';
import type { FastifyInstance } from 'fastify';
import type { TrustedProxies } from '../config.ts';
import { timerDelay } from '../lib/timers.ts';
import { errorBody } from './errors.ts';

/** A connection with no bytes in either direction for this long is closed (uploads keep theirs busy). */
export const IDLE_SOCKET_MS = 60_000;
/** Between two requests on one connection. */
export const KEEP_ALIVE_MS = 10_000;

/** HERALD_TRUST_PROXY as Fastify takes it: false, the proxies' addresses, or a test of the hop count. */
export function proxyTrust(trust: TrustedProxies): boolean | string | ((address: string, hop: number) => boolean) {
  return typeof trust === 'number' ? (_address, hop) => hop < trust : trust;
}

/** Refuses a connection beyond `perAddress` from one address; trusted proxies (which carry many clients) are exempt. */
export function capConnectionsPerAddress(server: http.Server, perAddress: number, trustProxy: TrustedProxies): void {
  const exempt = typeof trustProxy === 'string' ? proxyaddr.compile(trustProxy.split(',').map((p) => p.trim())) : () => false;
  const open = new Map<string, number>();
  server.on('connection', (socket: net.Socket) => {
    const address = socket.remoteAddress ?? '';
    if (exempt(address, 0)) return;
    const count = (open.get(address) ?? 0) + 1;
    if (count > perAddress) {
      socket.destroy();
      return;
    }
    open.set(address, count);
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1;
      if (left === 0) open.delete(address);
      else open.set(address, left);
    });
  });
}

/**
 * Every request but an upload must have arrived whole within `ms` (an upload of a
 * large video may take longer; it is held to the idle timeout instead). Past the
 * deadline the client gets the contract's 408 and the connection closes.
 */
export function installBodyDeadline(app: FastifyInstance, ms: number): void {
  const timers = new WeakMap<object, NodeJS.Timeout>();
  const clear = async (request: { raw: object }) => clearTimeout(timers.get(request.raw));
  app.addHook('onRequest', async (request) => {
    if ((request.headers['content-type'] ?? '').startsWith('multipart/')) return;
    const socket = request.raw.socket;
    const timer = setTimeout(() => {
      const body = JSON.stringify(errorBody('request_timeout', `the request took too long to arrive (longer than ${Math.round(ms / 1000)} s)`));
      if (socket.writable && !request.raw.complete) {
        socket.end(
          'HTTP/1.1 408 Request Timeout\r\nContent-Type: application/json; charset=utf-8\r\n' +
            `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
        );
      }
      socket.destroy();
    }, timerDelay(ms));
    timer.unref();
    timers.set(request.raw, timer);
  });
  // The body has arrived once validation runs; a request that ends early is done with it too.
  app.addHook('preValidation', clear);
  app.addHook('onResponse', clear);
  app.addHook('onRequestAbort', clear);
}
