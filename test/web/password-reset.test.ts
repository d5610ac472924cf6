/**
 * "Forgot password?" in a real browser: from the sign-in page to the mailed
 * link (a real SMTP server), the new password that signs the person in, and
 * the same link refused the second time.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { WebClient } from '../accounts/web-client.ts';
import { browserContext, browserSuite, ensureWebBuilt, launchBrowser } from '../helpers/browser.ts';
import { startHerald, type TestHerald } from '../helpers/herald.ts';
import { startSmtpServer, type SmtpServer } from '../helpers/smtp.ts';
import { teardown } from '../helpers/teardown.ts';

describe('forgot password in a browser (sqlite)', browserSuite(), () => {
  let smtp: SmtpServer;
  let herald: TestHerald;
  let browser: Browser;

  before(async () => {
    ensureWebBuilt();
    smtp = await startSmtpServer();
    herald = await startHerald('sqlite', {
      env: { HERALD_SMTP_URL: smtp.url, HERALD_MAIL_FROM: 'herald@example.test', HERALD_SMTP_CA: smtp.caFile },
      mail: { pollMs: 100 },
    });
    await new WebClient(herald.url).signUp('owner@example.com', 'correct horse battery');
    browser = await launchBrowser();
  });
  after(() =>
    teardown(
      () => browser?.close(),
      () => herald?.close(),
      () => smtp?.close(),
    ),
  );

  it('asks for a link from the sign-in page, sets the new password from the mail, and refuses the link after', async () => {
    const context = await browserContext(browser, herald.url);
    const page = await context.newPage();
    await page.goto(`${herald.url}/signin`);
    await page.getByRole('link', { name: 'Forgot password?' }).click();
    await page.getByLabel('Email').fill('owner@example.com');
    await page.getByRole('button', { name: 'Send the link' }).click();
    await page.getByText('If this address belongs to someone here').waitFor();

    const mail = await smtp.waitFor((m) => m.to.includes('owner@example.com'), 'the reset mail');
    const link = mail.text.split(/\s+/).find((word) => word.startsWith(`${herald.url}/reset-password#token=`));
    assert.ok(link, mail.text);
    await page.goto(link);
    await page.getByLabel('New password').fill('a brand new password');
    await page.getByRole('button', { name: 'Save the password and sign in' }).click();
    await page.waitForURL(`${herald.url}/`);
    assert.equal((await new WebClient(herald.url).logIn('owner@example.com', 'a brand new password')).status, 200);

    const again = await (await browserContext(browser, herald.url)).newPage();
    await again.goto(link);
    await again.getByLabel('New password').fill('yet another password');
    await again.getByRole('button', { name: 'Save the password and sign in' }).click();
    await again.getByText(/used already/).waitFor();
    assert.equal(again.url(), link, 'stays on the page, saying why');
  });
});
