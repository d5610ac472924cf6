/**
 * Preferences in a real browser: a person picks French and the navigation,
 * the calendar and the dates turn French at once, without a reload; what they
 * chose follows them to another browser; before anyone chooses, the browser's
 * own language is used. axe-core finds nothing serious on the main pages in
 * French and in Japanese, with <html lang> following the language.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { untypedCaller, startHerald, type TestHerald, testAccount } from '../helpers/herald.ts';
import { addWebhookChannel, createPosts, entry, postBody } from '../helpers/api-fixtures.ts';
import { storeSuite } from '../helpers/stores.ts';
import { BROWSER_STORES, browserSuite, describeViolations, ensureWebBuilt, launchBrowser, screenshot, seriousA11yViolations } from '../helpers/browser.ts';
import { WebClient } from '../accounts/web-client.ts';
import { teardown } from '../helpers/teardown.ts';

const browser = browserSuite();
const DAY = 86_400_000;

/** A context whose browser speaks `locale` (its languages and Accept-Language), signed in as `person`. */
async function contextIn(chromium: Browser, url: string, person: WebClient, locale: string, phone = false): Promise<BrowserContext> {
  const context = await chromium.newContext({
    viewport: phone ? { width: 390, height: 844 } : { width: 1366, height: 900 },
    timezoneId: 'UTC',
    locale,
    // Needed to inject axe-core past the page's Content-Security-Policy.
    bypassCSP: true,
  });
  await context.addCookies([...person.jar].map(([name, value]) => ({ name, value, url, httpOnly: name === 'herald_session', sameSite: 'Lax' as const })));
  return context;
}

const htmlLang = (page: Page) => page.evaluate(() => document.documentElement.lang);

for (const store of BROWSER_STORES) {
  describe(`preferences in a browser (${store})`, { skip: storeSuite(store).skip || browser.skip }, () => {
    let herald: TestHerald;
    let chromium: Browser;
    let owner: WebClient;
    let postId: string;
    let when: Date;
    const contexts: BrowserContext[] = [];

    before(async () => {
      ensureWebBuilt();
      herald = await startHerald(store);
      chromium = await launchBrowser();
      owner = new WebClient(herald.url);
      const accountId = (await owner.signUp('owner@example.com')).body.account.id;
      const { key } = await herald.services.accounts.createKey(accountId, 'test');
      const account = testAccount(herald.api, accountId, key);
      const channel = await addWebhookChannel(account, { name: 'Newsroom' });
      // Tomorrow at 10:00 UTC: on this month's calendar (or the first days of the next, shown in its last row).
      when = new Date(Math.floor((Date.now() + DAY) / DAY) * DAY + 10 * 3_600_000);
      [{ postId }] = await createPosts(account, postBody('schedule', [entry(channel.id, ['Bonjour tout le monde'])], { date: when.toISOString() }));
    });
    after(() =>
      teardown(
        ...contexts.map((c) => () => c.close()),
        () => chromium?.close(),
        () => herald?.close(),
      ),
    );

    it('before the person chooses, the browser’s language is used', async () => {
      const context = await contextIn(chromium, herald.url, owner, 'de-DE');
      contexts.push(context);
      const page = await context.newPage();
      await page.goto(`${herald.url}/`);
      await page.getByRole('navigation').getByRole('link', { name: 'Kalender', exact: true }).waitFor();
      assert.equal(await htmlLang(page), 'de');
      await context.close();
    });

    it('picking French turns the pages French at once, keeps focus, and formats dates the French way', async () => {
      const context = await contextIn(chromium, herald.url, owner, 'en-GB');
      contexts.push(context);
      const page = await context.newPage();
      await page.goto(`${herald.url}/settings/preferences`);
      const language = page.getByLabel('Language');
      await language.focus();
      await language.selectOption('fr');
      // No reload: the same page draws again in French, and the picker keeps the keyboard's focus.
      await page.getByRole('heading', { name: 'Préférences' }).waitFor();
      assert.equal(await htmlLang(page), 'fr');
      assert.equal(await page.evaluate(() => (document.activeElement as HTMLSelectElement | null)?.value), 'fr');
      await page.getByText('Enregistré dans votre compte.').waitFor();
      await page.getByLabel('Fuseau horaire').selectOption('Europe/Paris');
      await page.getByLabel('Horloge').selectOption('24h');
      await screenshot(page, store, 'preferences-fr');

      const nav = page.getByRole('navigation', { name: 'Navigation principale' });
      for (const name of ['Calendrier', 'Nouvelle publication', 'À traiter', 'Canaux', 'Paramètres']) await nav.getByRole('link', { name }).waitFor();

      await nav.getByRole('link', { name: 'Calendrier' }).click();
      await page.getByRole('button', { name: 'Aujourd’hui' }).waitFor();
      const month = new Intl.DateTimeFormat('fr', { month: 'long', timeZone: 'Europe/Paris' }).format(new Date());
      // The calendar's title names the month in French.
      await page.getByText(new RegExp(`^${month} \\d{4}$`, 'i')).waitFor();
      // The post's date as a French reader writes it, in Paris time on a 24-hour clock.
      const day = new Intl.DateTimeFormat('fr', { day: 'numeric', month: 'short', timeZone: 'Europe/Paris' }).format(when);
      const event = page.getByTestId(`event-${postId}`);
      await event.waitFor();
      const spoken = (await event.textContent()) ?? '';
      assert.match(spoken, new RegExp(`${day}.*(11|12):00`), spoken);
      assert.doesNotMatch(spoken, /\b(AM|PM)\b/, spoken);
      await screenshot(page, store, 'calendar-fr');
      // FullCalendar's own words too: the hints read out on its buttons and links, in week view its all-day row.
      await page.getByRole('tab', { name: 'Vue Semaine' }).click();
      await page.getByText('Toute la journée').first().waitFor();
      const spokenHints = await page
        .locator('main [title], main [aria-label]')
        .evaluateAll((els) => els.map((e) => `${e.getAttribute('aria-label') ?? ''} ${e.getAttribute('title') ?? ''}`.trim()));
      const english = spokenHints.filter((h) => /\b(Previous|Next|Today|This (day|week|month)|view|Go to|Show \d+ more|All-day|Close)\b/.test(h));
      assert.deepEqual(english, [], `English left in the French calendar: ${english.join(' | ')}`);
      await screenshot(page, store, 'calendar-week-fr');

      await page.goto(`${herald.url}/posts/${postId}`);
      await page.getByText(/Planifiée pour le/).waitFor();
      await context.close();
    });

    it('follows the person to another browser, whatever that browser speaks', async () => {
      const elsewhere = new WebClient(herald.url);
      assert.equal((await elsewhere.logIn('owner@example.com')).status, 200);
      const context = await contextIn(chromium, herald.url, elsewhere, 'ja-JP', true);
      contexts.push(context);
      const page = await context.newPage();
      await page.goto(`${herald.url}/settings/preferences`);
      await page.getByRole('heading', { name: 'Préférences' }).waitFor();
      assert.equal(await htmlLang(page), 'fr');
      assert.equal(await page.getByLabel('Fuseau horaire').inputValue(), 'Europe/Paris');
      assert.equal(await page.getByLabel('Horloge').inputValue(), '24h');
      await screenshot(page, store, 'preferences-fr-phone');
      await context.close();
    });

    for (const [language, home, settings] of [
      ['fr', 'Calendrier', 'Préférences'],
      ['ja', 'カレンダー', '個人設定'],
      ['es', 'Calendario', 'Preferencias'],
      ['de', 'Kalender', 'Präferenzen'],
      ['pt-BR', 'Calendário', 'Preferências'],
      ['it', 'Calendario', 'Preferenze'],
      ['zh-CN', '日历', '偏好设置'],
    ] as const) {
      it(`axe finds nothing serious on the main pages in ${language}, and <html lang> says ${language}`, async () => {
        assert.equal((await owner.app('PUT', '/preferences', { language })).status, 200);
        const context = await contextIn(chromium, herald.url, owner, 'en-GB');
        contexts.push(context);
        const page = await context.newPage();
        await page.goto(`${herald.url}/settings/preferences`);
        await page.getByRole('heading', { name: settings }).waitFor();
        const found: string[] = [];
        for (const path of [
          '/',
          '/compose',
          '/attention',
          '/channels',
          '/media',
          '/series',
          '/feeds',
          '/import',
          `/posts/${postId}`,
          '/settings/preferences',
          '/settings/team',
        ]) {
          await page.goto(`${herald.url}${path}`);
          await page.getByRole('navigation').getByRole('link', { name: home, exact: true }).waitFor();
          await page.locator('main h1, main h2').first().waitFor();
          assert.equal(await htmlLang(page), language, path);
          const violations = await seriousA11yViolations(page);
          if (violations.length) found.push(`${path}: ${describeViolations(violations)}`);
        }
        await screenshot(page, store, `team-${language}`);
        assert.deepEqual(found, [], found.join('\n'));
        await context.close();
      });
    }
  });
}
