/**
 * Single sign-on in a real browser: the owner sets the allowed domain, its
 * role and "passwords off" on the Team page; a teammate clicks "Sign in with
 * Test IdP" on the sign-in page, signs in at a real OpenID provider
 * (oidc-provider on 127.0.0.1) and lands in Herald signed in; someone the
 * provider did not verify comes back to the sign-in page, which says why.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { WebClient } from '../accounts/web-client.ts';
import { BROWSER_STORES, browserContext, browserSuite, ensureWebBuilt, launchBrowser, screenshot } from '../helpers/browser.ts';
import type { TestHerald } from '../helpers/herald.ts';
import { startHeraldWithSso, startOidcProvider, type TestProvider } from '../helpers/oidc-provider.ts';
import { storeSuite } from '../helpers/stores.ts';
import { teardown } from '../helpers/teardown.ts';

const browser = browserSuite();

/** Answers the provider's development sign-in page as `login`, and its consent page. */
async function signInAtProvider(page: Page, provider: TestProvider, login: string): Promise<void> {
  await page.waitForURL((url) => url.origin === provider.issuer);
  await page.locator('input[name="login"]').fill(login);
  await page.locator('input[name="password"]').fill('any password');
  await page.getByRole('button', { name: 'Sign-in' }).click();
  await page.getByRole('button', { name: 'Continue' }).click();
}

for (const store of BROWSER_STORES) {
  describe(`single sign-on in a browser (${store})`, { skip: storeSuite(store).skip || browser.skip }, () => {
    let provider: TestProvider;
    let herald: TestHerald;
    let chromium: Browser;
    let owner: WebClient;

    before(async () => {
      ensureWebBuilt();
      provider = await startOidcProvider();
      herald = await startHeraldWithSso(store, provider);
      chromium = await launchBrowser();
      owner = new WebClient(herald.url);
      await owner.signUp('owner@example.com');
    });
    after(() =>
      teardown(
        () => chromium?.close(),
        () => herald?.close(),
        () => provider?.close(),
      ),
    );

    it('the owner lets a domain join as admins and turns passwords off on the Team page', async () => {
      const context = await browserContext(chromium, herald.url, owner);
      try {
        const page = await context.newPage();
        await page.goto(`${herald.url}/settings/team`);
        const section = page.getByRole('form', { name: 'Single sign-on' });
        await section.getByText('People sign in with Test IdP.').waitFor();
        await section.getByLabel('E-mail domains whose people may join').fill('team.test, Example.org');
        await section.getByLabel('Role they join with').selectOption('admin');
        await section.getByLabel('Turn passwords off for everyone but the owner').check();
        await section.getByRole('button', { name: 'Save' }).click();
        await section.getByText('Saved.').waitFor();
        await screenshot(page, 'sso', 'team-settings');
        const stored = await owner.app('GET', '/sso');
        assert.deepEqual(stored.body.allowedDomains, ['team.test', 'example.org']);
        assert.equal(stored.body.domainRole, 'admin');
        assert.equal(stored.body.passwordsOff, true);

        await section.getByLabel('E-mail domains whose people may join').fill('not a domain');
        await section.getByRole('button', { name: 'Save' }).click();
        await section.getByText(/must be an e-mail domain such as example\.com/).waitFor();
        await owner.app('PUT', '/sso', { allowedDomains: ['team.test'], domainRole: 'admin', passwordsOff: true });
      } finally {
        await context.close();
      }
    });

    it('a teammate clicks "Sign in with Test IdP" and lands in Herald signed in', async () => {
      provider.people.set('zoe', { email: 'zoe@team.test', email_verified: true, name: 'Zoe Z' });
      const context = await browserContext(chromium, herald.url);
      try {
        const page = await context.newPage();
        await page.goto(`${herald.url}/signin`);
        await page.getByRole('link', { name: 'Sign in with Test IdP' }).click();
        await signInAtProvider(page, provider, 'zoe');
        await page.waitForURL(`${herald.url}/`);
        await page.getByRole('button', { name: 'Sign out' }).waitFor();
        const session = await page.evaluate(async () => (await fetch('/api/app/session')).json());
        assert.equal(session.user.email, 'zoe@team.test');
        assert.equal(session.user.role, 'admin');
      } finally {
        await context.close();
      }
    });

    it('someone the provider did not verify comes back to the sign-in page, which says why', async () => {
      provider.people.set('yuri', { email: 'yuri@team.test', email_verified: false });
      const context = await browserContext(chromium, herald.url);
      try {
        const page = await context.newPage();
        await page.goto(`${herald.url}/signin`);
        await page.getByRole('link', { name: 'Sign in with Test IdP' }).click();
        await signInAtProvider(page, provider, 'yuri');
        await page.waitForURL((url) => url.pathname === '/signin');
        await page
          .getByRole('alert')
          .getByText(/has not verified your e-mail address/)
          .waitFor();
        await screenshot(page, 'sso', 'refused');
        assert.equal(await page.evaluate(async () => (await fetch('/api/app/session')).status), 401);
      } finally {
        await context.close();
      }
    });
  });
}
