/**
 * The first page a person sees downloads only what it needs: the application's
 * frame (React, the router, the data cache, the English texts) and its own
 * page, at most 150 KB as the server sends it (brotli, issue 30). FullCalendar
 * comes with the calendar, the composer and its previews when it opens. The
 * server serves the split files as the browser needs them: scripts as
 * JavaScript, compressed, cached for good (their names carry their content's
 * hash), and index.html loads the entry as a module.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startHerald, type TestHerald } from '../helpers/herald.ts';
import { ensureWebBuilt } from '../helpers/browser.ts';
import { teardown } from '../helpers/teardown.ts';

const WEB = path.resolve(import.meta.dirname, '..', '..', 'dist', 'web');
const BUDGET = 150 * 1024;

interface Chunk {
  file: string;
  isEntry?: boolean;
  imports?: string[];
  dynamicImports?: string[];
  css?: string[];
}

describe('the first page', () => {
  let manifest: Record<string, Chunk>;
  let html: string;
  before(() => {
    ensureWebBuilt();
    manifest = JSON.parse(fs.readFileSync(path.join(WEB, '.vite', 'manifest.json'), 'utf8'));
    html = fs.readFileSync(path.join(WEB, 'index.html'), 'utf8');
  });

  /** The files a module needs before it runs: its chunk, the chunks it imports (not those it imports on demand), and their styles. */
  const filesOf = (key: string, into = new Set<string>()): Set<string> => {
    const chunk = manifest[key];
    assert.ok(chunk, `the build has no chunk for ${key}`);
    if (into.has(chunk.file)) return into;
    into.add(chunk.file);
    for (const css of chunk.css ?? []) into.add(css);
    for (const imported of chunk.imports ?? []) filesOf(imported, into);
    return into;
  };
  const entry = () => Object.keys(manifest).find((key) => manifest[key]!.isEntry)!;
  /** What the server sends for these files: the brotli copies the build wrote beside them. */
  const brotliBytes = (files: Iterable<string>) => [...files].reduce((sum, file) => sum + fs.statSync(path.join(WEB, `${file}.br`)).size, 0);
  const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;

  it('loads the entry as a module, with what it needs before it runs', () => {
    const needed = filesOf(entry());
    const loaded = [...html.matchAll(/(?:src|href)="\/(assets\/[^"]+\.(?:js|css))"/g)].map((m) => m[1]!);
    assert.deepEqual(new Set(loaded), needed, 'index.html names the entry, its imports and its styles');
    assert.match(html, new RegExp(`<script type="module"[^>]* src="/${manifest[entry()]!.file}"`));
  });

  it('is within 150 KB brotli for the sign-in page', () => {
    const signIn = filesOf('src/pages/Auth.tsx', filesOf(entry()));
    const bytes = brotliBytes(signIn);
    assert.ok(bytes <= BUDGET, `the sign-in page downloads ${kb(bytes)} (brotli) of scripts and styles, over the ${kb(BUDGET)} budget`);
  });

  it('leaves the calendar, the composer and the previews out of the frame every page loads', () => {
    const frame = filesOf(entry());
    const frameText = [...frame].map((file) => fs.readFileSync(path.join(WEB, file), 'utf8')).join('\n');
    assert.doesNotMatch(frameText, /fc-daygrid|fullcalendar/i, 'no FullCalendar in the frame');
    for (const page of ['src/pages/Calendar.tsx', 'src/pages/Composer.tsx']) {
      assert.ok(!frame.has(manifest[page]!.file), `${page} is fetched when it is shown`);
      assert.ok(
        manifest[entry()]!.dynamicImports?.some((key) => filesOf(key).has(manifest[page]!.file)),
        `${page} is one of the pages loaded on demand`,
      );
    }
    const bytes = brotliBytes(frame);
    assert.ok(bytes <= BUDGET, `the frame alone is ${kb(bytes)}`);
  });

  describe('as the server sends it', () => {
    let herald: TestHerald;
    before(async () => {
      herald = await startHerald('sqlite');
    });
    after(() => teardown(() => herald?.close()));

    it('serves each page chunk as JavaScript, compressed and cached for good', async () => {
      const calendar = manifest['src/pages/Calendar.tsx']!;
      for (const file of [manifest[entry()]!.file, calendar.file]) {
        const response = await fetch(`${herald.url}/${file}`, { headers: { 'accept-encoding': 'br' } });
        assert.equal(response.status, 200, file);
        assert.match(response.headers.get('content-type') ?? '', /^(text|application)\/javascript/, file);
        assert.equal(response.headers.get('content-encoding'), 'br', file);
        assert.match(response.headers.get('cache-control') ?? '', /max-age=31536000.*immutable|immutable.*max-age=31536000/, file);
        assert.equal((await response.text()).length, fs.readFileSync(path.join(WEB, file), 'utf8').length, file);
      }
      const css = calendar.css?.[0];
      assert.ok(css, "the calendar's styles come with it");
      const styles = await fetch(`${herald.url}/${css}`);
      assert.match(styles.headers.get('content-type') ?? '', /^text\/css/);
      const page = await fetch(`${herald.url}/signin`);
      assert.match(page.headers.get('content-security-policy') ?? '', /script-src 'self'/);
      assert.equal(await page.text(), html);
    });
  });
});
