/**
 * A local HTTP endpoint standing in for a webhook receiver (n8n, Zapier...): it
 * records every delivery and answers as the test tells it to.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Delivery {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  json: any;
  at: number;
}

export interface Answer {
  status?: number;
  body?: unknown;
  headers?: Record<string, string>;
  delayMs?: number;
  /** Answer once this settles: held until an event the test waits for, not for a time. */
  until?: Promise<unknown>;
}

export type Responder = (delivery: Delivery, index: number) => Answer | undefined;

export interface WebhookReceiver {
  url: string;
  deliveries: Delivery[];
  respond(responder: Responder): void;
  close(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const deliveries: Delivery[] = [];
  let responder: Responder = () => undefined;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let json: unknown;
      try {
        json = JSON.parse(body);
      } catch {
        json = undefined;
      }
      const delivery = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body, json, at: Date.now() };
      deliveries.push(delivery);
      const answer = responder(delivery, deliveries.length - 1) ?? {};
      const send = () => {
        res.writeHead(answer.status ?? 200, { 'content-type': 'application/json', ...answer.headers });
        res.end(JSON.stringify(answer.body ?? { ok: true }));
      };
      if (answer.until) void answer.until.then(send, send);
      else if (answer.delayMs) setTimeout(send, answer.delayMs);
      else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    deliveries,
    respond(r) {
      responder = r;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
