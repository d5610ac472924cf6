/**
 * The Feeds page in a real browser against a real Herald and a local blog: add
 * a feed (the API's refusal shown beside the field), read it now, see a new
 * item posted, see a failing feed's reason, pause, change and delete one.
 * Screenshots on a desktop and a phone; axe-core finds nothing serious.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { untypedCaller, startHerald, type UntypedCaller, type TestHerald } from '../helpers/herald.ts';
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
import { startFeedServer, type FeedServer } from '../fakes/feed-server.ts';
import { teardown } from '../helpers/teardown.ts';

const browser = browserSuite();

for (const store of BROWSER_STORES) {
  describe(`the Feeds page in a browser (${store})`, { skip: storeSuite(store).skip || browser.skip }, () => {
    let herald: TestHerald;
    let site: FeedServer;
    let chromium: Browser;
    let context: BrowserContext;
    let page: Page;
    /** The owner's API key, speaking to the public API. */
    let api: UntypedCaller;

    before(async () => {
      ensureWebBuilt();
      site = await startFeedServer();
      herald = await startHerald(store);
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
        () => site?.close(),
      ),
    );

    it('adds a feed, reads it now, shows what it posted and why another fails, pauses, changes and deletes one', async () => {
      const channel = await api('POST', '/integrations', { identifier: 'webhook', name: 'Blog relay', credentials: { url: 'http://127.0.0.1:9/relay' } });
      assert.equal(channel.status, 201, JSON.stringify(channel.body));
      const url = site.publish('/blog.xml', { title: 'Harbour news', items: [{ guid: 'old', title: 'Old news', link: 'http://blog.example/old' }] });

      await page.goto(herald.url + '/feeds');
      await page.getByText('No feed yet.').waitFor();
      await page.getByRole('link', { name: 'Feeds' }).waitFor();
      await page.getByRole('button', { name: 'Add a feed' }).click();
      await page.getByLabel('Feed address (RSS or Atom)').fill('http://10.0.0.1/blog.xml');
      await page.getByRole('checkbox', { name: 'Blog relay' }).check();
      await page.getByRole('button', { name: 'Add the feed' }).click();
      await page.locator('#feed-url-error').getByText('private or reserved address').waitFor();
      await screenshot(page, store, 'feeds-add');
      await page.getByLabel('Feed address (RSS or Atom)').fill(url);
      await page.getByRole('button', { name: 'Add the feed' }).click();
      await page.locator('dialog[open]').waitFor({ state: 'detached' });
      const [made] = (await api('GET', '/feeds')).body;
      const card = page.getByTestId(`feed-${made.id}`);
      await card.getByText('Not read yet').first().waitFor();

      await card.getByRole('button', { name: 'Check now' }).click();
      await card.getByText('First read: what the feed has was noted').waitFor();
      await card.getByText('Harbour news').waitFor();
      await card.getByText('Working').waitFor();
      site.add('/blog.xml', { guid: 'new', title: 'The new pier opens', link: 'http://blog.example/pier' });
      await card.getByRole('button', { name: 'Check now' }).click();
      await card.getByText('1 new item posted.').waitFor();
      const posts = await herald.services.store.db.selectFrom('posts').select('content').where('channel_id', '=', channel.body.id).execute();
      assert.deepEqual(
        posts.map((p) => p.content),
        ['The new pier opens\n\nhttp://blog.example/pier'],
      );

      const brokenUrl = site.publish('/down.xml', {});
      site.answer('/down.xml', 'error500');
      const broken = await api('POST', '/feeds', { url: brokenUrl, channels: [channel.body.id], name: 'Down blog' });
      assert.equal((await api('POST', `/feeds/${broken.body.id}/check`)).body.outcome, 'failed');
      await page.reload();
      const brokenCard = page.getByTestId(`feed-${broken.body.id}`);
      await brokenCard.getByText('Failing').waitFor();
      await brokenCard.getByTestId('feed-error').getByText("Failed once: The feed's server answered 500").waitFor();
      await screenshot(page, store, 'feeds');

      await brokenCard.getByRole('button', { name: 'Pause' }).click();
      await brokenCard.getByText('Paused').waitFor();
      assert.ok(await brokenCard.getByRole('button', { name: 'Check now' }).isDisabled(), 'a paused feed is not read now');

      await card.getByRole('button', { name: 'Edit' }).click();
      await page.getByRole('radio', { name: 'As drafts, for review' }).check();
      await page.getByLabel('Post text').fill('{title} {nope}');
      await page.getByRole('button', { name: 'Save' }).click();
      await page.locator('#feed-template-error').getByText('unknown placeholder {nope}').waitFor();
      await page.getByLabel('Post text').fill('New: {title} {link}');
      await page.getByRole('button', { name: 'Save' }).click();
      await page.locator('dialog[open]').waitFor({ state: 'detached' });
      await card.getByText('As drafts, for review').waitFor();
      const changed = (await api('GET', `/feeds/${made.id}`)).body;
      assert.deepEqual([changed.mode, changed.template], ['draft', 'New: {title} {link}']);

      const checking = await chromium.newContext({ bypassCSP: true, storageState: await context.storageState(), timezoneId: 'UTC' });
      const checked = await checking.newPage();
      await checked.goto(herald.url + '/feeds');
      await checked.getByTestId(`feed-${made.id}`).waitFor();
      const found = await seriousA11yViolations(checked);
      await checked.getByRole('button', { name: 'Add a feed' }).click();
      found.push(...(await seriousA11yViolations(checked)));
      await checking.close();
      assert.deepEqual(found, [], describeViolations(found));

      await page.setViewportSize({ width: 390, height: 844 });
      await page.reload();
      await brokenCard.getByText('Paused').waitFor();
      await screenshot(page, store, 'feeds-phone');
      await page.setViewportSize({ width: 1280, height: 900 });

      page.once('dialog', (dialog) => void dialog.accept());
      await brokenCard.getByRole('button', { name: 'Delete' }).click();
      await brokenCard.waitFor({ state: 'detached' });
      assert.deepEqual(
        (await api('GET', '/feeds')).body.map((f: { id: string }) => f.id),
        [made.id],
      );
    });
  });
}
