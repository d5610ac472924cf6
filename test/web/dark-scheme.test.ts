/**
 * The dark scheme in a real browser: with the system set to dark (Chromium's
 * colorScheme), the pages take the dark palette, and axe-core finds no serious
 * or critical problem (colour contrast above all) on the main pages, filled
 * with demo data: a busy month with published, queued, draft and failed posts,
 * the composer with previews, a failed post, a post behind a content warning.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { storeSuite } from '../helpers/stores.ts';
import { BROWSER_STORES, browserSuite, describeViolations, ensureWebBuilt, launchBrowser, screenshot, seriousA11yViolations } from '../helpers/browser.ts';
import { type DemoHerald, demoHerald } from '../helpers/demo-data.ts';
import { teardown } from '../helpers/teardown.ts';

const browser = browserSuite();

for (const store of BROWSER_STORES) {
  describe(`the dark scheme (${store})`, { skip: storeSuite(store).skip || browser.skip }, () => {
    let demo: DemoHerald;
    let chromium: Browser;
    let context: BrowserContext;
    let page: Page;

    before(async () => {
      ensureWebBuilt();
      demo = await demoHerald();
      chromium = await launchBrowser();
      // bypassCSP: axe-core is injected into the page.
      context = await chromium.newContext({ viewport: { width: 1366, height: 900 }, colorScheme: 'dark', timezoneId: 'UTC', locale: 'en-GB', bypassCSP: true });
      await context.addCookies([...demo.web.jar].map(([name, value]) => ({ name, value, url: demo.herald.url, sameSite: 'Lax' as const })));
      page = await context.newPage();
      page.setDefaultTimeout(10_000);
    });
    after(() =>
      teardown(
        () => chromium?.close(),
        () => demo?.herald.close(),
      ),
    );

    async function open(route: string) {
      await page.goto(demo.herald.url + route);
      await page.locator('main h1').first().waitFor();
      // The live stream keeps a connection open, so the network is never idle: wait until nothing says "Loading".
      await page.getByText('Loading…').first().waitFor({ state: 'detached' });
    }

    it('draws the pages and the calendar on dark backgrounds', async () => {
      await open('/');
      // The colour behind an element: its own background or, where it has none, the nearest one behind it.
      const luminance = (target: Locator) =>
        target.first().evaluate((el) => {
          for (let at: Element | null = el; at; at = at.parentElement) {
            const colour = getComputedStyle(at)
              .backgroundColor.match(/[\d.]+/g)!
              .map(Number);
            if (colour.length === 3 || colour[3]! > 0) return (0.2126 * colour[0]! + 0.7152 * colour[1]! + 0.0722 * colour[2]!) / 255;
          }
          return 1;
        });
      const parts: [string, Locator][] = [
        ['the page', page.locator('body')],
        ['the top bar', page.locator('.top')],
        ["a month's day", page.locator('[role="cell"][data-date]')],
        ['a post on the calendar', page.locator('.post-event')],
        ["the calendar's Month button", page.getByText('Month', { exact: true })],
      ];
      for (const [what, target] of parts) {
        const shade = await luminance(target);
        assert.ok(shade < 0.2, `${what} is on a dark background (luminance ${shade.toFixed(2)})`);
      }
    });

    it('has no serious or critical accessibility problem on the main pages (axe-core, colour contrast included)', async () => {
      const problems: string[] = [];
      const routes = [
        '/',
        '/compose',
        `/posts/${demo.failedId}`,
        `/posts/${demo.warnedId}`,
        '/channels',
        '/media',
        '/attention',
        '/series',
        '/feeds',
        '/import',
        '/settings/developers',
        '/settings/team',
        '/settings/notifications',
        '/settings/preferences',
      ];
      for (const route of routes) {
        await open(route);
        const found = await seriousA11yViolations(page);
        if (found.length) problems.push(`${route}:\n${describeViolations(found)}`);
      }
      // The composer with channels and text: its counters, per-channel panels and previews.
      await open('/compose');
      for (const name of ['Box office', 'Riverside Stage']) await page.getByRole('checkbox', { name }).check();
      await page.getByLabel('Post', { exact: true }).fill('Tickets for the spring season are on sale now');
      await page.getByTestId('preview-post').first().waitFor();
      const composer = await seriousA11yViolations(page);
      if (composer.length) problems.push(`/compose (filled):\n${describeViolations(composer)}`);
      await screenshot(page, store, 'dark-compose');
      assert.deepEqual(problems, []);
    });
  });
}
