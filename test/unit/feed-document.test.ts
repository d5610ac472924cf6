/**
 * A feed document is read in a worker thread with a time limit: a document that
 * takes longer is given up with a reason the subscription shows, and the worker
 * is ended (the process does not keep it running).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FeedReadError, readDocumentOffThread } from '../../src/domain/feeds/feed-source.ts';
import { MOST_ITEMS_READ } from '../../src/domain/feeds/feed-document.ts';

const items = (count: number) =>
  Array.from({ length: count }, (_, n) => `<item><title>Item ${n}</title><link>/p/${n}</link><guid>g${n}</guid></item>`).join('');
const rss = (count: number) => `<rss version="2.0"><channel><title>A &amp; B</title><link>https://blog.example/</link>${items(count)}</channel></rss>`;

describe('reading a feed document in a worker', () => {
  it('answers the first items with their keys, plain-text title and links resolved against the feed', async () => {
    const document = await readDocumentOffThread(rss(MOST_ITEMS_READ + 5), 60_000);
    assert.equal(document.title, 'A & B');
    assert.equal(document.itemCount, MOST_ITEMS_READ + 5);
    assert.equal(document.entries.length, MOST_ITEMS_READ, 'items past the cap are not read');
    assert.deepEqual(document.entries[0], { key: 'g0', title: 'Item 0', link: 'https://blog.example/p/0', summary: '', image: null, published: null });
  });

  it('gives up a document that takes longer than its limit, saying so', async () => {
    await assert.rejects(readDocumentOffThread(rss(20_000), 1), (err: Error) => {
      assert.ok(err instanceof FeedReadError, `a feed too slow to read is a feed error shown on the feed: ${err}`);
      assert.equal(err.message, 'The feed took longer than 0.001 seconds to read; it is too large or too complex.');
      return true;
    });
  });

  it('says why a document is not a feed', async () => {
    await assert.rejects(readDocumentOffThread('<html><body>Hello</body></html>', 60_000), (err: Error) => {
      assert.ok(err instanceof FeedReadError, `a page that is not a feed is a feed error shown on the feed: ${err}`);
      assert.match(err.message, /^The address did not answer with an RSS or Atom feed/);
      return true;
    });
  });
});
