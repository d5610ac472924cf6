/**
 * GET /api/app/events: a Server-Sent Events stream that tells the web
 * application when posts or channels changed, in this process or any other on
 * the same store (the change signal of src/db/changes.ts), so a calendar shows
 * a post turn published or failed without a reload. The event says only that
 * something changed; the page then asks again for what it shows, through the
 * routes that check who may see what.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { ServerResponse } from 'node:http';
import { tables, type ChangeSignal } from '../../db/changes.ts';
import { appRoutes } from '../../contract/routes/app.ts';
import { serve } from '../serve.ts';

/** How often the change signal is read while someone listens: well inside the 2 s a person may wait. */
export const LOOK_EVERY_MS = 400;
/** A comment line now and then keeps proxies and idle-socket timers from closing a quiet stream. */
const HEARTBEAT_MS = 20_000;
/** After this many unchanged looks with the signal unknown (PostgreSQL listener down), say "changed" anyway. */
const UNKNOWN_LOOKS_BEFORE_REFRESH = 10;

const WATCHED = tables('posts', 'channels');

export function liveRoutes(changes: ChangeSignal): FastifyPluginAsync {
  return async (app) => {
    const streams = new Set<ServerResponse>();
    let last = changes.generation(WATCHED);
    let unknownLooks = 0;
    let timer: NodeJS.Timeout | undefined;
    let heartbeat: NodeJS.Timeout | undefined;

    const send = (text: string) => {
      for (const stream of streams) stream.write(text);
    };
    const look = () => {
      const now = changes.generation(WATCHED);
      if (now === undefined) {
        unknownLooks++;
        if (unknownLooks < UNKNOWN_LOOKS_BEFORE_REFRESH) return;
      } else if (now === last) {
        return;
      }
      unknownLooks = 0;
      last = now;
      send(`event: change\ndata: {}\n\n`);
    };
    const startOrStop = () => {
      if (streams.size > 0 && !timer) {
        last = changes.generation(WATCHED);
        timer = setInterval(look, LOOK_EVERY_MS);
        heartbeat = setInterval(() => send(': still here\n\n'), HEARTBEAT_MS);
        timer.unref();
        heartbeat.unref();
      } else if (streams.size === 0 && timer) {
        clearInterval(timer);
        clearInterval(heartbeat);
        timer = heartbeat = undefined;
      }
    };

    serve(app, appRoutes.routes.events, {
      hide: true,
      handler: async (request, reply) => {
        reply.hijack();
        const stream = reply.raw;
        stream.writeHead(200, {
          'content-type': 'text/event-stream; charset=utf-8',
          'cache-control': 'no-store',
          'x-accel-buffering': 'no',
          connection: 'keep-alive',
        });
        // `retry` tells the browser how soon to reconnect after a lost connection.
        stream.write(`retry: 1000\nevent: ready\ndata: {}\n\n`);
        streams.add(stream);
        startOrStop();
        request.raw.socket.setTimeout(0);
        stream.on('close', () => {
          streams.delete(stream);
          startOrStop();
        });
      },
    });

    // A stream never ends by itself: end them when the server stops, or closing would wait for the browsers.
    app.addHook('preClose', async () => {
      for (const stream of streams) stream.end();
      streams.clear();
      startOrStop();
    });
  };
}
