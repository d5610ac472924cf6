/**
 * Screenshots of every page of the web application, to look at: at 1366 and
 * 390 px wide, in the light and the dark scheme, against a Herald started on a
 * temporary data folder with demo data (a few channels, a busy month with
 * published, planned, draft and failed posts, a post with a content warning).
 *
 * Run: `node --import tsx scripts/screenshots.ts` (Chromium at /usr/bin/chromium
 * or HERALD_TEST_CHROMIUM). The pictures go to test-artifacts/screenshots/look/.
 * With --readme it also writes the README's pictures (docs/screenshots/), made
 * small: a 256-colour palette.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Page } from 'playwright-core';
import sharp from 'sharp';
import { DEMO_TEXTS, demoHerald } from '../test/helpers/demo-data.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const OUT = path.join(ROOT, 'test-artifacts', 'screenshots', 'look');
const README_SHOTS = path.join(ROOT, 'docs', 'screenshots');
const CHROMIUM = process.env.HERALD_TEST_CHROMIUM || '/usr/bin/chromium';
const WIDTHS = [1366, 390] as const;
const SCHEMES = ['light', 'dark'] as const;

async function settle(page: Page): Promise<void> {
  await page.locator('main h1').first().waitFor();
  // The live stream keeps a connection open: wait until nothing says "Loading".
  await page.getByText('Loading…').first().waitFor({ state: 'detached' });
  await page.evaluate(() => document.fonts.ready);
}

async function main() {
  const readme = process.argv.includes('--readme');
  const built = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'build-web.mjs'), '--if-stale'], { stdio: 'inherit' });
  if (built.status !== 0) throw new Error('building the web application failed');
  const { herald, web, failedId, warnedId } = await demoHerald();
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
  const pages: [route: string, name: string][] = [
    ['/', 'calendar'],
    ['/compose', 'compose'],
    [`/posts/${failedId}`, 'post-failed'],
    [`/posts/${warnedId}`, 'post-warned'],
    ['/channels', 'channels'],
    ['/series', 'series'],
    ['/media', 'media'],
    ['/attention', 'attention'],
    ['/feeds', 'feeds'],
    ['/import', 'import'],
    ['/settings/developers', 'settings-developers'],
    ['/settings/apps', 'settings-apps'],
    ['/settings/webhooks', 'settings-webhooks'],
    ['/settings/team', 'settings-team'],
    ['/settings/customers', 'settings-customers'],
    ['/settings/templates', 'settings-templates'],
    ['/settings/notifications', 'settings-notifications'],
    ['/settings/preferences', 'settings-preferences'],
    ['/signin', 'signin'],
  ];
  fs.mkdirSync(OUT, { recursive: true });
  try {
    for (const scheme of SCHEMES) {
      for (const width of WIDTHS) {
        const context = await browser.newContext({
          viewport: { width, height: width < 600 ? 844 : 900 },
          colorScheme: scheme,
          timezoneId: 'UTC',
          locale: 'en-GB',
        });
        await context.addCookies([...web.jar].map(([name, value]) => ({ name, value, url: herald.url, sameSite: 'Lax' as const })));
        const page = await context.newPage();
        for (const [route, name] of pages) {
          await page.goto(herald.url + route);
          await settle(page);
          await page.screenshot({ path: path.join(OUT, `${name}-${width}-${scheme}.png`), fullPage: true });
        }
        // The composer with text and channels: its counters and previews.
        await page.goto(herald.url + '/compose');
        await settle(page);
        for (const name of ['Harbour Theatre', 'Box office', 'Riverside Stage']) {
          for (const box of await page.getByRole('checkbox', { name }).all()) await box.check();
        }
        await page.getByLabel('Post', { exact: true }).fill(`${DEMO_TEXTS[0]}: https://harbour.example/season`);
        await page.screenshot({ path: path.join(OUT, `compose-filled-${width}-${scheme}.png`), fullPage: true });
        if (readme) await readmeShots(page, width, scheme, herald.url);
        await context.close();
      }
    }
  } finally {
    await browser.close();
    await herald.close();
  }
  console.log(`Screenshots in ${path.relative(ROOT, OUT)}/`);
}

/** The README's pictures: what the viewport shows (not the whole page), in a palette, so each stays small. */
async function readmeShots(page: Page, width: number, scheme: string, url: string): Promise<void> {
  const save = async (name: string) => {
    const png = await page.screenshot();
    const resized = width > 600 ? sharp(png).resize({ width: 1100 }) : sharp(png);
    await resized.png({ palette: true, colours: 256, compressionLevel: 9 }).toFile(path.join(README_SHOTS, `${name}.png`));
  };
  if (width > 600 && scheme === 'light') await save('composer');
  await page.goto(url + '/');
  await settle(page);
  if (width > 600) await save(scheme === 'light' ? 'calendar' : 'calendar-dark');
  else if (scheme === 'light') await save('phone-calendar');
}

await main();
