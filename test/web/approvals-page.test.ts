/**
 * Approvals in a real browser: a member composes a post in an account whose
 * members' posts need approval and sees it marked "Awaiting approval" on the
 * calendar; the owner approves it on the post page and makes a preview link;
 * a visitor without an account opens the link in a fresh browser, comments and
 * approves, and the team sees both on the post.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { caller, startHerald, type TestHerald } from '../helpers/herald.ts';
import { storeSuite } from '../helpers/stores.ts';
import {
  BROWSER_STORES,
  browserContext,
  type ContextOptions,
  browserSuite,
  describeViolations,
  ensureWebBuilt,
  launchBrowser,
  screenshot,
  seriousA11yViolations,
} from '../helpers/browser.ts';
import { WebClient } from '../accounts/web-client.ts';
import { teardown } from '../helpers/teardown.ts';

const PASSWORD = 'correct horse battery';
const DAY = 86_400_000;
const utcDate = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const browser = browserSuite();

for (const store of BROWSER_STORES) {
  describe(`approvals in a browser (${store})`, { skip: storeSuite(store).skip || browser.skip }, () => {
    let herald: TestHerald;
    let chromium: Browser;
    let owner: WebClient;
    let member: WebClient;
    let postId = '';
    let previewUrl = '';
    const shot = (page: Page, name: string) => screenshot(page, `approvals-${store}`, name);
    const postRow = (id: string) => herald.services.store.db.selectFrom('posts').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

    /** A browser context signed in as `person` (their session cookies), or without any session. */
    const contextOf = (person?: WebClient, options: ContextOptions = {}) => browserContext(chromium, herald.url, person, options);

    async function fitsPhone(page: Page, what: string): Promise<void> {
      const width = await page.evaluate(() => document.documentElement.scrollWidth);
      assert.ok(width <= 390, `${what} is ${width} px wide on a 390 px phone`);
    }

    async function noSeriousProblems(page: Page, what: string): Promise<void> {
      const found = await seriousA11yViolations(page);
      assert.deepEqual(found, [], `${what}:\n${describeViolations(found)}`);
    }

    before(async () => {
      ensureWebBuilt();
      herald = await startHerald(store);
      owner = new WebClient(herald.url);
      await owner.signUp('owner@example.com', PASSWORD, { name: 'Olivia Owner' });
      const invited = await owner.app('POST', '/invitations', { email: 'member@example.com', role: 'member' });
      member = new WebClient(herald.url);
      const joined = await member.signUp('member@example.com', PASSWORD, { name: 'Max Member', invitation: invited.body.token });
      const key = caller(herald.api, (await herald.services.accounts.createKey(joined.body.account.id, 'test')).key);
      const channel = await key('POST', '/integrations', { identifier: 'webhook', name: 'Web receiver', credentials: { url: 'http://127.0.0.1:9/hook' } });
      assert.equal(channel.status, 201, JSON.stringify(channel.body));
      assert.equal((await owner.app('PUT', '/public/v1/approval-settings', { membersNeedApproval: true })).status, 200);
      chromium = await launchBrowser();
    });
    after(() =>
      teardown(
        () => chromium?.close(),
        () => herald?.close(),
      ),
    );

    it("a member's post shows as awaiting approval on the calendar", async () => {
      const context = await contextOf(member);
      const page = await context.newPage();
      await page.goto(herald.url + '/compose');
      await page.getByRole('checkbox', { name: /Web receiver/ }).check();
      await page.getByLabel('Post', { exact: true }).fill('Spring menu: wild garlic soup');
      const when = Date.now() + DAY;
      await page.getByLabel('Date and time', { exact: true }).fill(`${utcDate(when)}T10:00`);
      await page.getByRole('button', { name: 'Schedule', exact: true }).click();
      // One post made: the composer opens it, where the member reads that it waits.
      await page.waitForURL(/\/posts\/[^/]+$/);
      const row = await herald.services.store.db
        .selectFrom('posts')
        .selectAll()
        .where('content', '=', 'Spring menu: wild garlic soup')
        .executeTakeFirstOrThrow();
      postId = row.id;
      assert.deepEqual([row.state, row.approval], ['DRAFT', 'pending']);
      await page.getByTestId('approval').getByText('Max Member asked for approval. It goes out only once an owner or admin approves it.').waitFor();
      assert.equal(await page.getByRole('button', { name: 'Approve', exact: true }).count(), 0, 'a member is not offered to approve');
      await shot(page, 'post-member-pending');

      await page.goto(herald.url + '/');
      if (utcDate(when).slice(0, 7) !== utcDate(Date.now()).slice(0, 7)) await page.getByRole('button', { name: 'Next' }).click();
      const event = page.locator(`[data-testid="event-${postId}"][data-approval="pending"]`);
      await event.getByText('Awaiting approval').waitFor();
      await shot(page, 'calendar-pending');
      await context.close();

      // On a phone the calendar is a week's list (weeks start on Monday): tomorrow is next week when today is Sunday.
      const phone = await (await contextOf(member, { phone: true })).newPage();
      await phone.goto(herald.url + '/');
      if (new Date().getUTCDay() === 0) await phone.getByRole('button', { name: 'Next' }).click();
      await phone.locator(`[data-testid="event-${postId}"]`).getByText('Awaiting approval').waitFor();
      await fitsPhone(phone, 'the calendar');
      await shot(phone, 'calendar-pending-phone');
      await phone.context().close();
    });

    it('the owner approves it on the post page and makes a preview link', async () => {
      const context = await contextOf(owner);
      const page = await context.newPage();
      await page.goto(`${herald.url}/posts/${postId}`);
      const panel = page.getByTestId('approval');
      await panel.getByText('Max Member asked for approval. It goes out only once an owner or admin approves it.').waitFor();
      await panel.getByText('This post waits for your decision.').waitFor();
      await shot(page, 'post-pending');
      await panel.getByLabel('Comment (needed to return the post)').fill('Lovely, go ahead');
      await panel.getByRole('button', { name: 'Approve', exact: true }).click();
      await panel.getByText(/^Approved: scheduled for/).waitFor();
      await panel.getByText('Olivia Owner approved').waitFor();
      const row = await postRow(postId);
      assert.deepEqual([row.state, row.approval], ['QUEUE', 'approved']);

      await page.getByLabel('The link works for').selectOption({ label: '7 days' });
      await page.getByRole('button', { name: 'Create a preview link' }).click();
      previewUrl = ((await page.getByTestId('secret').textContent()) ?? '').trim();
      assert.match(previewUrl, new RegExp(`^${herald.url}/p/hp_[A-Za-z0-9_-]{43}$`));
      await page.getByText(/^Active, until/).waitFor();
      await shot(page, 'post-approved');
      await page.setViewportSize({ width: 390, height: 844 });
      await fitsPhone(page, 'the post page');
      await shot(page, 'post-approved-phone');
      await context.close();
    });

    it('a visitor without an account sees the post through the link, comments and approves; the team sees both', async () => {
      const context = await contextOf();
      const page = await context.newPage();
      await page.goto(previewUrl);
      await page.getByRole('heading', { name: 'How this post will look on Webhook' }).waitFor();
      await page
        .getByTestId(/^preview-/)
        .getByText('Spring menu: wild garlic soup')
        .waitFor();
      assert.deepEqual(await context.cookies(), [], 'no session: the visitor has no account');
      await page.getByLabel('Your name').fill('Carla Client');
      await page.getByLabel('Comment').fill('Could you add the price?');
      await page.getByRole('button', { name: 'Send the comment' }).click();
      await page.getByText('Thank you: your comment was sent to the team.').waitFor();
      await page.getByText('Carla Client commented').waitFor();
      await page.getByRole('button', { name: 'Approve', exact: true }).click();
      await page.getByText('Thank you: the team knows you approve.').waitFor();
      await page.getByText('Carla Client approved').waitFor();
      await shot(page, 'preview-link');
      await page.setViewportSize({ width: 390, height: 844 });
      await fitsPhone(page, 'the preview page');
      await shot(page, 'preview-link-phone');
      await context.close();

      const comments = (await owner.app('GET', `/public/v1/posts/${postId}/comments`)).body.comments;
      assert.deepEqual(
        comments.map((c: { content: string; by: { name: string }; viaPreviewLink: boolean }) => [c.content, c.by.name, c.viaPreviewLink]),
        [['Could you add the price?', 'Carla Client', true]],
      );
      const history = (await owner.app('GET', `/public/v1/posts/${postId}/approval`)).body.history;
      assert.deepEqual(
        history.map((h: { action: string }) => h.action),
        ['requested', 'approved', 'client_approved'],
      );
    });

    it('has no serious or critical accessibility problem on the post page and the preview page (axe-core)', async () => {
      // axe is injected as a script: these contexts let it past the pages' Content-Security-Policy.
      const team = await contextOf(owner, { bypassCSP: true });
      const page = await team.newPage();
      await page.goto(`${herald.url}/posts/${postId}`);
      await page.getByText('Could you add the price?').waitFor();
      await noSeriousProblems(page, 'the post page');
      await team.close();
      const visitor = await contextOf(undefined, { bypassCSP: true });
      const preview = await visitor.newPage();
      await preview.goto(previewUrl);
      await preview.getByText('Carla Client approved').waitFor();
      await noSeriousProblems(preview, 'the preview page');
      await visitor.close();
    });
  });
}
