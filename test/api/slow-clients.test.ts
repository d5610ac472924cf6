/**
 * What one client may hold open: a body that never finishes is answered 408 and
 * closed (on the sign-in and token endpoints an attacker would pick), and one
 * address may hold only so many connections while others are still served.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { eventually, startHerald, type TestHerald } from '../helpers/herald.ts';

/** Sends the headers and part of the body, then nothing; resolves with what came back once the server closed the connection. */
function unfinishedBody(url: string, path: string, contentType: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () => {
      socket.write(`POST ${path} HTTP/1.1\r\nHost: ${hostname}\r\nContent-Type: ${contentType}\r\nContent-Length: 1000\r\n\r\n{"email":`);
    });
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk) => (answer += chunk));
    socket.on('close', () => resolve(answer));
    socket.on('error', reject);
    // A server that never closes it fails the test instead of hanging it.
    setTimeout(() => {
      socket.destroy();
      reject(new Error(`${path}: the unfinished request was still open after 20 s`));
    }, 20_000).unref();
  });
}

function connectFrom(url: string, localAddress: string): Promise<net.Socket> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect({ port: Number(port), host: hostname, localAddress }, () => resolve(socket));
    socket.on('error', reject);
  });
}

function healthFrom(url: string, localAddress: string): Promise<number> {
  return new Promise((resolve, reject) => {
    http
      .get(`${url}/api/health`, { localAddress, agent: false }, (response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
      })
      .on('error', reject);
  });
}

describe('slow and greedy clients', () => {
  let herald: TestHerald;

  before(async () => {
    herald = await startHerald('sqlite', { env: { HERALD_REQUEST_TIMEOUT_SECONDS: '1', HERALD_CONNECTIONS_PER_ADDRESS: '5' } });
  });
  after(async () => herald.close());

  for (const [path, type] of [
    ['/api/app/auth/login', 'application/json'],
    ['/api/oauth/token', 'application/x-www-form-urlencoded'],
    ['/oauth/login', 'application/x-www-form-urlencoded'],
  ]) {
    it(`an unfinished body on ${path} is answered 408 and closed`, async () => {
      const answer = await unfinishedBody(herald.url, path, type);
      assert.match(answer, /^HTTP\/1\.1 408 /, `answered: ${answer.slice(0, 200)}`);
      const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));
      assert.equal(body.code, 'request_timeout');
    });
  }

  it('one address holds at most HERALD_CONNECTIONS_PER_ADDRESS connections; another address is still served', async () => {
    const held = await Promise.all(Array.from({ length: 5 }, () => connectFrom(herald.url, '127.0.0.1')));
    const refused = await connectFrom(herald.url, '127.0.0.1');
    const closed = await new Promise<boolean>((resolve) => {
      refused.once('close', () => resolve(true));
      setTimeout(() => resolve(false), 5_000).unref();
    });
    assert.ok(closed, 'the sixth connection from one address is closed');
    assert.equal(await healthFrom(herald.url, '127.0.0.2'), 200, 'another address is served');
    for (const socket of held) socket.destroy();
    // The server hears of the closes a moment later.
    const again = await eventually(() => healthFrom(herald.url, '127.0.0.1').catch(() => undefined), 5_000, 'the address to be served again');
    assert.equal(again, 200, 'served again once its connections closed');
  });
});
