/**
 * A busy month in a real browser against a real Herald: 1,000 posts on ten
 * channels. Each day shows a few posts, "+N more" and how many it holds, so the
 * page stays a month high; "+N more" opens the day's posts; a tile names its
 * channel and shows its initials on a colour of its own; the keyboard reaches
 * the first post in a few keys and moves between posts and days with arrows.
 * Screenshots at 1366 and 390 px; axe-core finds nothing serious.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { caller, startHerald, type Caller, type TestHerald } from '../helpers/herald.ts';
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
const CHANNELS = [
  'Harbour Theatre',
  'Box office',
  'Riverside Stage',
  'Summer Festival',
  'Youth Choir',
  'Jazz Nights',
  'City Museum',
  'Film Club',
  'Book Fair',
  'Food Market',
];
/** Full days: 50 posts on each of the first 20 days of the month (as bench/web.ts seeds them). */
const FULL_DAYS = 20;
const PER_DAY = 50;

/** YYYY-MM-DD of the month's day `n` (1-based), in UTC (the browser runs in UTC). */
function dayOfMonth(n: number): string {
  const now = new Date();
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), n)).toISOString().slice(0, 10);
}

for (const store of BROWSER_STORES) {
  describe(`a busy calendar in a browser (${store})`, { skip: storeSuite(store).skip || browser.skip }, () => {
    let herald: TestHerald;
    let chromium: Browser;
    let context: BrowserContext;
    let page: Page;
    let api: Caller;
    const channels: string[] = [];
    /** The month's posts by day (YYYY-MM-DD). */
    const postsOn = new Map<string, string[]>();
    /** Each post's channel name. */
    const channelOf = new Map<string, string>();

    before(async () => {
      ensureWebBuilt();
      herald = await startHerald(store, { env: { HERALD_POSTS_PER_HOUR: '1000' } });
      const web = new WebClient(herald.url);
      const accountId = (await web.signUp('owner@example.com')).body.account.id;
      api = caller(herald.api, (await herald.services.accounts.createKey(accountId, 'test')).key);
      for (const [i, name] of CHANNELS.entries()) {
        // One address per channel: a second channel with the same address is the same channel.
        const created = await api('POST', '/integrations', { identifier: 'webhook', name, credentials: { url: `http://127.0.0.1:9/hook/${i}` } });
        assert.equal(created.status, 201, JSON.stringify(created.body));
        channels.push(created.body.id);
      }
      // 1,000 drafts (the engine leaves them be): 50 a day at 09:00, each day's posts on the ten channels in turn.
      for (let day = 1; day <= FULL_DAYS; day++) {
        const posts = Array.from({ length: PER_DAY }, (_, i) => ({
          integration: { id: channels[i % channels.length] },
          value: [{ content: `Day ${day}, post ${i + 1}: rehearsal notes, tickets and times for the week ahead` }],
        }));
        const created = await api('POST', '/posts', { type: 'draft', date: `${dayOfMonth(day)}T09:00:00.000Z`, posts });
        assert.equal(created.status, 201, JSON.stringify(created.body));
      }
      // A quiet day: two posts, no "+N more", no count.
      const quiet = await api('POST', '/posts', {
        type: 'draft',
        date: `${dayOfMonth(FULL_DAYS + 2)}T10:00:00.000Z`,
        posts: [
          { integration: { id: channels[0] }, value: [{ content: 'Quiet day, first' }] },
          { integration: { id: channels[1] }, value: [{ content: 'Quiet day, second' }] },
        ],
      });
      assert.equal(quiet.status, 201, JSON.stringify(quiet.body));
      const rows = await herald.services.store.db
        .selectFrom('posts')
        .innerJoin('channels', 'channels.id', 'posts.channel_id')
        .select(['posts.id', 'posts.publish_at', 'channels.name'])
        .where('posts.account_id', '=', accountId)
        .execute();
      for (const row of rows) {
        const day = new Date(row.publish_at).toISOString().slice(0, 10);
        postsOn.set(day, [...(postsOn.get(day) ?? []), row.id]);
        channelOf.set(row.id, row.name);
      }
      chromium = await launchBrowser();
      context = await browserContext(chromium, herald.url, web, { bypassCSP: true });
      page = await context.newPage();
      page.setDefaultTimeout(10_000);
      await page.setViewportSize({ width: 1366, height: 900 });
    });
    after(() =>
      teardown(
        () => chromium?.close(),
        () => herald?.close(),
      ),
    );

    const cell = (day: string, on: Page = page) => on.locator(`[role="cell"][data-date="${day}"]`);
    const openMonth = async (on: Page = page) => {
      await on.goto(herald.url + '/');
      await cell(dayOfMonth(1), on).locator('[data-testid^="event-"]').first().waitFor();
    };
    /** The posts a day shows, top to bottom. */
    const shownOn = (day: string) =>
      cell(day)
        .locator('[data-testid^="event-"]')
        .evaluateAll((tiles) => tiles.map((tile) => tile.getAttribute('data-testid')!.slice('event-'.length)));

    it('draws a month of 1,000 posts as a month: a few posts a day, "+N more" and the day\'s count, in a small page', async () => {
      await openMonth();
      const first = dayOfMonth(1);
      assert.equal(await cell(first).locator('[data-testid^="event-"]').count(), 3, 'a full day shows three posts');
      const more = cell(first).getByRole('button', { name: /47 more/ });
      await more.waitFor();
      assert.equal(await more.getAttribute('title'), 'Show all posts of this day (47 more)', 'its hint counts the same posts');
      assert.equal((await cell(first).locator('.day-count').textContent())?.trim(), '50 posts', 'a full day says how many posts it holds');
      // FullCalendar hides the day's header (and the count in it) from screen readers: the day's cell is named with it.
      const counted = page.getByRole('cell', { name: /, 50 posts$/ });
      assert.equal(await counted.count(), FULL_DAYS, 'every full day is named with its count');
      assert.equal(await counted.first().getAttribute('data-date'), first);
      assert.match(await cell(first).ariaSnapshot(), /^- cell ".+, 50 posts"/);
      const quiet = dayOfMonth(FULL_DAYS + 2);
      assert.equal(await cell(quiet).locator('[data-testid^="event-"]').count(), 2);
      assert.equal(await cell(quiet).locator('.day-count').count(), 0, 'a day with room for its posts shows no count');
      assert.doesNotMatch(await cell(quiet).ariaSnapshot(), /posts"/, 'nor is it named with one');
      assert.equal(await cell(quiet).getByRole('button', { name: /more/ }).count(), 0);
      // Before: 16,000 elements and a 10,927 px page for the same month.
      const { elements, height } = await page.evaluate(() => ({
        elements: document.querySelectorAll('*').length,
        height: document.documentElement.scrollHeight,
      }));
      assert.ok(elements < 3000, `the page has ${elements} elements`);
      assert.ok(height < 1600, `the page is ${height} px high`);
      await screenshot(page, store, 'calendar-busy-1366');
      const violations = await seriousA11yViolations(page);
      assert.deepEqual(violations, [], describeViolations(violations));
    });

    it('fits a phone with 1,000 posts: no sideways scrolling, and the month view collapses its days too', async () => {
      const phone = await browserContext(chromium, herald.url, { jar: new Map((await context.cookies()).map((c) => [c.name, c.value])) }, { phone: true });
      const small = await phone.newPage();
      await small.goto(herald.url + '/');
      await small.getByText('Month', { exact: true }).click();
      await cell(dayOfMonth(1), small).locator('[data-testid^="event-"]').first().waitFor();
      const { width, height } = await small.evaluate(() => ({ width: document.documentElement.scrollWidth, height: document.documentElement.scrollHeight }));
      assert.ok(width <= 390, `the page is ${width} px wide on a 390 px phone`);
      assert.ok(height < 2000, `the page is ${height} px high on a phone`);
      await screenshot(small, store, 'calendar-busy-390');
      await phone.close();
    });

    it('opens the whole day from "+N more", with every post of it', async () => {
      await openMonth();
      const day = dayOfMonth(2);
      await cell(day)
        .getByRole('button', { name: /47 more/ })
        .click();
      const list = page.getByRole('dialog');
      await list.waitFor();
      assert.equal(await list.locator('[data-testid^="event-"]').count(), PER_DAY, "the day's 50 posts");
      for (const id of postsOn.get(day)!) await list.getByTestId(`event-${id}`).waitFor();
      await screenshot(page, store, 'calendar-busy-more');
      await page.keyboard.press('Escape');
      await list.waitFor({ state: 'detached' });
    });

    it("names each post's channel on its tile, beside its initials on the channel's own colour", async () => {
      await openMonth();
      // The quiet day's two posts, on two channels (posts at one time are shown by channel name).
      const [a, b] = await shownOn(dayOfMonth(FULL_DAYS + 2));
      assert.deepEqual([channelOf.get(a!), channelOf.get(b!)], ['Box office', 'Harbour Theatre']);
      const tile = page.getByTestId(`event-${a}`);
      assert.equal((await tile.locator('.event-channel').textContent())?.trim(), 'Box office');
      assert.equal((await tile.locator('.avatar-initials').textContent())?.trim(), 'BO');
      const other = page.getByTestId(`event-${b}`);
      assert.equal((await other.locator('.event-channel').textContent())?.trim(), 'Harbour Theatre');
      assert.equal((await other.locator('.avatar-initials').textContent())?.trim(), 'HT');
      const colour = (of: typeof tile) => of.locator('.avatar-initials').evaluate((el) => getComputedStyle(el).backgroundColor);
      assert.notEqual(await colour(tile), await colour(other), 'two channels, two colours');
      // The same channel keeps its colour on every tile.
      const [[one], [two]] = [await shownOn(dayOfMonth(1)), await shownOn(dayOfMonth(2))];
      assert.deepEqual([channelOf.get(one!), channelOf.get(two!)], ['Book Fair', 'Book Fair']);
      assert.equal(await colour(page.getByTestId(`event-${one}`)), await colour(page.getByTestId(`event-${two}`)));
    });

    it('reaches the first post in four keys, moves between posts and days with the arrows, and opens a post with Enter', async () => {
      await openMonth();
      const focused = () =>
        page.evaluate(
          () => document.activeElement?.querySelector('[data-testid^="event-"]')?.getAttribute('data-testid') ?? document.activeElement?.textContent,
        );
      await page.keyboard.press('Tab');
      assert.equal(await focused(), 'Skip to content');
      await page.keyboard.press('Enter');
      await page.keyboard.press('Tab');
      assert.equal(await focused(), 'Skip to the calendar');
      await page.keyboard.press('Enter');
      const [first, second, third] = await shownOn(dayOfMonth(1));
      const [nextDay] = await shownOn(dayOfMonth(2));
      const [weekLater] = await shownOn(dayOfMonth(8));
      assert.equal(await focused(), `event-${first}`, 'four keys to the first post');

      await page.keyboard.press('ArrowDown');
      assert.equal(await focused(), `event-${second}`);
      await page.keyboard.press('ArrowDown');
      assert.equal(await focused(), `event-${third}`);
      await page.keyboard.press('ArrowDown');
      assert.match(String(await focused()), /47 more/, 'then the day\'s "+N more"');
      await page.keyboard.press('ArrowUp');
      assert.equal(await focused(), `event-${third}`);
      await page.keyboard.press('ArrowRight');
      assert.equal(await focused(), `event-${nextDay}`, 'the next day');
      await page.keyboard.press('ArrowLeft');
      assert.equal(await focused(), `event-${first}`);
      // Down past a day's last post: the same weekday a week later.
      for (let i = 0; i < 4; i++) await page.keyboard.press('ArrowDown');
      assert.equal(await focused(), `event-${weekLater}`);

      // One tab stop for the grid: Tab leaves it, Shift+Tab comes back to the post last focused.
      const inGrid = () => page.evaluate(() => !!document.activeElement?.closest('#calendar-grid [role="table"]'));
      await page.keyboard.press('Tab');
      assert.equal(await inGrid(), false, 'Tab leaves the grid');
      await page.keyboard.press('Shift+Tab');
      assert.equal(await focused(), `event-${weekLater}`);

      await page.keyboard.press('Enter');
      await page.waitForURL(`${herald.url}/posts/${weekLater}`);
    });

    it('skips to the filters', async () => {
      await openMonth();
      await page.keyboard.press('Tab');
      await page.keyboard.press('Enter');
      await page.keyboard.press('Tab');
      await page.keyboard.press('Tab');
      assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Skip to the filters');
      await page.keyboard.press('Enter');
      assert.equal(await page.evaluate(() => document.activeElement?.id), 'calendar-filter-channel');
      await page.getByLabel('State').selectOption('QUEUE');
      await page.locator('[role="cell"] [data-testid^="event-"]').first().waitFor({ state: 'detached' });
      assert.equal(await page.locator('[role="cell"] [data-testid^="event-"]').count(), 0, 'the drafts are filtered out');
      assert.equal(await page.locator('.day-count').count(), 0, 'and so are their counts');
    });
  });
}
