/**
 * The web application's defects of issue 30 in a real browser: drafts that
 * leaked from one person to the next, reconnecting a Mastodon channel from
 * Needs attention, a drag that said nothing, messages that misled, pages wider
 * than a phone, and the smaller ones (titles, focus, labels, alt text).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { untypedCaller, PNG_1x1, startHerald, testAccount, uploadUntyped, type UntypedCaller, type TestHerald } from '../helpers/herald.ts';
import { storeSuite } from '../helpers/stores.ts';
import {
  BROWSER_STORES,
  browserContext,
  browserSuite,
  describeViolations,
  ensureWebBuilt,
  launchBrowser,
  type ContextOptions,
  seriousA11yViolations,
} from '../helpers/browser.ts';
import { WebClient } from '../accounts/web-client.ts';
import { connectOAuth } from '../helpers/connect.ts';
import { startMastodonFake, type MastodonFake } from '../fakes/mastodon.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../fakes/webhook-receiver.ts';
import { teardown } from '../helpers/teardown.ts';
import { mp4Bytes } from '../networks/support.ts';

const PASSWORD = 'correct horse battery';
const DAY = 86_400_000;
const browser = browserSuite();

for (const store of BROWSER_STORES) {
  describe(`web application defects (${store})`, { skip: storeSuite(store).skip || browser.skip }, () => {
    let herald: TestHerald;
    let chromium: Browser;
    let mastodon: MastodonFake;
    let receiver: WebhookReceiver;
    let owner: WebClient;
    let member: WebClient;
    let accountId = '';
    let key: UntypedCaller;
    let apiKeyValue = '';
    const channels = { webhook: '', mastodon: '' };

    /** A browser context signed in as `person` (their session cookies), or without any session. */
    const contextOf = (person?: WebClient, options: ContextOptions = {}) => browserContext(chromium, herald.url, person, options);
    const signedIn = async (person: WebClient, options: ContextOptions = {}): Promise<{ context: BrowserContext; page: Page }> => {
      const context = await contextOf(person, options);
      return { context, page: await context.newPage() };
    };

    before(async () => {
      ensureWebBuilt();
      mastodon = await startMastodonFake();
      receiver = await startWebhookReceiver();
      herald = await startHerald(store, { env: { HERALD_POSTS_PER_HOUR: '1000' } });
      owner = new WebClient(herald.url);
      const signed = await owner.signUp('owner@example.com', PASSWORD, { name: 'Olivia Owner' });
      accountId = signed.body.account.id;
      const invited = await owner.app('POST', '/invitations', { email: 'member@example.com', role: 'member' });
      member = new WebClient(herald.url);
      await member.signUp('member@example.com', PASSWORD, { name: 'Max Member', invitation: invited.body.token });
      const apiKey = (await herald.services.accounts.createKey(accountId, 'test')).key;
      key = untypedCaller(herald.api, apiKey);
      apiKeyValue = apiKey;
      const hook = await key('POST', '/integrations', { identifier: 'webhook', name: 'Web receiver', credentials: { url: receiver.url } });
      assert.equal(hook.status, 201, JSON.stringify(hook.body));
      channels.webhook = hook.body.id;
      const toot = await connectOAuth(herald, testAccount(herald.api, accountId, apiKey), 'mastodon', { query: { instance: mastodon.url } });
      channels.mastodon = toot.id;
      chromium = await launchBrowser();
    });
    after(() =>
      teardown(
        () => chromium?.close(),
        () => herald?.close(),
        () => mastodon?.close(),
        () => receiver?.close(),
      ),
    );

    describe('drafts belong to the person who wrote them', () => {
      const PRIVATE = 'Private: salary review notes for Max';

      async function leaveDraft(page: Page): Promise<void> {
        await page.goto(herald.url + '/compose');
        await page.getByLabel('Post', { exact: true }).fill(PRIVATE);
        // Saved as the person types.
        await page.waitForFunction((text) => Object.values(localStorage).some((v) => v.includes(text)), PRIVATE);
      }

      it('another person signed in on the same browser does not get them', async () => {
        const { context, page } = await signedIn(owner);
        await leaveDraft(page);
        // The member's session replaces the owner's (a lapsed session, or cookies cleared), without signing out.
        await context.clearCookies();
        await context.addCookies(
          [...member.jar].map(([name, value]) => ({ name, value, url: herald.url, httpOnly: name === 'herald_session', sameSite: 'Lax' as const })),
        );
        await page.goto(herald.url + '/compose');
        await page.getByRole('heading', { name: 'New post' }).waitFor();
        assert.equal(await page.getByLabel('Post', { exact: true }).inputValue(), '');
        assert.equal(await page.getByText('Your unsaved post was restored.').count(), 0);
        // The owner, back on this browser, finds their draft.
        await context.clearCookies();
        await context.addCookies(
          [...owner.jar].map(([name, value]) => ({ name, value, url: herald.url, httpOnly: name === 'herald_session', sameSite: 'Lax' as const })),
        );
        await page.goto(herald.url + '/compose');
        await page.getByText('Your unsaved post was restored.').waitFor();
        assert.equal(await page.getByLabel('Post', { exact: true }).inputValue(), PRIVATE);
        await context.close();
      });

      it('signing out removes them from the browser', async () => {
        const { context, page } = await signedIn(owner);
        await leaveDraft(page);
        await page.getByRole('button', { name: 'Sign out' }).click();
        await page.waitForURL(/\/signin$/);
        const left = await page.evaluate(() => Object.keys(localStorage).filter((k) => k.startsWith('herald.composer.')));
        assert.deepEqual(left, []);
        await context.close();
        // The owner's session ended with the sign-out: a new one for the tests that follow.
        assert.equal((await owner.logIn('owner@example.com', PASSWORD)).status, 200);
      });
    });

    describe('connecting and reconnecting channels', () => {
      it('reconnects a Mastodon channel from Needs attention through the instance form, as the Channels page does', async () => {
        await herald.services.store.db.updateTable('channels').set({ needs_reconnect: 1 }).where('id', '=', channels.mastodon).execute();
        const { context, page } = await signedIn(owner);
        await page.goto(herald.url + '/attention');
        await page.getByRole('heading', { name: 'Channels to reconnect' }).waitFor();
        await page.getByRole('button', { name: 'Reconnect', exact: true }).click();
        const dialog = page.getByRole('dialog', { name: 'Reconnect Herald Test' });
        await dialog.getByLabel('Instance').fill(mastodon.url);
        await dialog.getByRole('button', { name: 'Continue to Mastodon' }).click();
        // The instance sends the person back through Herald to the Channels page.
        await page.waitForURL(/\/channels\?connected=/);
        await page.getByText('Channel connected.').waitFor();
        const row = await herald.services.store.db
          .selectFrom('channels')
          .select('needs_reconnect')
          .where('id', '=', channels.mastodon)
          .executeTakeFirstOrThrow();
        assert.equal(row.needs_reconnect, 0);
        await context.close();
      });

      it("names the field in a sentence, once, and keeps one network's complaint off the next network's form", async () => {
        const { context, page } = await signedIn(owner);
        await page.goto(herald.url + '/channels');
        await page.getByRole('button', { name: 'Add a channel' }).click();
        await page.getByRole('button', { name: 'Bluesky', exact: true }).click();
        await page.getByRole('button', { name: 'Connect', exact: true }).click();
        await page.locator('#credentials-identifier-error').getByText('Identifier is required.', { exact: true }).waitFor();
        await page.locator('#credentials-password-error').getByText('Password is required.', { exact: true }).waitFor();
        const dialog = page.getByRole('dialog');
        const text = await dialog.innerText();
        assert.equal(text.match(/Identifier is required/g)?.length, 1, 'each problem is said beside its field only');
        assert.doesNotMatch(text, /Invalid input|received undefined/);
        await dialog.getByRole('button', { name: 'Cancel', exact: true }).click();
        await dialog.getByRole('button', { name: 'Webhook', exact: true }).click();
        await dialog.getByRole('heading', { name: 'Connect Webhook' }).waitFor();
        assert.equal(await dialog.locator('.field-error, .note-error').count(), 0, "Bluesky's complaints stay with Bluesky");
        await context.close();
      });
    });

    describe('dragging on the calendar', () => {
      // Two days ahead at 10:00 UTC, and the neighbouring day in the same week row (weeks start on Monday).
      const day = Math.floor(Date.now() / DAY) * DAY + 2 * DAY + 10 * 3_600_000;
      const delta = new Date(day).getUTCDay() === 0 ? -DAY : DAY;
      const utcDate = (ms: number) => new Date(ms).toISOString().slice(0, 10);
      const publishAt = async (id: string) =>
        (await herald.services.store.db.selectFrom('posts').select('publish_at').where('id', '=', id).executeTakeFirstOrThrow()).publish_at;

      async function schedule(content: string): Promise<string> {
        const created = await key('POST', '/posts', {
          type: 'schedule',
          date: new Date(day).toISOString(),
          posts: [{ integration: { id: channels.webhook }, value: [{ content }] }],
        });
        assert.equal(created.status, 201, JSON.stringify(created.body));
        return created.body[0].postId;
      }

      /** Drags a post to the neighbouring day, on a window too short to show the page's top while the post is in view. */
      async function dragToNextDay(page: Page, id: string): Promise<void> {
        const event = page.getByTestId(`event-${id}`);
        await event.scrollIntoViewIfNeeded();
        const from = (await event.boundingBox())!;
        const to = (await page
          .locator(`[data-date="${utcDate(day + delta)}"]`)
          .first()
          .boundingBox())!;
        await page.mouse.move(from.x + from.width / 2, from.y + from.height / 2);
        await page.mouse.down();
        await page.mouse.move(from.x + from.width / 2 + 5, from.y + from.height / 2 + 5, { steps: 3 });
        await page.mouse.move(to.x + to.width / 2, from.y + from.height / 2, { steps: 12 });
        await page.mouse.up();
      }

      /** The message is in the window, where the person looks. */
      async function inView(page: Page, text: RegExp): Promise<void> {
        const message = page.getByTestId('announcer').getByText(text);
        await message.waitFor();
        const box = (await message.boundingBox())!;
        const height = page.viewportSize()!.height;
        assert.ok(box.y >= 0 && box.y + box.height <= height, `the message is at ${box.y} px in a ${height} px window`);
      }

      it('says why a published post does not move, and announces a move where the person looks', async () => {
        const published = await schedule('Went out already');
        await herald.services.store.db.updateTable('posts').set({ state: 'PUBLISHED' }).where('id', '=', published).execute();
        const queued = await schedule('Still to go');
        const { context, page } = await signedIn(owner);
        await page.setViewportSize({ width: 1280, height: 520 });
        await page.goto(herald.url + '/');
        await page.getByRole('heading', { name: 'Calendar' }).waitFor();
        if (utcDate(day).slice(0, 7) !== utcDate(Date.now()).slice(0, 7)) await page.getByRole('button', { name: 'Next' }).click();
        await page.getByTestId(`event-${queued}`).waitFor();
        // The live region is in the page before anything is said, so screen readers announce what appears in it.
        assert.equal(await page.getByTestId('announcer').getAttribute('aria-live'), 'polite');

        await dragToNextDay(page, published);
        await inView(page, /a published post stays where it went out/);
        assert.equal(await publishAt(published), day);

        await dragToNextDay(page, queued);
        await inView(page, /^Moved to/);
        assert.equal(await publishAt(queued), day + delta);
        await context.close();
      });
    });

    describe('messages that say what happened', () => {
      const later = new Date(Date.now() + 3 * DAY).toISOString().slice(0, 10);

      it('confirms saving on several channels, and an edit as an edit', async () => {
        const { context, page } = await signedIn(owner);
        await page.goto(herald.url + '/compose');
        await page.getByRole('checkbox', { name: /Web receiver/ }).check();
        await page.getByRole('checkbox', { name: /Herald Test/ }).check();
        await page.getByLabel('Post', { exact: true }).fill('Two channels, one confirmation');
        await page.getByLabel('Date and time', { exact: true }).fill(`${later}T09:00`);
        await page.getByRole('button', { name: 'Schedule', exact: true }).click();
        await page.waitForURL(herald.url + '/');
        await page.getByTestId('announcer').getByText('2 posts saved, one per channel.').waitFor();

        const created = await key('POST', '/posts', {
          type: 'schedule',
          date: `${later}T11:00:00.000Z`,
          posts: [{ integration: { id: channels.webhook }, value: [{ content: 'To be edited' }] }],
        });
        const id = created.body[0].postId;
        await page.goto(`${herald.url}/posts/${id}/edit`);
        await page.getByLabel('Post', { exact: true }).fill('Edited, not created');
        await page.getByRole('button', { name: 'Save changes' }).click();
        await page.waitForURL(/\/posts\/[^/]+$/);
        await page.getByText('Changes saved.').waitFor();
        assert.equal(await page.getByText(/post\(s\) created/).count(), 0, 'an edit does not say a post was created');
        await context.close();
      });

      it('says the media library could not be loaded instead of calling it empty', async () => {
        const { context, page } = await signedIn(owner);
        // Herald out of reach for the library's list (the connection fails), as on a dropped network.
        await page.route(/\/api\/app\/public\/v1\/media\?/, (route) => route.abort('connectionfailed'));
        await page.goto(herald.url + '/media');
        await page.getByText('The media library could not be loaded').waitFor();
        assert.equal(await page.getByText('No files yet').count(), 0);
        await context.close();
      });

      it('does not call a key "shown this once" beside Reveal, and shows what a webhook test did', async () => {
        const { context, page } = await signedIn(owner);
        await page.goto(herald.url + '/settings/developers');
        await page.getByLabel('Name').fill('nightly export');
        await page.getByRole('button', { name: 'Create a key' }).click();
        await page.getByTestId('secret').waitFor();
        await page.getByText('Reveal shows it again later').waitFor();
        assert.equal(await page.getByText(/shown this once/i).count(), 0);

        const hook = await key('POST', '/webhooks', { url: receiver.url, events: ['post.published'] });
        assert.equal(hook.status, 201, JSON.stringify(hook.body));
        await page.goto(herald.url + '/settings/webhooks');
        const card = page.getByTestId(`webhook-${hook.body.id}`);
        await card.getByRole('button', { name: 'Send a test' }).click();
        await card.getByText('Test event queued').waitFor();
        await card.getByTestId('delivery').first().waitFor();
        await context.close();
      });
    });

    describe('on a 390 px phone', () => {
      const LONG = 'Northern harbour district community association: announcements, events and Harbourfrontcommunityannouncementsweekly';

      const tooWide: string[] = [];
      /** Notes a page wider than the phone's screen (all are listed at the end). */
      async function fitsPhone(page: Page, what: string): Promise<void> {
        const width = await page.evaluate(() => document.documentElement.scrollWidth);
        if (width > 390) tooWide.push(`${what} is ${width} px wide`);
      }

      it('fits every page on the screen with long names and errors shown', async () => {
        const long = await key('POST', '/integrations', { identifier: 'webhook', name: LONG, credentials: { url: receiver.url } });
        assert.equal(long.status, 201, JSON.stringify(long.body));
        const post = await key('POST', '/posts', {
          type: 'schedule',
          date: new Date(Date.now() + DAY).toISOString(),
          posts: [{ integration: { id: long.body.id }, value: [{ content: `${LONG} ${LONG}` }] }],
        });
        const postId = post.body[0].postId;
        const { context, page } = await signedIn(owner, { phone: true });
        const pages = [
          '/',
          '/attention',
          '/channels',
          '/media',
          '/series',
          '/feeds',
          '/import',
          `/posts/${postId}`,
          ...['developers', 'apps', 'webhooks', 'team', 'customers', 'templates', 'notifications', 'preferences'].map((s) => `/settings/${s}`),
        ];
        for (const path of pages) {
          await page.goto(herald.url + path);
          await page.locator('h1').waitFor();
          await page.waitForLoadState('networkidle');
          await fitsPhone(page, path);
        }
        // The calendar's channel filter, opened on the long name.
        await page.goto(herald.url + '/');
        await page.locator('.filters select').first().selectOption(long.body.id);
        await fitsPhone(page, 'the calendar filtered by a long channel name');
        // The composer with the API's errors shown beside its fields.
        await page.goto(herald.url + '/compose');
        await page.getByRole('checkbox', { name: /Northern harbour/ }).check();
        await page.getByRole('button', { name: 'Schedule', exact: true }).click();
        await page.locator('.field-error').first().waitFor();
        await fitsPhone(page, 'the composer with errors');
        // Said once, beside the text it concerns, naming it (not again under the channels and in the summary).
        const said = (await page.locator('form.composer').innerText()).match(/is empty and there is no media/g) ?? [];
        assert.equal(said.length, 1, 'the problem is said once');
        await page
          .locator('#shared-0-error')
          .getByText(/^Post is empty and there is no media/)
          .waitFor();
        await context.close();
        assert.deepEqual(tooWide, [], 'on a 390 px phone');
      });

      it('opens the navigation from a menu button, by keyboard, and shows the current page whole', async () => {
        const { context, page } = await signedIn(owner, { phone: true });
        await page.goto(herald.url + '/media');
        await page.getByRole('heading', { name: 'Media library' }).waitFor();
        const menu = page.getByRole('button', { name: 'Menu' });
        const nav = page.getByRole('navigation', { name: 'Main navigation' });
        assert.equal(await menu.getAttribute('aria-expanded'), 'false');
        assert.equal(await nav.isVisible(), false, 'the menu starts closed');
        await menu.focus();
        await page.keyboard.press('Enter');
        assert.equal(await menu.getAttribute('aria-expanded'), 'true');
        // The current page's item is shown whole, inside the screen.
        const current = nav.getByRole('link', { name: 'Media' });
        assert.equal(await current.getAttribute('aria-current'), 'page');
        const box = (await current.boundingBox())!;
        assert.ok(box.x >= 0 && box.x + box.width <= 390, `the current item spans ${box.x}–${box.x + box.width} px`);
        // Escape closes it and gives focus back to the button.
        await page.keyboard.press('Tab');
        await page.keyboard.press('Escape');
        assert.equal(await nav.isVisible(), false);
        assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Menu');
        // Picking a page goes there and closes the menu.
        await page.keyboard.press('Enter');
        await nav.getByRole('link', { name: 'Channels' }).click();
        await page.waitForURL(herald.url + '/channels');
        assert.equal(await nav.isVisible(), false);
        await context.close();
      });
    });

    describe('smaller things', () => {
      it('titles each page by its heading and moves focus to the heading on navigation', async () => {
        const { context, page } = await signedIn(owner);
        await page.goto(herald.url + '/');
        await page.getByRole('heading', { name: 'Calendar' }).waitFor();
        await page.waitForFunction(() => document.title === 'Calendar · Herald');
        await page.getByRole('navigation', { name: 'Main navigation' }).getByRole('link', { name: 'Channels' }).click();
        await page.waitForFunction(() => document.title === 'Channels · Herald');
        await page.waitForFunction(() => document.activeElement?.tagName === 'H1' && document.activeElement.textContent === 'Channels');
        await page.getByRole('navigation', { name: 'Main navigation' }).getByRole('link', { name: 'Import & export' }).click();
        await page.waitForFunction(() => document.title === 'Import and export · Herald');
        await page.waitForFunction(() => document.activeElement?.tagName === 'H1');
        await context.close();
      });

      it('gives two uploads of the same file name a progress bar each', async () => {
        const { context, page } = await signedIn(owner);
        await page.goto(herald.url + '/media');
        await page.getByRole('heading', { name: 'Media library' }).waitFor();
        // The uploads are held on their way until both bars were counted.
        let release = () => {};
        const held = new Promise<void>((resolve) => (release = resolve));
        await page.route(/\/api\/app\/public\/v1\/upload$/, async (route) => {
          await held;
          await route.continue();
        });
        await page.locator('input[type="file"]').setInputFiles([
          { name: 'poster.png', mimeType: 'image/png', buffer: PNG_1x1 },
          { name: 'poster.png', mimeType: 'image/png', buffer: PNG_1x1 },
        ]);
        await page
          .getByText(/^Uploading poster\.png/)
          .first()
          .waitFor();
        assert.equal(await page.getByText(/^Uploading poster\.png/).count(), 2);
        release();
        await page
          .getByText(/^Uploading poster\.png/)
          .first()
          .waitFor({ state: 'detached' });
        await context.close();
      });

      it('names a video in the library picker by what it shows (axe finds nothing serious)', async () => {
        const account = testAccount(herald.api, accountId, apiKeyValue);
        const clip = await uploadUntyped(account, herald.api, mp4Bytes(4096), 'harbour-clip.mp4');
        assert.equal(clip.status, 201, JSON.stringify(clip.body));
        const { context, page } = await signedIn(owner, { bypassCSP: true });
        await page.goto(herald.url + '/compose');
        await page.getByRole('button', { name: 'Add from library' }).click();
        const pick = page.getByRole('dialog').getByRole('button', { name: /harbour-clip\.mp4/ });
        await pick.waitFor();
        const found = await seriousA11yViolations(page);
        assert.deepEqual(found, [], describeViolations(found));
        await context.close();
      });

      it('keeps alt text for a file in the media library', async () => {
        const account = testAccount(herald.api, accountId, apiKeyValue);
        const image = await uploadUntyped(account, herald.api, PNG_1x1, 'lighthouse.png');
        assert.equal(image.status, 201, JSON.stringify(image.body));
        const { context, page } = await signedIn(owner);
        await page.goto(herald.url + '/media');
        const card = page.getByTestId(`media-${image.body.id}`);
        await card.getByLabel('Alt text (describe the image)').fill('The lighthouse at dawn');
        await card.getByRole('button', { name: 'Save' }).click();
        await card.getByText('Saved.').waitFor();
        const row = await herald.services.store.db.selectFrom('media').select('alt').where('id', '=', image.body.id).executeTakeFirstOrThrow();
        assert.equal(row.alt, 'The lighthouse at dawn');
        await page.reload();
        assert.equal(await page.getByTestId(`media-${image.body.id}`).getByLabel('Alt text (describe the image)').inputValue(), 'The lighthouse at dawn');
        await context.close();
      });

      it('says on the import page what each column takes, instead of sending the person to the README', async () => {
        const { context, page } = await signedIn(owner);
        await page.goto(herald.url + '/import');
        await page.getByRole('heading', { name: 'Import posts from a CSV file' }).waitFor();
        assert.equal(await page.getByText(/README/).count(), 0);
        await page.getByText('Channel names or ids, several separated by | : one post per channel.').waitFor();
        await page.getByText('On a reply: minutes after the previous item.').waitFor();
        await context.close();
      });
    });
  });
}
