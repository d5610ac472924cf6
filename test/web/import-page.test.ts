/**
 * The Import and export page in a real browser: a file with problems shows them
 * by line and column and cannot be imported; a clean file is checked, then
 * imported with one click; the export downloads the posts of a range of days.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { startHerald, type TestHerald, testAccount } from '../helpers/herald.ts';
import { addWebhookChannel, listPosts } from '../helpers/api-fixtures.ts';
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
import { untypedCaller } from '../helpers/herald.ts';

const browser = browserSuite();

for (const store of BROWSER_STORES) {
  describe(`CSV import and export page (${store})`, { skip: storeSuite(store).skip || browser.skip }, () => {
    let herald: TestHerald;
    let chromium: Browser;
    let folder: string;

    before(async () => {
      ensureWebBuilt();
      herald = await startHerald(store);
      chromium = await launchBrowser();
      folder = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-import-page-'));
    });
    after(async () => {
      await chromium?.close();
      await herald?.close();
      fs.rmSync(folder, { recursive: true, force: true });
    });

    it('shows a file’s problems by line and column, imports a clean one, and downloads an export', async () => {
      const owner = new WebClient(herald.url);
      const accountId = (await owner.signUp('owner@example.com')).body.account.id;
      const { key } = await herald.services.accounts.createKey(accountId, 'test');
      const account = testAccount(herald.api, accountId, key);
      await addWebhookChannel(account, { name: 'Newsroom' });

      const broken = path.join(folder, 'broken.csv');
      fs.writeFileSync(
        broken,
        'date,channels,content\n2031-03-04T10:00:00Z,Newsroom,Fine\n2031-03-04 10:00,Newsroom,No offset\n2031-03-04T11:00:00Z,Sports desk,Unknown channel\n',
      );
      const clean = path.join(folder, 'clean.csv');
      fs.writeFileSync(
        clean,
        'date,channels,group,content,delay\n2031-03-04T10:00:00Z,Newsroom,a,Morning news,\n,,a,More at noon,120\n2031-03-05T09:00:00+01:00,Newsroom,,Tuesday,\n',
      );

      // Signed in as the owner (the session the sign-up set); axe is injected, so the page's CSP is bypassed.
      const context = await browserContext(chromium, herald.url, owner, { bypassCSP: true, acceptDownloads: true });
      const page = await context.newPage();
      await page.goto(`${herald.url}/`);
      await page.getByRole('link', { name: 'Import & export' }).click();
      await page.getByRole('heading', { name: 'Import and export' }).waitFor();

      await page.getByLabel('CSV file').setInputFiles(broken);
      const table = page.getByTestId('import-problems');
      await table.waitFor();
      const rows = await table.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)));
      assert.deepEqual(
        rows.map(([line, column]) => `${line} ${column}`),
        ['3 date', '4 channels'],
      );
      assert.match(rows[1][2] ?? '', /"Sports desk" is neither the id nor the name of a channel/);
      const importButton = page.getByRole('button', { name: /^Import \d+ posts?$/ });
      assert.equal(await importButton.isDisabled(), true, 'a file with problems cannot be imported');
      const problems = await seriousA11yViolations(page);
      assert.deepEqual(problems, [], describeViolations(problems));
      await screenshot(page, store, 'import-problems');
      assert.equal((await listPosts(account)).length, 0, 'checking stores nothing');

      await page.getByLabel('CSV file').setInputFiles(clean);
      await page.getByText('No problem found').waitFor();
      assert.match((await page.getByTestId('import-summary').textContent()) ?? '', /3 rows: 2 posts to create/);
      await page.getByRole('button', { name: 'Import 2 posts' }).click();
      await page.getByText('Imported 2 posts').waitFor();
      await screenshot(page, store, 'import-done');
      const imported = await listPosts(account);
      assert.deepEqual(imported.map((p) => p.content).sort(), ['Morning news', 'Tuesday']);

      // The export of the days around the posts holds them, their thread and their state. The person's own zone
      // (their preference, not the browser's UTC) chooses the days and writes the dates.
      assert.equal((await owner.app('PUT', '/preferences', { zone: 'Europe/Berlin' })).status, 200);
      await page.reload();
      await page.getByText('Whole days in Europe/Berlin').waitFor();
      await page.getByLabel('From').fill('2031-03-04');
      await page.getByLabel('To').fill('2031-03-05');
      const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download CSV' }).click()]);
      assert.equal(download.suggestedFilename(), 'herald-posts-2031-03-04-2031-03-05.csv');
      const text = fs.readFileSync((await download.path())!, 'utf8');
      const lines = text
        .replace(/^\ufeff/, '')
        .trim()
        .split('\n');
      assert.equal(lines[0], 'date,timezone,type,channels,group,content,media,delay,settings,state,releaseURL,error');
      assert.deepEqual(
        lines.slice(1).map((l) => l.split(',').slice(0, 2).concat(l.split(',')[5])),
        [
          ['2031-03-04T11:00:00+01:00', 'Europe/Berlin', 'Morning news'],
          ['', '', 'More at noon'],
          ['2031-03-05T09:00:00+01:00', 'Europe/Berlin', 'Tuesday'],
        ],
        'dates in the zone of the preferences, with their offset',
      );
      await page.getByLabel('To').fill('2031-03-01');
      await page.getByText('the end not before the start').waitFor();

      await page.setViewportSize({ width: 390, height: 844 });
      await page.getByLabel('CSV file').setInputFiles(broken);
      await table.waitFor();
      const width = await page.evaluate(() => document.documentElement.scrollWidth);
      assert.ok(width <= 390, `the page is ${width} px wide on a 390 px phone`);
      await screenshot(page, store, 'phone-import-problems');
      await context.close();
    });
  });
}
