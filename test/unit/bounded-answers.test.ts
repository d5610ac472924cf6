/**
 * Answers from servers Herald does not control are read up to a size: a network
 * or a webhook receiver that answers endlessly makes Herald stop reading, not
 * hold the answer in memory and parse it. Against a real local server that
 * streams its answer and notes when the connection ends before it is all sent.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { OutboundGuard } from '../../src/lib/outbound.ts';
import { LARGEST_ANSWER_BYTES, NetworkHttp } from '../../src/providers/adapter-kit/network-http.ts';
import { PublishError } from '../../src/providers/errors.ts';

/** Four times the largest answer read, in 64 KB chunks. */
const ANSWER_BYTES = 4 * LARGEST_ANSWER_BYTES;
const CHUNK = Buffer.alloc(64 * 1024, 'a');

describe('answers larger than Herald reads', () => {
  let server: http.Server;
  let base: string;
  /** For each request, whether the server could send its whole answer. */
  const finished: boolean[] = [];
  const outbound = new OutboundGuard({ allowPrivateHosts: ['127.0.0.1'] });

  before(async () => {
    server = http.createServer((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json' });
      let sent = 0;
      const more = () => {
        while (sent < ANSWER_BYTES) {
          sent += CHUNK.length;
          if (!res.write(CHUNK)) return void res.once('drain', more);
        }
        res.end();
      };
      res.on('close', () => finished.push(res.writableFinished));
      more();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    await outbound.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const http_ = () => new NetworkHttp(outbound, 'Example', new AbortController().signal);
  const lastFinished = async () => {
    const seen = finished.length;
    while (finished.length === seen) await new Promise((resolve) => setImmediate(resolve));
    return finished.at(-1);
  };

  it('after a create, an endless answer is an unknown outcome, and the rest is not downloaded', async () => {
    const closed = lastFinished();
    await assert.rejects(http_().json(`${base}/create`, { json: { text: 'hello' } }), (err: Error) => {
      assert.ok(err instanceof PublishError, `an endless answer is a publishing error the engine records, not a crash: ${err}`);
      assert.equal(err.kind, 'unknown');
      assert.match(err.message, /^Example answered 200 with more than 8 MB, which Herald does not read, so the outcome is unknown/);
      return true;
    });
    assert.equal(await closed, false, 'Herald ended the connection before the server could send it all');
  });

  it('a read that can be repeated is tried again later', async () => {
    await assert.rejects(http_().json(`${base}/read`), (err: Error) => err instanceof PublishError && err.kind === 'retryable');
  });

  it("a webhook receiver's answer is read up to 1 MB", async () => {
    const closed = lastFinished();
    const answer = await outbound.post(`${base}/hook`, { headers: {}, body: '{}' });
    assert.equal((await answer.text()).length, 1024 * 1024);
    assert.equal(await closed, false);
  });
});
