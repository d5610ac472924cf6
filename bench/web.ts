/**
 * The web application's speed in headless Chromium (Debian's chromium), against
 * a Herald started as `npm start` starts it, each figure beside a baseline
 * measured in the same run:
 *
 * 1. What the browser downloads for the first page (scripts and styles, as the
 *    server sends them: brotli), against the 150 KB budget; beside it, what the
 *    calendar adds when it is shown (its page's own chunk, FullCalendar in it).
 * 2. The month view with 1,000 posts, then with 5,000: from the moment the
 *    calendar's data has arrived to the first frame after the calendar has
 *    drawn them and the main thread is free again. Baseline: the same month
 *    with no posts, measured between them. Budgets: 300 ms and 600 ms.
 * 3. A keystroke in the composer with 10 channels selected: from the keydown to
 *    the frame after every counter and preview has updated (p95 of 200 keys).
 *    Baseline: the same keystrokes with 1 channel selected.
 *
 * Run: `npm run bench:web` (prints, and writes the figures into bench/README.md
 * unless --no-write).
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import zlib from 'node:zlib';
import { chromium, type Page } from 'playwright-core';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const write = !process.argv.includes('--no-write');
const CHROMIUM = process.env.HERALD_TEST_CHROMIUM || '/usr/bin/chromium';
const PORT = 5391;
const BASE = `http://127.0.0.1:${PORT}`;
const RUNS = 7;
const KEYS = 200;
/** The first page's budget (issue 30), brotli. */
const FIRST_PAGE_BUDGET = 150 * 1024;
/** The month view's budgets (issue 30), by posts in the month. */
const MONTH_BUDGET_MS = { 1000: 300, 5000: 600 } as const;

/**
 * Types KEYS keys into the focused field and returns each keystroke's latency as
 * the browser's Event Timing API measures an interaction: from the key's arrival
 * to the next paint after every handler ran (what Chrome reports as INP). The
 * API reports interactions of 16 ms or more; one it does not report took less,
 * and counts as 16.
 */
async function typeAndTime(page: Page): Promise<number[]> {
  await page.evaluate(() => {
    const byInteraction = new Map<number, number>();
    (window as any).interactions = byInteraction;
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries() as any[]) {
        if (entry.interactionId) byInteraction.set(entry.interactionId, Math.max(byInteraction.get(entry.interactionId) ?? 0, entry.duration));
      }
    }).observe({ type: 'event', durationThreshold: 16, buffered: true } as PerformanceObserverInit);
  });
  for (let i = 0; i < KEYS; i++) await page.keyboard.press(i % 12 === 11 ? 'Space' : 'a');
  await page.waitForTimeout(500);
  const reported = (await page.evaluate(() => [...(window as any).interactions.values()])) as number[];
  return [...reported, ...Array(Math.max(0, KEYS - reported.length)).fill(16)];
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const p95 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.ceil(xs.length * 0.95) - 1]!;
const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;

spawnSync(process.execPath, [path.join(root, 'scripts', 'build-web.mjs')], { stdio: 'inherit' });
const loadAtStart = os.loadavg()[0]!;

// 1. Download size of the first page.
const index = fs.readFileSync(path.join(root, 'dist', 'web', 'index.html'), 'utf8');
const files = [...index.matchAll(/(?:src|href)="\/assets\/([^"]+\.(?:js|css))"/g)].map((m) => path.join(root, 'dist', 'web', 'assets', m[1]!));
const raw = files.reduce((sum, f) => sum + fs.statSync(f).size, 0);
const brotli = files.reduce((sum, f) => sum + fs.statSync(`${f}.br`).size, 0);
const gzip = files.reduce((sum, f) => sum + zlib.gzipSync(fs.readFileSync(f), { level: 9 }).length, 0);
// The calendar page's own files, which it fetches once it is shown (Vite's manifest names them), beyond those index.html loads.
const manifest = JSON.parse(fs.readFileSync(path.join(root, 'dist', 'web', '.vite', 'manifest.json'), 'utf8'));
const chunkFiles = (key: string, into = new Set<string>()): Set<string> => {
  const chunk = manifest[key];
  if (!chunk || into.has(chunk.file)) return into;
  for (const file of [chunk.file, ...(chunk.css ?? [])]) into.add(file);
  for (const imported of chunk.imports ?? []) chunkFiles(imported, into);
  return into;
};
const firstLoaded = new Set(files.map((f) => path.relative(path.join(root, 'dist', 'web'), f)));
const calendarBrotli = [...chunkFiles('src/pages/Calendar.tsx')]
  .filter((file) => !firstLoaded.has(file))
  .reduce((sum, file) => sum + fs.statSync(path.join(root, 'dist', 'web', `${file}.br`)).size, 0);

// A Herald of its own, started as npm start starts it, with a receiver for its webhook channels.
const receiver = http.createServer((_q, s) => s.end('{}')).listen(0, '127.0.0.1');
await new Promise((r) => receiver.once('listening', r));
const receiverUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`;
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-bench-web-'));
const herald = spawn(process.execPath, [path.join(root, 'bin', 'herald.js'), 'serve'], {
  env: {
    ...process.env,
    HERALD_PORT: String(PORT),
    HERALD_PUBLIC_URL: BASE,
    HERALD_DATA_DIR: dataDir,
    HERALD_LOG_LEVEL: 'warn',
    HERALD_POSTS_PER_HOUR: '1000000',
    HERALD_REQUESTS_PER_MINUTE: '1000000',
    HERALD_ALLOW_PRIVATE_HOSTS: '127.0.0.1',
  },
  stdio: ['ignore', 'ignore', 'inherit'],
});
// A minute: on a busy machine (other builds and tests on its two cores) starting takes ten seconds or more.
for (const deadline = Date.now() + 60_000; ; ) {
  try {
    if ((await fetch(`${BASE}/api/health`)).ok) break;
  } catch {
    if (Date.now() > deadline) {
      herald.kill();
      throw new Error('Herald did not start');
    }
  }
  await new Promise((r) => setTimeout(r, 50));
}

const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, timezoneId: 'UTC' });
  const page = await context.newPage();
  await page.goto(`${BASE}/signup`);
  await page.getByLabel('Email').fill('bench@example.com');
  await page.getByLabel('Password').fill('correct horse battery');
  await page.getByRole('button', { name: 'Create the owner account' }).click();
  await page.waitForURL(`${BASE}/`);
  const call = (method: string, route: string, body?: unknown) =>
    page.evaluate(
      async ([method, route, body]) => {
        const csrf = decodeURIComponent(
          document.cookie
            .split('; ')
            .find((c) => c.startsWith('herald_csrf='))!
            .slice(12),
        );
        const r = await fetch(`/api/app${route}`, {
          method,
          headers: { 'content-type': 'application/json', 'x-csrf-token': csrf },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        if (!r.ok) throw new Error(`${method} ${route}: ${r.status} ${await r.text()}`);
        return r.json();
      },
      [method, route, body] as const,
    );
  const channels: string[] = [];
  for (let i = 0; i < 10; i++)
    channels.push(
      (await call('POST', '/public/v1/integrations', { identifier: 'webhook', name: `Channel ${i + 1}`, credentials: { url: `${receiverUrl}/${i + 1}` } })).id,
    );

  // Drafts spread over this month (drafts: the engine leaves them be), 50 a request, on the ten channels in turn.
  const now = new Date();
  const monthStart = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1);
  const days = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 0)).getUTCDate();
  let seeded = 0;
  const seedUpTo = async (total: number) => {
    for (let batch = seeded / 50; batch < total / 50; batch++) {
      const posts = Array.from({ length: 50 }, (_, i) => ({
        integration: { id: channels[(batch * 50 + i) % 10] },
        value: [{ content: `Post ${batch * 50 + i}: a line of text as people write them, with a link https://example.com/${i}` }],
      }));
      await call('POST', '/public/v1/posts', { type: 'draft', date: new Date(monthStart + (batch % days) * 86_400_000 + 9 * 3_600_000).toISOString(), posts });
    }
    seeded = total;
  };

  // 2. The month view: data arrival to the first free frame after drawing.
  const monthView = async (empty: boolean): Promise<number> => {
    const measured = await context.newPage();
    await measured.addInitScript((empty) => {
      const original = window.fetch;
      window.fetch = async (input, init) => {
        const response = await original(input, init);
        if (!String(input).includes('/api/app/calendar?')) return response;
        const text = empty ? '{"posts":[],"publishing":[]}' : await response.text();
        (window as any).dataArrived = performance.now();
        return new Response(text, { status: 200, headers: { 'content-type': 'application/json' } });
      };
    }, empty);
    await measured.goto(`${BASE}/`);
    await measured.waitForFunction(() => (window as any).dataArrived !== undefined);
    await measured.waitForFunction((empty) => empty || document.querySelectorAll('[data-testid^="event-"]').length > 0, empty);
    const ms = await measured.evaluate(
      () => new Promise<number>((resolve) => requestAnimationFrame(() => setTimeout(() => resolve(performance.now() - (window as any).dataArrived)))),
    );
    await measured.close();
    return ms;
  };
  // Each size beside its own empty month, taken in turn with it: the machine's pace at that moment.
  const month = new Map<keyof typeof MONTH_BUDGET_MS, { posts: number[]; empty: number[] }>();
  for (const size of [1000, 5000] as const) {
    await seedUpTo(size);
    const runs = { posts: [] as number[], empty: [] as number[] };
    for (let i = 0; i < RUNS; i++) {
      runs.empty.push(await monthView(true));
      runs.posts.push(await monthView(false));
    }
    month.set(size, runs);
  }

  // 3. Keystrokes in the composer.
  const keystrokes = async (selected: number): Promise<number[]> => {
    const composer = await context.newPage();
    await composer.goto(`${BASE}/compose`);
    await composer.evaluate(() => localStorage.clear());
    await composer.reload();
    await composer.getByRole('heading', { name: 'New post' }).waitFor();
    for (let i = 0; i < selected; i++) await composer.getByRole('checkbox', { name: new RegExp(`^Channel ${i + 1} `) }).check();
    // Every chosen channel's preview is shown beside the editor (no longer opened one by one).
    await composer.getByRole('region', { name: `How it looks on Webhook (Channel ${selected})` }).waitFor();
    const text = composer.getByLabel('Post', { exact: true });
    await text.focus();
    const latencies = await typeAndTime(composer);
    const counted = await composer.getByTestId(new RegExp(`^count-${channels[selected - 1]}-0$`)).textContent();
    if (!counted?.includes(`${KEYS} /`)) throw new Error(`the counter did not follow the typing: ${counted}`);
    await composer.close();
    return latencies;
  };
  const one = await keystrokes(1);
  const ten = await keystrokes(10);
  // The floor: the same keys and the same clock in a bare textarea, no application at all.
  const bare = await context.newPage();
  await bare.setContent('<textarea aria-label="bare"></textarea>');
  await bare.getByLabel('bare').focus();
  const floor = await typeAndTime(bare);
  await bare.close();

  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  const chromiumVersion = browser.version();
  const results = [
    `Measured ${new Date().toISOString().slice(0, 16)}Z on ${os.cpus().length} × ${cpu}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, ` +
      `Node ${process.version}, Chromium ${chromiumVersion} (headless), SQLite store; ` +
      // The machine may be shared: its load says how far the empty baselines' pace is from an idle machine's.
      `load average ${loadAtStart.toFixed(1)} at the start, ${os.loadavg()[0]!.toFixed(1)} at the end (1 min).`,
    '',
    '| measure | Herald | baseline (same run) | ratio | target | verdict |',
    '|---|---|---|---|---|---|',
    `| first page's scripts and styles as sent (brotli) | ${kb(brotli)} (gzip ${kb(gzip)}, raw ${kb(raw)}) | budget ${kb(FIRST_PAGE_BUDGET)} | ` +
      `${((brotli / FIRST_PAGE_BUDGET) * 100).toFixed(0)} % of the budget | ≤ ${kb(FIRST_PAGE_BUDGET)} | ${brotli <= FIRST_PAGE_BUDGET ? 'met' : 'missed'} |`,
    `| the calendar's own chunk, fetched when it is shown (brotli, FullCalendar in it) | ${kb(calendarBrotli)} | | | | |`,
    ...[...month].map(([size, runs]) => {
      const [drawn, empty, budget] = [median(runs.posts), median(runs.empty), MONTH_BUDGET_MS[size]];
      return (
        `| month view, ${size.toLocaleString('en')} posts: data arrived → drawn and free (median of ${RUNS}) | ${drawn.toFixed(0)} ms | ` +
        `same month, no posts: ${empty.toFixed(0)} ms | ${(drawn / empty).toFixed(1)} × (+${(drawn - empty).toFixed(0)} ms) | ` +
        `≤ ${budget} ms | ${drawn <= budget ? 'met' : 'missed'} |`
      );
    }),
    `| composer keystroke, 10 channels: key → next paint (Event Timing, p95 of ${KEYS}) | ${p95(ten).toFixed(1)} ms | ` +
      `1 channel: ${p95(one).toFixed(1)} ms | ${(p95(ten) / p95(one)).toFixed(1)} × | ≤ 50 ms | ${p95(ten) <= 50 ? 'met' : 'missed'} |`,
    `| the same keys in a bare textarea (the browser's own floor) | ${p95(floor).toFixed(1)} ms | | | | |`,
  ].join('\n');
  console.log(results);
  if (write) {
    const readme = path.join(root, 'bench', 'README.md');
    const text = fs.readFileSync(readme, 'utf8');
    const start = '<!-- web-results:start -->';
    const end = '<!-- web-results:end -->';
    if (!text.includes(start)) throw new Error(`bench/README.md has no ${start} marker`);
    fs.writeFileSync(readme, text.slice(0, text.indexOf(start) + start.length) + '\n' + results + '\n' + text.slice(text.indexOf(end)));
  }
} finally {
  await browser.close();
  herald.kill();
  receiver.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
