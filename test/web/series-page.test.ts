/**
 * Repeating posts in a real browser against a real Herald with its engine: the
 * composer's "Repeat" fields (the API's refusal shown there), the series page
 * with the occurrences the engine created, the calendar's mark on them, the
 * post page's "edit series" and "stop series". Screenshots on a desktop and a
 * phone; axe-core finds nothing serious.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { untypedCaller, eventually, startHerald, type UntypedCaller, type TestHerald } from '../helpers/herald.ts';
import { storeSuite } from '../helpers/stores.ts';
import {
  BROWSER_STORES,
  browserContext,
  browserSuite,
  describeViolations,
  ensureWebBuilt,
  launchBrowser,
  screenshot,
  seriousA11yViolations,
} from '../helpers/browser.ts';
import { WebClient } from '../accounts/web-client.ts';
import { teardown } from '../helpers/teardown.ts';

const browser = browserSuite();
const DAY = 86_400_000;

/** The Monday at least two days ahead, as YYYY-MM-DD (the browser runs in UTC). */
function nextMonday(): string {
  let at = Date.now() + 2 * DAY;
  while (new Date(at).getUTCDay() !== 1) at += DAY;
  return new Date(at).toISOString().slice(0, 10);
}

for (const store of BROWSER_STORES) {
  describe(`repeating posts in a browser (${store})`, { skip: storeSuite(store).skip || browser.skip }, () => {
    let herald: TestHerald;
    let chromium: Browser;
    let context: BrowserContext;
    let page: Page;
    /** The owner's API key, speaking to the public API. */
    let api: UntypedCaller;

    before(async () => {
      ensureWebBuilt();
      // With its engine, as `herald start` runs: a saved series gets its occurrences at once.
      herald = await startHerald(store, { engine: { pollMs: 200 } });
      const web = new WebClient(herald.url);
      const accountId = (await web.signUp('owner@example.com')).body.account.id;
      api = untypedCaller(herald.api, (await herald.services.accounts.createKey(accountId, 'test')).key);
      chromium = await launchBrowser();
      context = await browserContext(chromium, herald.url, web);
      page = await context.newPage();
    });
    after(() =>
      teardown(
        () => chromium?.close(),
        () => herald?.close(),
      ),
    );

    it('repeats a post on Mondays and Thursdays, shows its occurrences on the calendar, edits and stops the series', async () => {
      const channel = await api('POST', '/integrations', { identifier: 'webhook', name: 'Team chat', credentials: { url: 'http://127.0.0.1:9/chat' } });
      assert.equal(channel.status, 201, JSON.stringify(channel.body));
      const monday = nextMonday();

      await page.goto(herald.url + '/compose');
      await page.getByRole('checkbox', { name: 'Team chat' }).check();
      await page.getByLabel('Post', { exact: true }).fill('Stand-up notes are in the wiki');
      // The zone first: changing it keeps the instant, so the wall-clock time is typed in the zone's own.
      await page.locator('main').getByLabel('Time zone').selectOption('Europe/Berlin');
      await page.getByLabel('Date and time', { exact: true }).fill(`${monday}T09:00`);
      await page.getByRole('checkbox', { name: 'Repeat this post' }).check();
      assert.ok(await page.getByRole('checkbox', { name: 'Monday' }).isChecked(), "the start's weekday is ticked");
      await page.getByRole('checkbox', { name: 'Thursday' }).check();
      // A last date before the start: the API's words, in the Repeat fields.
      await page.getByRole('radio', { name: 'On a date' }).check();
      await page.getByLabel('Last date').fill('2020-01-01');
      await page.getByRole('button', { name: 'Save the repeating post' }).click();
      await page.locator('#repeat-until-error').getByText('must not be before repeat.start').waitFor();
      await page.getByRole('radio', { name: 'After a number of times' }).check();
      await page.getByLabel('Times', { exact: true }).fill('6');
      await page.getByLabel('Name (optional)').fill('Stand-up reminder');
      await screenshot(page, store, 'series-composer');
      await page.getByRole('button', { name: 'Save the repeating post' }).click();

      await page.waitForURL(/\/series\/[^/]+$/);
      const id = page.url().split('/').pop()!;
      await page.getByText('Every week on Mon, Thu at 09:00 (Europe/Berlin), 6 times in all').waitFor();
      // The engine of this process creates at once those within the next 14 days; the live stream shows them.
      const shown = await eventually(
        async () => {
          const now = (await api('GET', `/series/${id}`)).body;
          const due = now.upcoming.filter((at: string) => Date.parse(at) <= Date.now() + 14 * DAY);
          return now.occurrences.length === due.length ? now : undefined;
        },
        10_000,
        'the occurrences of the next 14 days',
      );
      const made = shown.occurrences.length;
      assert.ok(made >= 2, `${made} occurrences within 14 days`);
      assert.deepEqual(
        shown.occurrences.map((o: any) => o.at),
        shown.upcoming.slice(0, made),
      );
      await page.getByTestId(`occurrence-${made - 1}`).waitFor();
      assert.equal(await page.locator('.occurrences > li').count(), made);
      await screenshot(page, store, 'series');

      // The calendar marks occurrences (the month of the first one).
      const first = shown.occurrences[0].posts[0].id as string;
      await page.goto(herald.url + '/');
      const event = page.getByTestId(`event-${first}`);
      if (!(await event.isVisible())) await page.getByRole('button', { name: 'Next' }).click();
      await event.getByText('Repeating post').waitFor({ state: 'attached' });
      await screenshot(page, store, 'series-calendar');

      // A post of the series offers the series.
      await page.goto(`${herald.url}/posts/${first}`);
      const box = page.getByRole('region', { name: 'Repeating post' });
      await box.getByText('One occurrence of a repeating post').waitFor();
      await screenshot(page, store, 'series-post');
      await box.getByRole('link', { name: 'Edit series' }).click();
      await page.getByRole('heading', { name: 'Edit repeating post' }).waitFor();
      assert.ok(await page.getByRole('checkbox', { name: 'Thursday' }).isChecked(), "the edit form shows the series' weekday as chosen");
      await page.getByLabel('Post', { exact: true }).fill('Stand-up notes: see the wiki');
      await page.getByRole('button', { name: 'Save the repeating post' }).click();
      await page.waitForURL(`${herald.url}/series/${id}`);
      await page.getByText('Stand-up notes: see the wiki').first().waitFor();
      await page.getByTestId(`occurrence-${made - 1}`).waitFor();
      assert.equal(await page.getByText('Changed on its own').count(), 0, 'the occurrences the edit made again are the series’ own');
      const listed = (await api('GET', '/posts?startDate=2000-01-01T00:00:00Z&endDate=2100-01-01T00:00:00Z')).body.posts.filter((p: any) => p.seriesId === id);
      assert.deepEqual([...new Set(listed.map((p: any) => p.content))], ['Stand-up notes: see the wiki']);

      const checking = await chromium.newContext({ bypassCSP: true, storageState: await context.storageState(), timezoneId: 'UTC' });
      const checked = await checking.newPage();
      const found = [];
      for (const path of [`/series/${id}`, `/posts/${listed[1].id}`, '/series']) {
        await checked.goto(herald.url + path);
        await checked.locator('main h1').waitFor();
        await checked.getByText('Loading…').waitFor({ state: 'detached' });
        found.push(...(await seriousA11yViolations(checked)));
      }
      await checked.goto(herald.url + '/compose');
      await checked.getByRole('checkbox', { name: 'Repeat this post' }).check();
      found.push(...(await seriousA11yViolations(checked)));
      await checking.close();
      assert.deepEqual(found, [], describeViolations(found));

      await page.goto(herald.url + '/series');
      await page.getByTestId(`series-${id}`).getByText('Every week on Mon, Thu at 09:00 (Europe/Berlin), 6 times in all').waitFor();
      await screenshot(page, store, 'series-list');
      await page.goto(`${herald.url}/series/${id}`);
      await page.setViewportSize({ width: 390, height: 844 });
      await page.reload();
      await page.getByTestId(`occurrence-${made - 1}`).waitFor();
      await screenshot(page, store, 'series-phone');
      await page.goto(herald.url + '/compose');
      await page.getByRole('checkbox', { name: 'Repeat this post' }).check();
      await page.getByRole('radio', { name: 'After a number of times' }).check();
      await screenshot(page, store, 'series-composer-phone');
      await page.setViewportSize({ width: 1280, height: 900 });

      // Stopping keeps nothing unpublished: every occurrence here is still to come.
      await page.goto(`${herald.url}/series/${id}`);
      page.once('dialog', (dialog) => void dialog.accept());
      await page.getByRole('button', { name: 'Stop series' }).click();
      await page.getByText(`The series was stopped: ${made} future posts deleted.`).waitFor();
      assert.equal((await api('GET', `/series/${id}`)).status, 404);
      assert.equal((await api('GET', `/posts/${first}`)).status, 404);
    });
  });
}
