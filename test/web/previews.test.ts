/**
 * The composer's previews in a real browser: each chosen channel's network
 * shows the post as it will (X's picture grid and its crops, LinkedIn's fold,
 * Bluesky's link card read from a real page, Instagram's 4:5 limit and its
 * profile grid, Mastodon's handle, a pin on the preview link's page), beside the editor on a wide screen and
 * under it on a phone. Screenshots at 1366 and 390 px wide.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { untypedCaller, startHerald, type UntypedCaller, type TestHerald } from '../helpers/herald.ts';
import { storeSuite } from '../helpers/stores.ts';
import { BROWSER_STORES, browserSuite, describeViolations, ensureWebBuilt, launchBrowser, screenshot, seriousA11yViolations } from '../helpers/browser.ts';
import { JPEG_1x1 } from '../helpers/jpeg.ts';
import { WebClient } from '../accounts/web-client.ts';
import { teardown } from '../helpers/teardown.ts';

const browser = browserSuite();
const DAY = 86_400_000;

const PAGE = `<!doctype html><html><head><title>Harbour news</title>
<meta property="og:title" content="The quay reopens on Monday">
<meta property="og:description" content="Boats are back after the works.">
<meta property="og:image" content="/cover.jpg"></head><body>News</body></html>`;

/** A PNG of the given size, as a person would upload it. */
const png = async (name: string, width: number, height: number) => ({
  name,
  mimeType: 'image/png',
  buffer: await sharp({ create: { width, height, channels: 3, background: { r: 40, g: 110, b: 170 } } })
    .png()
    .toBuffer(),
});

for (const store of BROWSER_STORES) {
  describe(`network previews in the composer (${store})`, { skip: storeSuite(store).skip || browser.skip }, () => {
    let herald: TestHerald;
    let site: http.Server;
    let siteUrl: string;
    let chromium: Browser;
    let context: BrowserContext;
    let page: Page;
    let api: UntypedCaller;
    let web: WebClient;
    const channel: Record<string, string> = {};
    /** The paths the page's site was asked for, in order. */
    const asked: string[] = [];

    before(async () => {
      ensureWebBuilt();
      site = http.createServer((request, response) => {
        asked.push(request.url ?? '');
        if (request.url === '/news') return response.writeHead(200, { 'content-type': 'text/html' }).end(PAGE);
        if (request.url === '/cover.jpg') return response.writeHead(200, { 'content-type': 'image/jpeg' }).end(JPEG_1x1);
        response.writeHead(404, { 'content-type': 'text/plain' }).end('not here');
      });
      await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
      siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
      herald = await startHerald(store);
      web = new WebClient(herald.url);
      const accountId = (await web.signUp('owner@example.com')).body.account.id;
      api = untypedCaller(herald.api, (await herald.services.accounts.createKey(accountId, 'test')).key);
      // Channels as their networks' connections store them (the profile as each adapter writes it).
      const connected: [string, string, string][] = [
        ['x', 'Harbour on X', 'harbourcafe'],
        ['linkedin', 'Harbour on LinkedIn', 'harbour-cafe'],
        ['bluesky', 'Harbour on Bluesky', 'harbour.bsky.social'],
        ['instagram', 'Harbour on Instagram', 'harbour.cafe'],
        ['mastodon', 'Harbour on Mastodon', '@harbour@social.example'],
        ['pinterest', 'Harbour on Pinterest', 'harbourcafe'],
        ['facebook', 'Harbour on Facebook', 'Harbour Café'],
        ['threads', 'Harbour on Threads', 'harbour.cafe'],
        ['youtube', 'Harbour on YouTube', 'HarbourCafe'],
        ['tiktok', 'Harbour on TikTok', 'harbour.cafe'],
        ['reddit', 'Harbour on Reddit', 'u/harbour'],
        ['discord', 'Harbour on Discord', 'Harbour#general'],
        ['devto', 'Harbour on DEV', 'harbour'],
      ];
      for (const [network, name, profile] of connected) {
        channel[network] = (await herald.services.channels.save(accountId, network, { externalId: `${network}-1`, name, profile, config: {} })).id;
      }
      chromium = await launchBrowser();
    });
    after(() =>
      teardown(
        () => chromium?.close(),
        () => herald?.close(),
        () => new Promise<void>((resolve) => site.close(() => resolve())),
      ),
    );

    async function compose(width: number, channels: string[], text: string) {
      await context?.close();
      // bypassCSP: axe-core is injected into the page.
      context = await chromium.newContext({ viewport: { width, height: 900 }, timezoneId: 'UTC', locale: 'en-GB', bypassCSP: true });
      await context.addCookies([...web.jar].map(([name, value]) => ({ name, value, url: herald.url, sameSite: 'Lax' as const })));
      page = await context.newPage();
      await page.goto(herald.url + '/compose');
      for (const name of channels) await page.getByRole('checkbox', { name }).check();
      await page.getByLabel('Post', { exact: true }).fill(text);
    }

    const preview = (network: string) => page.getByTestId(`preview-${channel[network]}`);
    /** Each picture (by file name, in name order: uploads finish in any order) and whether the network crops it. */
    const cropped = (network: string) =>
      preview(network)
        .getByTestId('preview-cell')
        .evaluateAll((cells) => cells.map((c) => `${c.querySelector('img')?.alt}: ${c.getAttribute('data-cropped')}`).sort());

    it('X: its grid for two and four pictures, the cropped one named, beside the editor on a wide screen', async () => {
      await compose(1366, ['Harbour on X'], 'Our new terrace is open');
      await page.locator('#shared-0-files').setInputFiles([await png('portrait.png', 700, 800), await png('square.png', 800, 800)]);
      const x = preview('x');
      await x.getByTestId('preview-grid').and(page.locator('[data-count="2"]')).waitFor();
      // 7:8 cells: the 7:8 picture fits, the square one is cut.
      await x.getByText('X crops square.png to fit its frame.').waitFor();
      assert.deepEqual(await cropped('x'), ['portrait.png: no', 'square.png: yes']);
      await page.locator('#shared-0-files').setInputFiles([await png('wide.png', 1600, 900), await png('wide2.png', 1600, 900)]);
      await x.getByTestId('preview-grid').and(page.locator('[data-count="4"]')).waitFor();
      // Four in a 2×2 of 16:9: the wide ones fit, the others are cut.
      await page.waitForFunction((id) => document.querySelectorAll(`[data-testid="preview-${id}"] [data-cropped="yes"]`).length === 2, channel.x);
      assert.deepEqual(await cropped('x'), ['portrait.png: yes', 'square.png: yes', 'wide.png: no', 'wide2.png: no']);

      const editor = await page.getByLabel('Post', { exact: true }).boundingBox();
      const aside = await page.locator('.composer-preview').boundingBox();
      assert.ok(
        editor && aside && aside.x >= editor.x + editor.width,
        `the preview (x ${aside?.x}) is right of the editor (ends at ${editor && editor.x + editor.width})`,
      );
      await screenshot(page, store, 'preview-x-1366');
    });

    it('LinkedIn: the text folds at "…see more", under the editor on a phone', async () => {
      const long = 'We roast our own beans every Monday morning, and the whole street smells of it. '.repeat(4);
      await compose(390, ['Harbour on LinkedIn'], long);
      const linkedin = preview('linkedin');
      await linkedin.getByTestId('fold').waitFor();
      assert.equal((await linkedin.getByTestId('fold').textContent())?.trim(), '…see more');
      const shown = await linkedin.locator('.pv-text').evaluate((p) => p.firstChild?.textContent ?? '');
      assert.ok(shown.length <= 210 && long.startsWith(shown), `${shown.length} characters before the fold`);
      await linkedin.getByText('LinkedIn folds the text').waitFor();
      const editor = await page.getByLabel('Post', { exact: true }).boundingBox();
      const aside = await page.locator('.composer-preview').boundingBox();
      assert.ok(editor && aside && aside.y >= editor.y + editor.height, 'the preview is under the editor');
      assert.equal(await page.evaluate(() => document.documentElement.scrollWidth), 390, 'the page fits the phone');
      await page.locator('.composer-preview').scrollIntoViewIfNeeded();
      await screenshot(page, store, 'preview-linkedin-390');
    });

    it("Bluesky: the link's card from the page's Open Graph tags; Mastodon's handle with one @", async () => {
      await compose(1366, ['Harbour on Bluesky', 'Harbour on Mastodon'], `Big news: ${siteUrl}/news`);
      const card = preview('bluesky').getByTestId('link-card');
      await card.getByText('The quay reopens on Monday').waitFor();
      await card.getByText('Boats are back after the works.').waitFor();
      assert.match((await card.locator('img').getAttribute('src')) ?? '', /^data:image\/jpeg;base64,/);
      const mastodon = preview('mastodon');
      await mastodon.getByText('@harbour@social.example', { exact: true }).waitFor();
      assert.equal(await mastodon.getByText('@@harbour').count(), 0);
      await screenshot(page, store, 'preview-bluesky-mastodon-1366');

      // Typed key by key, the address is read once it stops changing, not at each of its prefixes.
      asked.length = 0;
      const editor = page.getByLabel('Post', { exact: true });
      await editor.fill('Read ');
      const read = page.waitForResponse((r) => r.url().includes('/link-card?') && decodeURIComponent(r.url()).endsWith('/news/'));
      await editor.pressSequentially(`${siteUrl}/news/`, { delay: 40 });
      await read;
      await preview('bluesky').getByText('No card: the page could not be read.').waitFor();
      assert.deepEqual(asked, ['/news/']);
    });

    it('Mastodon: a content warning shows in place of the text, which "Show more" opens', async () => {
      await compose(1366, ['Harbour on Mastodon'], 'The ending, in full');
      const mastodon = preview('mastodon');
      await mastodon.getByText('The ending, in full').waitFor();
      await page.getByText('Mastodon settings').click();
      await page.getByLabel('Spoiler text').fill('Film spoilers');
      await mastodon.getByTestId('content-warning').getByText('Film spoilers', { exact: true }).waitFor();
      const show = mastodon.getByRole('button', { name: 'Show more' });
      assert.equal(await show.getAttribute('aria-expanded'), 'false');
      assert.equal(await mastodon.getByText('The ending, in full').isVisible(), false, 'the text is hidden behind the warning');
      await show.click();
      await mastodon.getByText('The ending, in full').waitFor();
      assert.equal(await mastodon.getByRole('button', { name: 'Show less' }).getAttribute('aria-expanded'), 'true');
      assert.equal(describeViolations(await seriousA11yViolations(page)), '');
      await screenshot(page, store, 'preview-mastodon-warning-1366');
    });

    it("Instagram: a tall picture cut to 4:5, and the post in the profile's grid among the planned ones", async () => {
      const media = await api('POST', '/upload', formOf(await png('planned.png', 800, 800)));
      assert.equal(media.status, 201, JSON.stringify(media.body));
      for (const days of [2, 5]) {
        const created = await api('POST', '/posts', {
          type: 'schedule',
          date: new Date(Date.now() + days * DAY).toISOString(),
          shortLink: false,
          tags: [],
          posts: [
            {
              integration: { id: channel.instagram },
              value: [{ content: `Planned in ${days} days`, image: [{ id: media.body.id, path: media.body.path }] }],
              settings: { __type: 'instagram', post_type: 'post' },
            },
          ],
        });
        assert.equal(created.status, 201, JSON.stringify(created.body));
      }
      await compose(390, ['Harbour on Instagram'], 'Sunset from the terrace');
      await page.locator('#shared-0-files').setInputFiles([await png('tall.png', 900, 1600)]);
      const instagram = preview('instagram');
      await instagram.getByText('Instagram crops tall.png to fit its frame.').waitFor();
      const shape = await instagram.getByTestId('preview-cell').evaluate((c) => c.getBoundingClientRect().width / c.getBoundingClientRect().height);
      assert.ok(Math.abs(shape - 0.8) < 0.02, `the frame is 4:5 (${shape})`);
      const tiles = instagram.getByTestId('profile-grid').locator('li');
      await page.waitForFunction(
        (id) => document.querySelectorAll(`[data-testid="preview-${id}"] [data-testid="profile-grid"] li`).length === 3,
        channel.instagram,
      );
      // Planned an hour from now (the composer's default), this post comes before those in 2 and 5 days: last of the three.
      assert.deepEqual(await tiles.evaluateAll((li) => li.map((l) => l.getAttribute('data-current'))), ['no', 'no', 'yes']);
      await instagram.scrollIntoViewIfNeeded();
      await screenshot(page, store, 'preview-instagram-390');
    });

    it('draws each family its own way, readable by keyboard and screen readers, at 1366 and 390 px', async () => {
      const families: [string, string][] = [
        ['Harbour on Facebook', 'facebook'],
        ['Harbour on Threads', 'threads'],
        ['Harbour on YouTube', 'youtube'],
        ['Harbour on TikTok', 'tiktok'],
        ['Harbour on Reddit', 'reddit'],
        ['Harbour on Discord', 'message'],
        ['Harbour on DEV', 'blog'],
      ];
      for (const width of [1366, 390]) {
        await compose(
          width,
          families.map(([name]) => name),
          'Fresh **lemon scones** every morning at the harbour café, from seven until they are gone.',
        );
        await page.locator('#shared-0-files').setInputFiles([await png('scones.png', 1200, 800), await png('tall.png', 600, 1200)]);
        await page.waitForFunction(() => document.querySelectorAll('[data-testid="preview-cell"]').length >= 5);
        for (const [name, family] of families) {
          const network = name.replace('Harbour on ', '').toLowerCase().replace('dev', 'devto');
          assert.equal(await preview(network).getAttribute('data-family'), family, name);
        }
        // What each family draws: Threads' row of both pictures, YouTube's untitled video asked for, the article's excerpt without markup.
        assert.equal(await preview('threads').getByTestId('preview-cell').count(), 2);
        await preview('youtube').getByText('YouTube needs a video.').waitFor();
        await preview('devto').getByText('Fresh lemon scones every morning', { exact: false }).waitFor();
        assert.equal(await preview('devto').getByText('**').count(), 0);
        // The previews' column scrolls on its own on a wide screen: it takes the focus, so the keyboard scrolls it.
        await page.locator('.composer-preview').focus();
        assert.equal(await page.evaluate(() => document.activeElement?.classList.contains('composer-preview')), true);
        const violations = await seriousA11yViolations(page);
        assert.deepEqual(violations, [], describeViolations(violations));
        if (width === 390) assert.equal(await page.evaluate(() => document.documentElement.scrollWidth), 390, 'the page fits the phone');
        await screenshot(page, store, `preview-families-${width}`);
      }
    });

    it("the preview link's page shows a pin with its title and board, and no other setting", async () => {
      const media = await api('POST', '/upload', formOf(await png('scones.png', 600, 900)));
      const created = await api('POST', '/posts', {
        type: 'schedule',
        date: new Date(Date.now() + DAY).toISOString(),
        shortLink: false,
        tags: [],
        posts: [
          {
            integration: { id: channel.pinterest },
            value: [{ content: 'Our lemon scones, warm from the oven.', image: [{ id: media.body.id, path: media.body.path }] }],
            settings: { __type: 'pinterest', board: '987654', title: 'Lemon scones', link: 'https://harbour.example/scones' },
          },
        ],
      });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const link = await api('POST', `/posts/${created.body[0].postId}/preview-links`, {});
      assert.equal(link.status, 201, JSON.stringify(link.body));
      const view = await untypedCaller(herald.url)('GET', `/api/preview/${link.body.token}`);
      assert.deepEqual(view.body.post.settings, { board: '987654', title: 'Lemon scones' });

      await context?.close();
      context = await chromium.newContext({ viewport: { width: 390, height: 844 }, timezoneId: 'UTC', locale: 'en-GB' });
      page = await context.newPage();
      await page.goto(link.body.url);
      const pin = page.getByTestId(`preview-${channel.pinterest}`);
      await pin.getByText('Lemon scones', { exact: true }).waitFor();
      await pin.getByText('Saved to board 987654').waitFor();
      await pin.getByText('Our lemon scones, warm from the oven.').waitFor();
      assert.equal(await pin.locator('[data-flag]').count(), 0, 'nothing to flag: a 2:3 pin with its title');
      await screenshot(page, store, 'preview-link-pin-390');
    });
  });
}

function formOf(file: { name: string; mimeType: string; buffer: Buffer }): FormData {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(file.buffer)], { type: file.mimeType }), file.name);
  return form;
}
