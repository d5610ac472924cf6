import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { startHerald, type TestAccount, type TestHerald } from '../helpers/herald.ts';
import { testStores, storeSuite } from '../helpers/stores.ts';
import type { Lookup } from '../../src/lib/outbound.ts';
import { assertRefused, mediaRows, noisyPng, storedFiles } from './support.ts';
import { teardown } from '../helpers/teardown.ts';

/**
 * Names as a DNS server would answer them. Only files.test is on Herald's
 * allow-list (it stands for a public host; it is really the local file server).
 */
const dns: Record<string, string[]> = {
  'files.test': ['127.0.0.1'],
  'loopback.test': ['127.0.0.1'],
  'metadata.test': ['169.254.169.254'],
  'mapped.test': ['::ffff:127.0.0.1'],
  'cgnat.test': ['100.64.1.1'],
  'linklocal6.test': ['fe80::1'],
  'mixed.test': ['93.184.216.34', '10.1.2.3'],
};
const lookup: Lookup = async (host) => {
  const found = dns[host];
  if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  return found.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
};

const CAP = 64 * 1024;

/** The far side of upload-from-url: a real HTTP server with well-behaved and misbehaving paths. */
async function startRemote(image: Buffer, large: Buffer) {
  const hits: string[] = [];
  const sockets = new Set<import('node:net').Socket>();
  const server = http.createServer((req, res) => {
    const path = req.url ?? '/';
    hits.push(path);
    const port = (server.address() as AddressInfo).port;
    const redirect = (location: string) => res.writeHead(302, { location }).end();
    if (path.startsWith('/file.png')) return res.writeHead(200, { 'content-type': 'image/png', 'content-length': image.length }).end(image);
    if (path === '/redirect-private') return redirect(`http://127.0.0.1:${port}/file.png?via=redirect`);
    if (path === '/redirect-name') return redirect(`http://loopback.test:${port}/file.png?via=name`);
    if (path === '/redirect-metadata') return redirect('http://169.254.169.254/latest/meta-data/');
    if (path === '/loop') return redirect('/loop');
    if (path === '/redirect-ok') return redirect(`http://files.test:${port}/file.png?via=ok`);
    if (path === '/html.png') return res.writeHead(200, { 'content-type': 'image/png' }).end('<html><script>alert(1)</script></html>');
    if (path === '/slow-headers') return; // never answers
    if (path === '/slow-body') {
      res.writeHead(200, { 'content-type': 'image/png', 'content-length': image.length });
      return res.write(image.subarray(0, 100)); // then nothing more
    }
    if (path === '/huge-declared') {
      // Enough bytes to tell the type, then nothing: the announced length alone must decide.
      res.writeHead(200, { 'content-type': 'image/png', 'content-length': String(CAP * 1000) });
      return res.write(large.subarray(0, 8192));
    }
    if (path === '/huge-chunked') {
      res.writeHead(200, { 'content-type': 'image/png' });
      res.write(image.subarray(0, 64));
      const filler = Buffer.alloc(16 * 1024, 1);
      let sent = 0;
      const more = () => {
        while (sent < CAP * 64 && !res.destroyed) {
          sent += filler.length;
          if (!res.write(filler)) return void res.once('drain', more);
        }
        res.end();
      };
      return more();
    }
    if (path === '/broken') {
      res.writeHead(200, { 'content-type': 'image/png', 'content-length': image.length });
      res.write(image.subarray(0, 200));
      return setTimeout(() => req.socket.destroy(), 20);
    }
    res.writeHead(404).end('not here');
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

for (const store of await testStores()) {
  describe(`POST /upload-from-url through the outbound guard (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let account: TestAccount;
    let remote: Awaited<ReturnType<typeof startRemote>>;
    let image: Buffer;

    before(async () => {
      image = await noisyPng(40, 30);
      remote = await startRemote(image, await noisyPng(300, 300));
      herald = await startHerald(store, {
        lookup,
        env: { HERALD_ALLOW_PRIVATE_HOSTS: 'files.test', HERALD_FETCH_TIMEOUT_MS: '1500', HERALD_MAX_IMAGE_BYTES: String(CAP) },
      });
      account = await herald.newAccount();
    });
    after(() =>
      teardown(
        () => herald.close(),
        () => remote.close(),
      ),
    );

    const fetchUrl = (url: string) => account.callUntyped('POST', '/upload-from-url', { url });

    /** Checks the refusal, and that it stored nothing. */
    async function refused(url: string, status: number, code: string, message?: RegExp) {
      const files = storedFiles(herald);
      const rows = await mediaRows(herald);
      const answer = await fetchUrl(url);
      assertRefused(answer, status, code, 'url');
      if (message) assert.match(answer.body.message, message, url);
      assert.deepEqual(storedFiles(herald), files, `${url}: no file kept`);
      assert.equal(await mediaRows(herald), rows, `${url}: no media row`);
    }

    it('fetches from a public (allow-listed) host and follows a redirect that stays public', async () => {
      const direct = await fetchUrl(`http://files.test:${remote.port}/file.png`);
      assert.equal(direct.status, 201, JSON.stringify(direct.body));
      assert.deepEqual([direct.body.mimeType, direct.body.width, direct.body.height, direct.body.size], ['image/png', 40, 30, image.length]);
      assert.ok(
        Buffer.from(await (await fetch(direct.body.path)).arrayBuffer()).equals(image),
        'Buffer.from(await (await fetch(direct.body.path)).arrayBuffer()).equals(image)',
      );
      const redirected = await fetchUrl(`http://files.test:${remote.port}/redirect-ok`);
      assert.equal(redirected.status, 201, JSON.stringify(redirected.body));
      assert.ok(remote.hits.includes('/file.png?via=ok'), "remote.hits.includes('/file.png?via=ok')");
    });

    it('refuses 127.0.0.1, ::1, 10.0.0.1, 169.254.169.254, CGNAT, multicast and IPv4-mapped literals, before connecting', async () => {
      const before = remote.hits.length;
      for (const url of [
        `http://127.0.0.1:${remote.port}/file.png`,
        `http://[::1]:${remote.port}/file.png`,
        'http://10.0.0.1/file.png',
        'http://169.254.169.254/latest/meta-data/',
        'http://100.64.0.1/file.png',
        'http://224.0.0.1/file.png',
        `http://[::ffff:127.0.0.1]:${remote.port}/file.png`,
        `http://[::ffff:7f00:1]:${remote.port}/file.png`,
        'http://[fd00:ec2::254]/latest/meta-data/',
        'http://0.0.0.0/',
      ]) {
        await refused(url, 400, 'url_refused', /private or reserved/);
      }
      assert.equal(remote.hits.length, before, 'nothing reached the server');
    });

    it('refuses names that resolve to loopback, metadata, CGNAT, link-local or IPv4-mapped addresses, or to any private one among several', async () => {
      const before = remote.hits.length;
      for (const name of ['loopback.test', 'metadata.test', 'mapped.test', 'cgnat.test', 'linklocal6.test', 'mixed.test']) {
        await refused(
          `http://${name}:${remote.port}/file.png`,
          400,
          'url_refused',
          new RegExp(`${name.replace('.', '\\.')} resolves to a private or reserved address`),
        );
      }
      await refused('http://no-such-host.test/file.png', 400, 'url_refused', /could not be resolved/);
      assert.equal(remote.hits.length, before, 'nothing reached the server');
    });

    it('refuses a public-looking URL that redirects to a private address, a private name or the metadata service', async () => {
      for (const path of ['/redirect-private', '/redirect-name', '/redirect-metadata']) {
        await refused(`http://files.test:${remote.port}${path}`, 400, 'url_refused');
      }
      assert.ok(!remote.hits.some((hit) => hit.includes('via=redirect') || hit.includes('via=name')), 'the private targets were never fetched');
    });

    it('refuses other schemes and credentials in the URL', async () => {
      for (const url of ['file:///etc/passwd', 'ftp://files.test/file.png', 'gopher://files.test/', `http://user:secret@files.test:${remote.port}/file.png`]) {
        await refused(url, 400, 'url_refused');
      }
      const answer = await fetchUrl(`http://user:secret@files.test:${remote.port}/file.png`);
      assert.ok(!JSON.stringify(answer.body).includes('secret'), 'the password is not echoed');
    });

    it('a slow server trips the timeout: no answer at all, or a body that stops arriving', async () => {
      await refused(`http://files.test:${remote.port}/slow-headers`, 400, 'url_timeout');
      await refused(`http://files.test:${remote.port}/slow-body`, 400, 'url_timeout');
    });

    it('a file over the cap is refused, whether its length is declared or only seen while streaming', async () => {
      await refused(`http://files.test:${remote.port}/huge-declared`, 413, 'file_too_large');
      const answer = await fetchUrl(`http://files.test:${remote.port}/huge-chunked`);
      assert.equal(answer.status, 413, JSON.stringify(answer.body));
      assert.equal(answer.body.code, 'file_too_large');
    });

    it('a connection that breaks off, a 404 and content that is not an image are each a clear refusal', async () => {
      await refused(`http://files.test:${remote.port}/broken`, 400, 'url_unreachable');
      await refused(`http://files.test:${remote.port}/missing.png`, 400, 'url_unreachable', /answered 404/);
      const files = storedFiles(herald);
      const html = await fetchUrl(`http://files.test:${remote.port}/html.png`);
      assert.deepEqual([html.status, html.body.code], [415, 'unsupported_media_type']);
      assert.deepEqual(storedFiles(herald), files);
    });

    it('a redirect loop ends with a refusal after a few hops', async () => {
      const before = remote.hits.filter((hit) => hit === '/loop').length;
      await refused(`http://files.test:${remote.port}/loop`, 400, 'url_refused', /too many redirects/);
      assert.ok(remote.hits.filter((hit) => hit === '/loop').length - before <= 6, "remote.hits.filter((hit) => hit === '/loop').length - before <= 6");
    });
  });
}
