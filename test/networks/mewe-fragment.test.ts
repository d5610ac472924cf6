/**
 * MeWe's login may send the person back with the loginRequestToken in the URL
 * fragment, which no browser sends to a server: in a real browser, Herald's page
 * hands it over and the channel is connected, as when it comes in the query.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { startHerald, type TestAccount, type TestHerald } from '../helpers/herald.ts';
import { storeSuite } from '../helpers/stores.ts';
import { BROWSER_STORES, browserContext, browserSuite, launchBrowser } from '../helpers/browser.ts';
import { startConnect } from '../helpers/connect.ts';
import { MEWE_APP, MEWE_USER, startMeWeFake, type MeWeFake } from '../fakes/mewe.ts';
import { teardown } from '../helpers/teardown.ts';

const browser = browserSuite();

for (const store of BROWSER_STORES) {
  describe(`mewe login token in the fragment (${store})`, { skip: storeSuite(store).skip || browser.skip }, () => {
    let herald: TestHerald;
    let fake: MeWeFake;
    let chromium: Browser;
    let page: Page;
    let account: TestAccount;

    before(async () => {
      fake = await startMeWeFake();
      herald = await startHerald(store, {
        env: { HERALD_MEWE_APP_ID: MEWE_APP.appId, HERALD_MEWE_API_KEY: MEWE_APP.apiKey, HERALD_MEWE_SITE_URL: fake.url },
      });
      account = await herald.newAccount();
      chromium = await launchBrowser();
      page = await (await browserContext(chromium, herald.url)).newPage();
    });
    after(() =>
      teardown(
        () => chromium?.close(),
        () => herald?.close(),
        () => fake?.close(),
      ),
    );

    const channels = async () => (await account.call('GET', '/integrations')).body as { name: string; identifier: string }[];

    it('connects when MeWe puts the token after # (the browser hands it to Herald)', async () => {
      fake.answerIn = 'fragment';
      await page.goto((await startConnect(account, 'mewe')).toString());
      await page.getByRole('heading', { name: 'MeWe connected' }).waitFor();
      assert.deepEqual(
        (await channels()).map((c) => c.name),
        [`${MEWE_USER.firstName} ${MEWE_USER.lastName}`],
      );
      const exchange = fake.calls('GET /api/dev/token').at(-1)!;
      assert.match(exchange.query.loginRequestToken, /^lrt-/);
      assert.equal(exchange.query.handed_over, undefined, 'Herald’s own mark stays with Herald');
    });

    it('says what is missing when MeWe sent no token at all, after one hand-over', async () => {
      fake.answerIn = 'fragment';
      const start = await startConnect(account, 'mewe');
      // A callback without the token, as a browser would load it with an empty fragment.
      const state = start.searchParams.get('state')!;
      await page.goto(`${herald.url}/connect/mewe/callback?state=${encodeURIComponent(state)}`);
      await page.getByRole('heading', { name: 'The channel was not connected' }).waitFor();
      assert.match((await page.locator('.error').textContent()) ?? '', /MeWe sent no loginRequestToken back/);
      assert.match(page.url(), /handed_over=1/);
    });
  });
}
