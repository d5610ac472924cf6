/**
 * What the pages say about the engine's and the team's state (issue 30): a post
 * the engine retries after 5xx answers shows "retrying", its attempt, next try
 * and last reason on the calendar, the post page and Needs attention; a failure's
 * notification names the post and the channel and leads to the post, and a new
 * member does not inherit what happened before they joined; an open
 * invitation's link can be copied again after a reload and fills in the
 * invitee's address; a channel added from Paris starts in Paris's zone. Real
 * Herald with its engine, a real receiving server, a real browser.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { untypedCaller, eventually, startHerald, type UntypedCaller, type TestHerald } from '../helpers/herald.ts';
import { storeSuite } from '../helpers/stores.ts';
import { BROWSER_STORES, browserContext, browserSuite, ensureWebBuilt, launchBrowser } from '../helpers/browser.ts';
import { WebClient } from '../accounts/web-client.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../fakes/webhook-receiver.ts';
import { teardown } from '../helpers/teardown.ts';

const browser = browserSuite();

for (const store of BROWSER_STORES) {
  describe(`the pages tell what the server knows (${store})`, { skip: storeSuite(store).skip || browser.skip }, () => {
    let herald: TestHerald;
    let receiver: WebhookReceiver;
    let chromium: Browser;
    let context: BrowserContext;
    let page: Page;
    let web: WebClient;
    let api: UntypedCaller;

    before(async () => {
      ensureWebBuilt();
      receiver = await startWebhookReceiver();
      herald = await startHerald(store, { engine: { pollMs: 200 } });
      web = new WebClient(herald.url);
      const accountId = (await web.signUp('owner@example.com')).body.account.id;
      api = untypedCaller(herald.api, (await herald.services.accounts.createKey(accountId, 'test')).key);
      chromium = await launchBrowser();
      context = await browserContext(chromium, herald.url, web);
      page = await context.newPage();
    });
    after(() =>
      teardown(
        () => chromium?.close(),
        () => herald?.close(),
        () => receiver?.close(),
      ),
    );

    it('shows a post the engine retries after 5xx answers as retrying, with its attempt, next try and reason', async () => {
      // The receiving server is down for now: every delivery answers 503.
      receiver.respond(() => ({ status: 503, body: { error: 'upstream is restarting' } }));
      const channel = await api('POST', '/integrations', { identifier: 'webhook', name: 'Team chat', credentials: { url: receiver.url } });
      assert.equal(channel.status, 201, JSON.stringify(channel.body));
      const created = await api('POST', '/posts', {
        type: 'now',
        date: new Date().toISOString(),
        shortLink: false,
        tags: [],
        posts: [{ integration: { id: channel.body.id }, value: [{ content: 'Release notes for 4.2 are out' }] }],
      });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const postId = created.body[0].postId;

      const retrying = await eventually(
        async () => {
          const answer = await web.app('GET', '/posts/retrying');
          return answer.body.find((r: { id: string; attempt: number; nextTryAt: string | null }) => r.id === postId && r.attempt >= 1 && r.nextTryAt);
        },
        10_000,
        'the post listed as retrying',
      );
      assert.match(retrying.lastReason, /503/);
      assert.equal(retrying.channel.name, 'Team chat');
      assert.equal(retrying.excerpt, 'Release notes for 4.2 are out');
      const listed = await api('GET', `/posts/${postId}`);
      assert.equal(listed.body.state, 'QUEUE', 'the public API is unchanged: still queued');

      await page.goto(`${herald.url}/posts/${postId}`);
      await page
        .locator('.page-head')
        .getByText(/^Retrying \(attempt \d+\)$/)
        .waitFor();
      const detail = await page.getByTestId('retrying').textContent();
      assert.match(detail ?? '', /^Retrying: attempt \d+ failed, (next try .+|trying again now)\. Last reason: .*503/);

      await page.goto(`${herald.url}/attention`);
      const card = page.getByTestId(`retrying-${postId}`);
      await card.waitFor();
      assert.match((await card.textContent()) ?? '', /Retrying \(attempt \d+\).*Team chat.*Release notes for 4\.2 are out.*Last reason: .*503/s);
      assert.equal(await page.getByText('Nothing needs you').count(), 0);

      await page.goto(`${herald.url}/`);
      const tile = page.getByTestId(`event-${postId}`);
      await tile.waitFor();
      await page.waitForFunction((id) => document.querySelector(`[data-testid="event-${id}"]`)?.getAttribute('data-retrying'), postId);
      // One word on the tile; the attempt, next try and reason are in its text, read out and shown on hover or focus.
      assert.match((await tile.textContent()) ?? '', /Retrying.*Retrying: attempt \d+ failed, .*Last reason: .*503/);
      assert.doesNotMatch((await tile.textContent()) ?? '', /Queued/);

      // The server comes back: the next try goes through and the retrying marks leave.
      receiver.respond(() => ({ status: 200 }));
      await eventually(async () => ((await api('GET', `/posts/${postId}`)).body.state === 'PUBLISHED' ? true : undefined), 20_000, 'the post published');
      assert.deepEqual((await web.app('GET', '/posts/retrying')).body, []);
    });

    it('names the failed post and its channel in the notification, leads to the post, and keeps old ones from a new member', async () => {
      // The receiver refuses for good: the post fails at once.
      receiver.respond(() => ({ status: 400, body: { error: 'no such room' } }));
      const channel = await api('POST', '/integrations', { identifier: 'webhook', name: 'Announcements', credentials: { url: receiver.url } });
      assert.equal(channel.status, 201, JSON.stringify(channel.body));
      const created = await api('POST', '/posts', {
        type: 'now',
        date: new Date().toISOString(),
        shortLink: false,
        tags: [],
        posts: [{ integration: { id: channel.body.id }, value: [{ content: 'Office closed on Friday' }] }],
      });
      const postId = created.body[0].postId;
      await eventually(async () => ((await api('GET', `/posts/${postId}`)).body.state === 'ERROR' ? true : undefined), 10_000, 'the post failed');

      await page.goto(`${herald.url}/settings/notifications`);
      const told = page.getByTestId('notification').filter({ hasText: 'Office closed on Friday' });
      await told.waitFor();
      assert.match((await told.textContent()) ?? '', /The post on Announcements “Office closed on Friday” could not be published: .*400/);
      await told.getByRole('link').click();
      await page.waitForURL(`${herald.url}/posts/${postId}`);

      // A member who joins now starts with an empty list; what happens next reaches them.
      const invited = await web.app('POST', '/invitations', { email: 'new@example.com', role: 'member' });
      assert.equal(invited.status, 201, JSON.stringify(invited.body));
      const member = new WebClient(herald.url);
      assert.equal((await member.signUp('new@example.com', 'correct horse battery', { invitation: invited.body.token })).status, 201);
      assert.deepEqual((await member.app('GET', '/public/v1/notifications')).body.notifications, []);
      assert.ok((await web.app('GET', '/public/v1/notifications')).body.notifications.length > 0, 'the owner still has theirs');
      assert.ok((await api('GET', '/notifications')).body.notifications.length > 0, 'an API key sees the account');
      const later = await api('POST', '/posts', {
        type: 'now',
        date: new Date().toISOString(),
        shortLink: false,
        tags: [],
        posts: [{ integration: { id: channel.body.id }, value: [{ content: 'Second try' }] }],
      });
      const laterId = later.body[0].postId;
      const seen = await eventually(
        async () => {
          const list = (await member.app('GET', '/public/v1/notifications')).body.notifications;
          return list.length > 0 ? list : undefined;
        },
        10_000,
        "the member's first notification",
      );
      assert.match(seen[0].content, /Second try/);
      assert.equal(seen[0].link, `/api/public/v1/posts/${laterId}`);
    });

    it('starts a channel added from Paris in Europe/Paris and names the zone in dates, not an offset', async () => {
      const paris = await chromium.newContext({ viewport: { width: 1280, height: 900 }, timezoneId: 'Europe/Paris', locale: 'en-US' });
      await paris.addCookies(
        [...web.jar].map(([name, value]) => ({ name, value, url: herald.url, httpOnly: name === 'herald_session', sameSite: 'Lax' as const })),
      );
      try {
        const tab = await paris.newPage();
        await tab.goto(`${herald.url}/channels`);
        await tab.getByRole('button', { name: 'Add a channel' }).click();
        await tab.getByRole('button', { name: 'Webhook', exact: true }).click();
        await tab.getByLabel('Name').fill('Paris desk');
        await tab.getByLabel('Url').fill(receiver.url);
        await tab.getByRole('button', { name: 'Connect', exact: true }).click();
        const channel = await eventually(
          async () => {
            const list = (await api('GET', '/integrations')).body as { name: string; id: string; timeZone: string }[];
            return list.find((c) => c.name === 'Paris desk');
          },
          10_000,
          'the channel added',
        );
        assert.equal(channel.timeZone, 'Europe/Paris');

        receiver.respond(() => ({ status: 200 }));
        const draft = await api('POST', '/posts', {
          type: 'draft',
          date: '2026-12-04T08:00:00.000Z',
          shortLink: false,
          tags: [],
          posts: [{ integration: { id: channel.id }, value: [{ content: 'Friday at nine' }] }],
        });
        await tab.goto(`${herald.url}/posts/${draft.body[0].postId}`);
        const when = (await tab.getByText(/^Scheduled for /).textContent()) ?? '';
        assert.match(when, /9:00 AM Europe\/Paris$/);
        assert.doesNotMatch(when, /GMT/);
      } finally {
        await paris.close();
      }
    });

    it("lets the owner copy an open invitation's link again after a reload, and fills the invitee's address in", async () => {
      const invited = await web.app('POST', '/invitations', { email: 'Writer@Example.com', role: 'member' });
      assert.equal(invited.status, 201, JSON.stringify(invited.body));
      // Kept sealed: the token is nowhere in the store in clear.
      const row = await herald.services.store.db.selectFrom('invitations').selectAll().where('id', '=', invited.body.id).executeTakeFirstOrThrow();
      assert.ok(!JSON.stringify(row).includes(invited.body.token), 'the token is not stored in clear');

      await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: herald.url });
      await page.goto(`${herald.url}/settings/team`);
      await page.reload();
      await page.getByRole('button', { name: 'Copy the invitation link for writer@example.com' }).click();
      const copied = await page.evaluate(() => navigator.clipboard.readText());
      assert.equal(copied, invited.body.signupUrl);

      // Someone who may not invite sees no link.
      const member = new WebClient(herald.url);
      await member.logIn('new@example.com');
      const seen = (await member.app('GET', '/invitations')).body as { id: string; signupUrl: string | null }[];
      assert.equal(seen.find((i) => i.id === invited.body.id)?.signupUrl, null);

      const invitee = await chromium.newContext();
      try {
        const tab = await invitee.newPage();
        await tab.goto(copied);
        assert.equal(await tab.getByLabel('Email').inputValue(), 'writer@example.com');
        await tab.getByLabel('Password').fill('correct horse battery');
        await tab.getByRole('button', { name: 'Join your team' }).click();
        await tab.waitForURL(`${herald.url}/`);
      } finally {
        await invitee.close();
      }
      // Accepted: no link any more.
      const after = (await web.app('GET', '/invitations')).body as { id: string; accepted: boolean; signupUrl: string | null }[];
      assert.deepEqual(
        after.filter((i) => i.id === invited.body.id).map((i) => [i.accepted, i.signupUrl]),
        [[true, null]],
      );
    });
  });
}
