import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { isPrivateAddress, OutboundGuard, OutboundRefused } from '../../src/lib/outbound.ts';

describe('isPrivateAddress', () => {
  const refused = [
    '127.0.0.1',
    '127.1.2.3',
    '10.0.0.1',
    '172.16.5.4',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '::1',
    '::',
    'fe80::1',
    'fd00:ec2::254',
    'fc00::1',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:10.0.0.1',
    '::ffff:a9fe:a9fe',
    '64:ff9b::7f00:1',
    'not-an-ip',
    // IPv4-compatible (::/96), mapped (::ffff:0:0/96) and translated forms, in every spelling.
    '::127.0.0.1',
    '::7f00:1',
    '::a9fe:a9fe',
    '::10.1.2.3',
    '0:0:0:0:0:ffff:127.0.0.1',
    '0:0:0:0:0:0:127.0.0.1',
    '::FFFF:7F00:0001',
    '0000:0000:0000:0000:0000:ffff:0a00:0001',
    '::ffff:0:127.0.0.1',
    '::ffff:0:7f00:1',
    '::ffff:192.168.1.1',
    '::c0a8:101',
  ];
  const allowed = ['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111', '::ffff:8.8.8.8', '::8.8.8.8', '0:0:0:0:0:ffff:808:808', '2a00:1450::7f00:1'];
  for (const address of refused) it(`refuses ${address}`, () => assert.equal(isPrivateAddress(address), true));
  for (const address of allowed) it(`allows ${address}`, () => assert.equal(isPrivateAddress(address), false));
});

describe('OutboundGuard', () => {
  let server: http.Server;
  let port: number;
  before(async () => {
    server = http.createServer((req, res) => {
      if (req.url === '/redirect-private') {
        res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' });
        return res.end();
      }
      if (req.url === '/redirect-local') {
        res.writeHead(302, { location: `http://public.example:${port}/ok` });
        return res.end();
      }
      res.end('fine');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('refuses literal private addresses and non-http schemes before connecting', async () => {
    const guard = new OutboundGuard();
    for (const url of [
      'http://127.0.0.1/',
      'http://[::1]/',
      'http://10.0.0.1/',
      'http://169.254.169.254/',
      'http://[::ffff:127.0.0.1]/',
      'file:///etc/passwd',
      'ftp://x/',
    ]) {
      await assert.rejects(guard.fetch(url), OutboundRefused, url);
    }
    await guard.close();
  });

  it('refuses a name that resolves to loopback', async () => {
    const guard = new OutboundGuard({ lookup: async () => [{ address: '127.0.0.1', family: 4 }] });
    await assert.rejects(guard.fetch(`http://innocent.example:${port}/`), /private or reserved/);
    await guard.close();
  });

  it('connects to the address it checked (pinned), for an allowed host', async () => {
    // "public.example" resolves (by the stub) to the local test server, which the allow-list admits.
    const guard = new OutboundGuard({ lookup: async () => [{ address: '127.0.0.1', family: 4 }], allowPrivateHosts: ['public.example'] });
    const response = await guard.fetch(`http://public.example:${port}/ok`);
    assert.equal(await response.text(), 'fine');
    await guard.close();
  });

  it('re-checks every redirect target', async () => {
    const guard = new OutboundGuard({ allowPrivateHosts: ['127.0.0.1'] });
    await assert.rejects(guard.fetch(`http://127.0.0.1:${port}/redirect-private`), /169\.254\.169\.254/);
    await guard.close();
  });
});
