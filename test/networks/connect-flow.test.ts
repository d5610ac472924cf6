/**
 * The OAuth connect flow every OAuth network shares: what the user sees when the
 * network is not configured, when they deny access, when the link is reused or
 * too old, and the list of networks with their configuration state. LinkedIn's
 * fake stands in for any OAuth 2 network.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { followToCallback, startConnect } from '../helpers/connect.ts';
import { startHerald, type TestAccount, type TestHerald } from '../helpers/herald.ts';
import { testStores, storeSuite } from '../helpers/stores.ts';
import { assertError } from '../helpers/api-fixtures.ts';
import { LINKEDIN_APP, startLinkedInFake, type LinkedInFake } from '../fakes/linkedin.ts';
import { teardown } from '../helpers/teardown.ts';

for (const store of await testStores()) {
  describe(`connecting a channel through OAuth (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let fake: LinkedInFake;
    let account: TestAccount;

    before(async () => {
      fake = await startLinkedInFake();
      herald = await startHerald(store, {
        env: {
          HERALD_LINKEDIN_CLIENT_ID: LINKEDIN_APP.id,
          HERALD_LINKEDIN_CLIENT_SECRET: LINKEDIN_APP.secret,
          HERALD_LINKEDIN_AUTH_URL: fake.url,
          HERALD_LINKEDIN_API_URL: fake.url,
          HERALD_LINKEDIN_PAGE_CLIENT_ID: LINKEDIN_APP.id,
          HERALD_LINKEDIN_PAGE_CLIENT_SECRET: LINKEDIN_APP.secret,
        },
      });
      account = await herald.newAccount();
    });
    after(() =>
      teardown(
        () => herald.close(),
        () => fake.close(),
      ),
    );

    const callback = (query: Record<string, string>) =>
      fetch(`${herald.url}/connect/linkedin/callback?${new URLSearchParams(query)}`, { headers: { accept: 'application/json' } });

    it('GET /networks lists every network with its auth type and whether this server is configured for it', async () => {
      const listed = await account.callUntyped('GET', '/networks');
      assert.equal(listed.status, 200);
      const byId = new Map(listed.body.map((n: any) => [n.identifier, n]));
      for (const id of [
        'x',
        'linkedin',
        'linkedin-page',
        'facebook',
        'instagram',
        'instagram-standalone',
        'threads',
        'youtube',
        'tiktok',
        'pinterest',
        'reddit',
        'mastodon',
        'bluesky',
        'telegram',
        'discord',
        'slack',
        'nostr',
        'webhook',
      ]) {
        assert.ok(byId.has(id), `${id} is listed`);
      }
      assert.equal((byId.get('linkedin') as any).configured, true);
      assert.deepEqual((byId.get('pinterest') as any).missing, ['HERALD_PINTEREST_CLIENT_ID', 'HERALD_PINTEREST_CLIENT_SECRET']);
      assert.equal((byId.get('bluesky') as any).auth, 'credentials');
    });

    it('a network without app credentials: 400 naming the variables to set', async () => {
      assertError(await account.callUntyped('GET', '/social/pinterest'), 400, {
        code: 'provider_not_configured',
        message: /HERALD_PINTEREST_CLIENT_ID and HERALD_PINTEREST_CLIENT_SECRET/,
      });
      assertError(await account.callUntyped('GET', '/social/bluesky'), 400, { code: 'not_oauth', path: 'provider' });
      assertError(await account.callUntyped('GET', '/social/no-such-network'), 404);
    });

    it('the user denies access at the network: nothing is stored, the page says why, the link cannot be used again', async () => {
      const start = await startConnect(account, 'linkedin');
      const state = start.searchParams.get('state')!;
      const denied = await callback({ state, error: 'user_cancelled_authorize', error_description: 'The member declined' });
      assert.equal(denied.status, 400);
      const body = await denied.json();
      assert.equal(body.code, 'connect_denied');
      assert.match(body.message, /The member declined/);
      assert.equal((await account.callUntyped('GET', '/integrations')).body.length, 0);
      // The HTML page a browser sees says the same, escaped.
      const again = await startConnect(account, 'linkedin');
      const page = await fetch(
        `${herald.url}/connect/linkedin/callback?state=${again.searchParams.get('state')}` +
          `&error=denied&error_description=${encodeURIComponent('<script>x</script>')}`,
      );
      assert.equal(page.status, 400);
      const html = await page.text();
      assert.match(page.headers.get('content-type') ?? '', /text\/html/);
      assert.ok(html.includes('&lt;script&gt;x&lt;/script&gt;') && !html.includes('<script>x'), 'network text is escaped');
    });

    it('a connect link works once; a reused, unknown or expired state is refused and stores nothing', async () => {
      const start = await startConnect(account, 'linkedin');
      const finished = await followToCallback(herald, start);
      assert.equal(finished.status, 200, JSON.stringify(finished.body));
      const state = start.searchParams.get('state')!;
      const reused = await callback({ state, code: 'code-123' });
      assert.equal(reused.status, 400);
      assert.equal((await reused.json()).code, 'unknown_state');
      const unknown = await callback({ state: 'made-up', code: 'code-123' });
      assert.equal((await unknown.json()).code, 'unknown_state');
      const missing = await callback({ code: 'code-123' });
      assert.equal(missing.status, 400);

      const old = await startConnect(account, 'linkedin');
      await sql`UPDATE connect_requests SET expires_at = ${Date.now() - 1}`.execute(herald.services.store.db);
      const expired = await callback({ state: old.searchParams.get('state')!, code: 'code-123' });
      assert.equal(expired.status, 400);
      assert.equal((await expired.json()).code, 'expired_state');
      assert.equal((await account.callUntyped('GET', '/integrations')).body.length, 1, 'only the one good connection');
    });

    it('a state belongs to the network it was made for', async () => {
      const start = await startConnect(account, 'linkedin');
      const wrong = await fetch(`${herald.url}/connect/linkedin-page/callback?state=${start.searchParams.get('state')}&code=code-123`, {
        headers: { accept: 'application/json' },
      });
      assert.equal(wrong.status, 400);
      assert.equal((await wrong.json()).code, 'unknown_state');
      const right = await followToCallback(herald, start);
      assert.equal(right.status, 200, 'the state still works for its own network');
    });
  });
}
