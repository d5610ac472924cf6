/**
 * A local file host for upload-from-url: every path answers a small PNG, except
 * paths starting with /missing (404). A test can hold the next request open
 * until it releases it, to keep a Herald request in flight.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { PNG_1x1 } from './herald.ts';

export interface Hold {
  /** Resolves once the held request reached this server. */
  arrived: Promise<void>;
  /** Sends the answer of the held request. */
  release(): void;
}

export interface HeldFileServer {
  /** http://127.0.0.1:PORT */
  url: string;
  /** Requests received, by path. */
  hits: Map<string, number>;
  holdNext(): Hold;
  close(): Promise<void>;
}

export async function startHeldFileServer(): Promise<HeldFileServer> {
  const hits = new Map<string, number>();
  let pending: { arrived: () => void; released: Promise<void> } | undefined;
  const releases: (() => void)[] = [];
  const server = http.createServer(async (req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const hold = pending;
    pending = undefined;
    if (hold) {
      hold.arrived();
      await hold.released;
    }
    if (path.startsWith('/missing')) res.writeHead(404, { 'content-type': 'text/plain' }).end('not here');
    else res.writeHead(200, { 'content-type': 'image/png', 'content-length': PNG_1x1.length }).end(PNG_1x1);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hits,
    holdNext() {
      let arrived!: () => void;
      let release!: () => void;
      const arrivedP = new Promise<void>((r) => (arrived = r));
      const released = new Promise<void>((r) => (release = r));
      releases.push(release);
      pending = { arrived, released };
      return { arrived: arrivedP, release };
    },
    async close() {
      for (const release of releases) release();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
