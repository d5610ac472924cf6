/**
 * Connecting Farcaster in a real browser, as a person does: pick the network,
 * open the approval link, and the dialog notices the approval by itself (the
 * local Neynar approves a few seconds after the link, on the wall clock).
 * Screenshots on a desktop and a phone.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { startHerald, type TestHerald } from '../helpers/herald.ts';
import { storeSuite } from '../helpers/stores.ts';
import { BROWSER_STORES, browserContext, browserSuite, ensureWebBuilt, launchBrowser, screenshot } from '../helpers/browser.ts';
import { WebClient } from '../accounts/web-client.ts';
import { startWrapcastFake, type WrapcastFake } from '../fakes/wrapcast.ts';
import { teardown } from '../helpers/teardown.ts';

const browser = browserSuite();
/** The development recovery phrase and the custody address of its first account. */
const APP = { fid: 977233, mnemonic: 'test test test test test test test test test test test junk', custody: '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266' };

for (const store of BROWSER_STORES) {
  describe(`connecting Farcaster in a browser (${store})`, { skip: storeSuite(store).skip || browser.skip }, () => {
    let herald: TestHerald;
    let fake: WrapcastFake;
    let chromium: Browser;
    let web: WebClient;

    before(async () => {
      ensureWebBuilt();
      fake = await startWrapcastFake();
      fake.users.set(3, { fid: 3, username: 'dwr', display_name: 'Dan', pfp_url: 'https://img.example/dwr.png', follower_count: 1, following_count: 1 });
      fake.custody.set(APP.fid, APP.custody);
      fake.approval.fid = 3;
      herald = await startHerald(store, {
        env: {
          HERALD_WRAPCAST_API_URL: fake.url,
          HERALD_WRAPCAST_API_KEY: fake.apiKey,
          HERALD_WRAPCAST_APP_FID: String(APP.fid),
          HERALD_WRAPCAST_APP_MNEMONIC: APP.mnemonic,
        },
      });
      web = new WebClient(herald.url);
      await web.signUp('owner@example.com');
      chromium = await launchBrowser();
    });
    after(() =>
      teardown(
        () => chromium?.close(),
        () => herald?.close(),
        () => fake?.close(),
      ),
    );

    for (const phone of [false, true]) {
      it(`shows the approval link and connects once approved (${phone ? 'phone' : 'desktop'})`, async () => {
        fake.approval.afterMs = 3_000;
        const context = await browserContext(chromium, herald.url, web, { phone });
        const page = await context.newPage();
        if (!phone) await page.setViewportSize({ width: 1366, height: 900 });
        await page.goto(`${herald.url}/channels`);
        await page.getByRole('button', { name: 'Add a channel' }).click();
        await page.getByRole('button', { name: 'Farcaster', exact: true }).click();
        const link = page.getByRole('link', { name: 'Approve in Farcaster' });
        await link.waitFor();
        assert.match((await link.getAttribute('href')) ?? '', /^https:\/\/client\.farcaster\.xyz\/deeplinks\/signed-key-request\?token=0x/);
        await page.getByText('Waiting for your approval…').waitFor();
        // Keyboard: the link comes before the fallback.
        await link.focus();
        await page.keyboard.press('Tab');
        assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Paste a signer id instead');
        await screenshot(page, store, `farcaster-approve${phone ? '-phone' : ''}`);
        await page.getByText('Dan is connected.').waitFor({ timeout: 15_000 });
        await screenshot(page, store, `farcaster-connected${phone ? '-phone' : ''}`);
        await page.getByRole('button', { name: 'Close' }).first().click();
        await page.getByRole('cell', { name: /Dan/ }).waitFor();
        await context.close();
      });
    }
  });
}
