/**
 * What a link preview reads of a page: its Open Graph tags and <title>. A page
 * is untrusted input of up to 512 KB, read on the main thread: its reading must
 * stay linear whatever the page holds (the regular expressions it replaced took
 * 17 to 40 seconds on each of the crafted pages below).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pageMeta } from '../../src/providers/adapter-kit/link-card.ts';

const PAGE_BYTES = 512 * 1024;

describe('reading a page for its link preview', () => {
  it('reads Open Graph and description tags in either quoting, the first of a repeated key, and the title', () => {
    const html = `<!doctype html><html><head>
      <TITLE data-x="1">The harbour &amp; the quay</TITLE>
      <meta property="og:title" content="Harbour reopens">
      <meta property='og:title' content='ignored: the first one counts'>
      <meta name=description content=Boats>
      <meta content="https://blog.example/a.png" property="OG:IMAGE"/>
      <meta charset="utf-8">
    </head><body><title>not this one</title></body></html>`;
    const { meta, title } = pageMeta(html);
    assert.equal(title, 'The harbour &amp; the quay');
    assert.deepEqual(Object.fromEntries(meta), {
      'og:title': 'Harbour reopens',
      description: 'Boats',
      'og:image': 'https://blog.example/a.png',
    });
  });

  it('finds nothing in a page without tags, and no title that is never closed', () => {
    assert.deepEqual(pageMeta('plain text'), { meta: new Map(), title: undefined });
    assert.equal(pageMeta('<title>open for ever').title, undefined);
    assert.deepEqual(Object.fromEntries(pageMeta('<meta property="og:title" content="unclosed').meta), {});
  });

  for (const [name, page] of [
    ['"<title" repeated, never closed', '<title'.repeat(PAGE_BYTES / 6)],
    ['"<meta a" repeated, no ">"', '<meta a'.repeat(PAGE_BYTES / 7)],
    ['one tag of 512 KB of letters', `<meta ${'a'.repeat(PAGE_BYTES)}>`],
    ['one tag of unclosed quotes', `<meta ${'a="'.repeat(PAGE_BYTES / 3)}>`],
  ] as const) {
    it(`reads a crafted page (${name}) in linear time`, () => {
      const started = performance.now();
      const { meta, title } = pageMeta(page);
      const took = performance.now() - started;
      assert.equal(meta.size, 0);
      assert.equal(title, undefined);
      // Linear: tens of milliseconds here. The bound only tells a scan that grows with the square of the page (tens of seconds) from one that does not.
      assert.ok(took < 3000, `took ${Math.round(took)} ms`);
    });
  }
});
