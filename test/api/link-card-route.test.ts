/**
 * GET /api/app/link-card: the card the composer's Bluesky preview shows, read
 * from a real page on a local server the way the Bluesky adapter reads it when
 * publishing (Open Graph tags, the image within Bluesky's limit, as data).
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { startHerald, type TestHerald } from '../helpers/herald.ts';
import { storeSuite } from '../helpers/stores.ts';
import { JPEG_1x1 } from '../helpers/jpeg.ts';
import { WebClient } from '../accounts/web-client.ts';
import { teardown } from '../helpers/teardown.ts';

const PAGE = `<!doctype html><html><head><title>Fallback</title>
<meta property="og:title" content="Harbour &amp; quay reopen">
<meta property="og:description" content="Boats are back on Monday.">
<meta property="og:image" content="/cover.jpg"></head><body>Hello</body></html>`;

describe('the link card route (sqlite)', { skip: storeSuite('sqlite').skip }, () => {
  let herald: TestHerald;
  let site: http.Server;
  let siteUrl: string;
  const web = { client: undefined as unknown as WebClient };

  before(async () => {
    site = http.createServer((request, response) => {
      if (request.url === '/news') return response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE);
      if (request.url === '/cover.jpg') return response.writeHead(200, { 'content-type': 'image/jpeg' }).end(JPEG_1x1);
      if (request.url === '/big') return response.writeHead(200, { 'content-type': 'text/html' }).end(PAGE.replace('/cover.jpg', '/huge.jpg'));
      if (request.url === '/huge.jpg') return response.writeHead(200, { 'content-type': 'image/jpeg' }).end(Buffer.alloc(1_200_000));
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not here');
    });
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
    herald = await startHerald('sqlite');
    web.client = new WebClient(herald.url);
    await web.client.signUp('owner@example.com');
  });
  after(() =>
    teardown(
      () => herald?.close(),
      () => new Promise<void>((resolve) => site.close(() => resolve())),
    ),
  );

  const cardOf = (url: string) => web.client.app('GET', `/link-card?url=${encodeURIComponent(url)}`);

  it("answers the page's Open Graph title, description and image", async () => {
    const answer = await cardOf(`${siteUrl}/news`);
    assert.equal(answer.status, 200, answer.text);
    assert.deepEqual(answer.body, {
      card: {
        uri: `${siteUrl}/news`,
        title: 'Harbour & quay reopen',
        description: 'Boats are back on Monday.',
        image: `data:image/jpeg;base64,${JPEG_1x1.toString('base64')}`,
      },
    });
  });

  it('leaves out an image larger than Bluesky takes, as the published card would', async () => {
    const answer = await cardOf(`${siteUrl}/big`);
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.body.card.title, 'Harbour & quay reopen');
    assert.equal(answer.body.card.image, null);
  });

  it('answers no card for a page that cannot be read', async () => {
    const answer = await cardOf(`${siteUrl}/gone`);
    assert.deepEqual([answer.status, answer.body], [200, { card: null }]);
  });

  it('refuses an address that is not an http(s) URL, naming the field', async () => {
    for (const url of ['ftp://example.com/a', 'not a url']) {
      const answer = await cardOf(url);
      assert.equal(answer.status, 400, answer.text);
      assert.match(JSON.stringify(answer.body), /url/);
      assert.match(JSON.stringify(answer.body), /must be an http\(s\) URL/);
    }
  });

  it('is for people signed in only', async () => {
    const stranger = new WebClient(herald.url);
    const answer = await stranger.app('GET', `/link-card?url=${encodeURIComponent(`${siteUrl}/news`)}`);
    assert.equal(answer.status, 401, answer.text);
  });
});
