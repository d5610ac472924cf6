/**
 * A channel whose access cannot be renewed, in a real browser: the Channels page
 * and Needs attention say until when it publishes, so the person reconnects in
 * time. Screenshots on a desktop and a phone.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { untypedCaller, startHerald, type TestAccount, type TestHerald, testAccount } from '../helpers/herald.ts';
import { storeSuite } from '../helpers/stores.ts';
import { BROWSER_STORES, browserContext, browserSuite, ensureWebBuilt, launchBrowser, screenshot } from '../helpers/browser.ts';
import { connectOAuth } from '../helpers/connect.ts';
import { WebClient } from '../accounts/web-client.ts';
import { MEWE_APP, startMeWeFake, type MeWeFake } from '../fakes/mewe.ts';
import { teardown } from '../helpers/teardown.ts';

const browser = browserSuite();

for (const store of BROWSER_STORES) {
  describe(`access ending, in a browser (${store})`, { skip: storeSuite(store).skip || browser.skip }, () => {
    let herald: TestHerald;
    let mewe: MeWeFake;
    let chromium: Browser;
    let web: WebClient;
    let account: TestAccount;

    before(async () => {
      ensureWebBuilt();
      mewe = await startMeWeFake();
      herald = await startHerald(store, {
        engine: { pollMs: 100, renewEveryMs: 86_400_000 },
        env: { HERALD_MEWE_APP_ID: MEWE_APP.appId, HERALD_MEWE_API_KEY: MEWE_APP.apiKey, HERALD_MEWE_SITE_URL: mewe.url },
      });
      web = new WebClient(herald.url);
      const accountId = (await web.signUp('owner@example.com')).body.account.id;
      const { key } = await herald.services.accounts.createKey(accountId, 'test');
      account = testAccount(herald.api, accountId, key);
      chromium = await launchBrowser();
    });
    after(() =>
      teardown(
        () => chromium?.close(),
        () => herald?.close(),
        () => mewe?.close(),
      ),
    );

    it('shows when a MeWe channel’s access ends, on Channels and under Needs attention', async () => {
      mewe.lifetimeMs = 20 * 3_600_000;
      const { id } = await connectOAuth(herald, account, 'mewe');
      await herald.engine!.renewal.run(Date.now());
      for (const phone of [false, true]) {
        const context = await browserContext(chromium, herald.url, web, { phone });
        const page = await context.newPage();
        await page.goto(`${herald.url}/channels`);
        const row = page.getByTestId(`channel-${id}`);
        await row.getByText(/Access ends .*: reconnect before then/).waitFor();
        assert.match((await row.textContent()) ?? '', /Active/);
        await screenshot(page, store, `access-ends-channels${phone ? '-phone' : ''}`);
        await page.goto(`${herald.url}/attention`);
        const card = page.getByTestId(`expiring-${id}`);
        await card.getByText(/Access ends/).waitFor();
        await page.getByRole('heading', { name: 'Access ending soon' }).waitFor();
        assert.equal(await page.getByText('Nothing needs you').count(), 0);
        await screenshot(page, store, `access-ends-attention${phone ? '-phone' : ''}`);
        await context.close();
      }
    });
  });
}
