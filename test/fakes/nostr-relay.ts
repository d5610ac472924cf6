/**
 * @nostr-relay's relay (NostrRelay from @nostr-relay/core, messages checked by
 * @nostr-relay/validator, events kept in an in-memory SQLite repository) on a
 * local WebSocket server, with failure injection for tests: `failNext` makes
 * the relay refuse the next EVENT or leave it unanswered.
 */
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';
import type { Event } from 'nostr-tools/pure';
import { NostrRelay } from '@nostr-relay/core';
import {
  createOutgoingNoticeMessage,
  createOutgoingOkMessage,
  EventType,
  EventUtils,
  type HandleMessagePlugin,
  type BroadcastPlugin,
} from '@nostr-relay/common';
import { EventRepositorySqlite } from '@nostr-relay/event-repository-sqlite';
import { Validator } from '@nostr-relay/validator';

/** What the relay does with the next EVENT instead of handling it. */
export type RelayFailure = { ok: false; message: string } | { silent: true; store?: boolean };

export interface FakeRelay {
  url: string;
  /** Events stored, in arrival order. */
  events: Event[];
  /** Every message clients sent, parsed. */
  received: unknown[][];
  failNext(failure: RelayFailure, times?: number): void;
  /** Stores an event as if another client had published it (client messages wait for it). */
  seed(event: Event): Promise<void>;
  close(): Promise<void>;
}

export async function startFakeRelay(): Promise<FakeRelay> {
  const repository = new EventRepositorySqlite(':memory:');
  await repository.init();
  const relay = new NostrRelay(repository);
  const validator = new Validator();
  const events: Event[] = [];
  const received: unknown[][] = [];
  const failures: { failure: RelayFailure; times: number }[] = [];

  // The relay broadcasts an event once it stored it as new; ephemeral kinds are broadcast without being stored.
  const recorder: BroadcastPlugin = {
    async broadcast(event, next) {
      if (EventUtils.getType(event.kind) !== EventType.EPHEMERAL) events.push(event);
      return next();
    },
  };
  // Injected failures take an EVENT before the relay sees it, so the relay caches no result for its id.
  const injector: HandleMessagePlugin = {
    async handleMessage(ctx, message, next) {
      const failure = failures[0];
      if (message[0] !== 'EVENT' || !failure) return next();
      if (--failure.times <= 0) failures.shift();
      const event = message[1];
      if ('silent' in failure.failure) {
        // Stored (or not) but the OK is lost.
        const result = failure.failure.store ? await relay.handleEvent(event) : { success: false };
        return { messageType: 'EVENT', ...result };
      }
      ctx.sendMessage(createOutgoingOkMessage(event.id, false, failure.failure.message));
      return { messageType: 'EVENT', success: false, message: failure.failure.message };
    },
  };
  relay.register(recorder).register(injector);

  let seeded: Promise<unknown> = Promise.resolve();
  const pending = new Set<Promise<void>>();

  const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  server.on('connection', (ws, req) => {
    relay.handleConnection(ws, req.socket.remoteAddress);
    ws.on('message', (data) => {
      try {
        const parsed = JSON.parse(data.toString());
        if (Array.isArray(parsed)) received.push(parsed);
      } catch {
        /* the validator answers it */
      }
      const handled = (async () => {
        await seeded;
        try {
          const message = await validator.validateIncomingMessage(data);
          await relay.handleMessage(ws, message);
        } catch (error) {
          if (error instanceof Error) ws.send(JSON.stringify(createOutgoingNoticeMessage(error.message)));
        }
      })();
      pending.add(handled);
      handled.finally(() => pending.delete(handled));
    });
    ws.on('close', () => relay.handleDisconnect(ws));
  });

  return {
    url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}`,
    events,
    received,
    failNext(failure, times = 1) {
      failures.push({ failure, times });
    },
    seed(event) {
      const done = seeded.then(async () => {
        const result = await relay.handleEvent(event);
        if (!result.success) throw new Error(`the relay refused the seeded event: ${result.message}`);
      });
      seeded = done.catch(() => {});
      return done;
    },
    async close() {
      for (const client of server.clients) client.terminate();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await Promise.allSettled(pending);
      await relay.destroy();
      await repository.destroy();
    },
  };
}
