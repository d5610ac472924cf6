/**
 * Herald's OAuth2 authorization server, as an application sees it: the consent
 * page (after signing in), the authorization code grant with and without PKCE,
 * refresh, revocation, and every refusal named as RFC 6749 names it. The
 * application is played by the test over HTTP; its redirect URI is never
 * followed, only read from the Location header.
 */
import assert from 'node:assert/strict';
import { SCOPES } from '../../src/domain/scopes.ts';
import { safeNext } from '../../src/api/oauth/login.ts';
import crypto from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { addWebhookChannel, scheduledPost } from '../helpers/api-fixtures.ts';
import { untypedCaller, startHerald, type TestHerald, testAccount } from '../helpers/herald.ts';
import { testStores, storeSuite } from '../helpers/stores.ts';
import { formOf, location, WebClient } from './web-client.ts';

const REDIRECT = 'http://127.0.0.1:9/app/callback';
const OTHER_REDIRECT = 'http://127.0.0.1:9/app/other';

function pkce() {
  const verifier = crypto.randomBytes(32).toString('base64url');
  return { verifier, challenge: crypto.createHash('sha256').update(verifier).digest('base64url') };
}

for (const store of await testStores()) {
  describe(`OAuth2 authorization server (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let owner: WebClient;
    let accountId: string;
    let app: { clientId: string; clientSecret: string };

    /** POST /api/oauth/token, as a form (RFC 6749) unless `json`. */
    async function token(fields: Record<string, string>, options: { json?: boolean; headers?: Record<string, string> } = {}) {
      const response = await fetch(`${herald.url}/api/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': options.json ? 'application/json' : 'application/x-www-form-urlencoded', ...options.headers },
        body: options.json ? JSON.stringify(fields) : new URLSearchParams(fields).toString(),
      });
      return { status: response.status, headers: response.headers, body: (await response.json()) as any };
    }

    /** The person approves (or denies) on the consent page; the redirect Herald answers with. */
    async function consent(params: Record<string, string>, decision: 'approve' | 'deny' = 'approve', browser = owner): Promise<URL> {
      const page = await browser.request('GET', `/oauth/authorize?${new URLSearchParams(params)}`);
      assert.equal(page.status, 200, page.text);
      const form = formOf(page.text);
      return location(await browser.request('POST', form.action, { form: { ...form.fields, decision } }), herald.url);
    }

    async function code(extra: Record<string, string> = {}): Promise<string> {
      const answer = await consent({ response_type: 'code', client_id: app.clientId, redirect_uri: REDIRECT, state: 'xyz', ...extra });
      assert.equal(answer.origin + answer.pathname, REDIRECT);
      assert.equal(answer.searchParams.get('state'), 'xyz');
      return answer.searchParams.get('code')!;
    }

    before(async () => {
      herald = await startHerald(store);
      owner = new WebClient(herald.url);
      accountId = (await owner.signUp('owner@example.com')).body.account.id;
      const registered = await owner.app('POST', '/oauth/apps', { name: 'Scheduler Pro', redirectUris: [REDIRECT, OTHER_REDIRECT] });
      assert.equal(registered.status, 201, JSON.stringify(registered.body));
      app = registered.body;
      // A channel, so the tokens have something to read.
      const key = (await owner.app('POST', '/keys', { name: 'setup' })).body.key;
      await addWebhookChannel(testAccount(herald.api, accountId, key));
    });
    after(async () => herald?.close());

    it('registering shows the secret once; the list never shows it', async () => {
      assert.match(app.clientSecret, /^hcs_/);
      const listed = await owner.app('GET', '/oauth/apps');
      assert.deepEqual(
        listed.body.map((a: any) => a.clientId),
        [app.clientId],
      );
      assert.ok(!JSON.stringify(listed.body).includes(app.clientSecret), '!JSON.stringify(listed.body).includes(app.clientSecret)');
      const bad = await owner.app('POST', '/oauth/apps', { name: 'Bad', redirectUris: ['not a url'] });
      assert.equal(bad.status, 400);
      assert.equal(bad.body.errors[0].path, 'redirectUris.0');
    });

    it('the consent page asks to sign in first, then comes back to the request', async () => {
      const browser = new WebClient(herald.url);
      const query = new URLSearchParams({ response_type: 'code', client_id: app.clientId, redirect_uri: REDIRECT, state: 's1' });
      const toLogin = location(await browser.request('GET', `/oauth/authorize?${query}`), herald.url);
      assert.equal(toLogin.pathname, '/oauth/login');
      const loginPage = await browser.request('GET', toLogin.pathname + toLogin.search);
      assert.equal(loginPage.status, 200);
      const form = formOf(loginPage.text);
      const back = location(
        await browser.request('POST', form.action, { form: { ...form.fields, email: 'owner@example.com', password: 'correct horse battery' } }),
        herald.url,
      );
      assert.equal(back.pathname + back.search, `/oauth/authorize?${query}`);
      const page = await browser.request('GET', back.pathname + back.search);
      assert.equal(page.status, 200);
      assert.match(page.text, /Scheduler Pro/);
      assert.equal(page.headers.get('x-frame-options'), 'DENY');
    });

    it('after sign-in, only a path of this server is followed: never an open redirect, never a 500', async () => {
      const hostile = ['/\t/evil.test/', '//evil.test/', '/\\evil.test', 'https://evil.test/', '/ok\r\nSet-Cookie: a=b', '/%09/evil.test'.replace('%09', '\t')];
      for (const next of hostile) {
        const browser = new WebClient(herald.url);
        const loginPage = await browser.request('GET', `/oauth/login?next=${encodeURIComponent(next)}`);
        assert.equal(loginPage.status, 200, `login page for next=${JSON.stringify(next)}`);
        const form = formOf(loginPage.text);
        const answer = await browser.request('POST', form.action, {
          form: { ...form.fields, next, email: 'owner@example.com', password: 'correct horse battery' },
        });
        assert.equal(answer.status, 303, `next=${JSON.stringify(next)} answered ${answer.status}: ${answer.text.slice(0, 200)}`);
        assert.equal(answer.headers.get('location'), '/', `next=${JSON.stringify(next)} is not followed`);
      }
      const browser = new WebClient(herald.url);
      const form = formOf((await browser.request('GET', '/oauth/login')).text);
      const kept = await browser.request('POST', form.action, {
        form: { ...form.fields, next: '/oauth/authorize?client_id=x&state=%2F%2F', email: 'owner@example.com', password: 'correct horse battery' },
      });
      assert.equal(kept.headers.get('location'), '/oauth/authorize?client_id=x&state=%2F%2F', 'a path of this server is followed');
    });

    it('malformed percent-encoding in Basic client credentials is invalid_client (401), on token and revoke', async () => {
      const basic = `Basic ${Buffer.from(`${app.clientId}:%E0%A4%A`).toString('base64')}`;
      const viaToken = await token({ grant_type: 'authorization_code', code: 'hac_x' }, { headers: { authorization: basic } });
      assert.equal(viaToken.status, 401, JSON.stringify(viaToken.body));
      assert.equal(viaToken.body.error, 'invalid_client');
      const viaRevoke = await fetch(`${herald.url}/api/oauth/revoke`, {
        method: 'POST',
        headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
        body: 'token=hat_x',
      });
      assert.equal(viaRevoke.status, 401);
      assert.equal(((await viaRevoke.json()) as any).error, 'invalid_client');
    });

    it('without PKCE: the code and the client secret give a token that works in the raw Authorization header', async () => {
      const answer = await token({
        grant_type: 'authorization_code',
        code: await code(),
        client_id: app.clientId,
        client_secret: app.clientSecret,
        redirect_uri: REDIRECT,
      });
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      assert.equal(answer.headers.get('cache-control'), 'no-store');
      assert.equal(answer.body.token_type, 'bearer');
      assert.equal(answer.body.id, accountId);
      assert.equal(answer.body.expires_in, 3600);
      assert.ok(answer.body.refresh_token, 'answer.body.refresh_token');
      const api = untypedCaller(herald.api, answer.body.access_token);
      const channels = await api('GET', '/integrations');
      assert.equal(channels.status, 200);
      assert.equal(channels.body.length, 1);
      assert.equal((await untypedCaller(herald.api, `Bearer ${answer.body.access_token}`)('GET', '/is-connected')).status, 200);
      // Stored hashed: the database does not hold the token.
      const rows = await herald.services.store.db.selectFrom('oauth_tokens').selectAll().execute();
      assert.ok(!JSON.stringify(rows).includes(answer.body.access_token), '!JSON.stringify(rows).includes(answer.body.access_token)');
    });

    it('without PKCE the client secret is required, and must be right', async () => {
      const c = await code();
      const missing = await token({ grant_type: 'authorization_code', code: c, client_id: app.clientId, redirect_uri: REDIRECT });
      assert.equal(missing.status, 401);
      assert.equal(missing.body.error, 'invalid_client');
      const wrong = await token({ grant_type: 'authorization_code', code: c, client_id: app.clientId, client_secret: 'hcs_wrong', redirect_uri: REDIRECT });
      assert.equal(wrong.status, 401);
      assert.equal(wrong.body.error, 'invalid_client');
      // HTTP Basic client authentication works too.
      const basic = Buffer.from(`${app.clientId}:${app.clientSecret}`).toString('base64');
      const ok = await token({ grant_type: 'authorization_code', code: c, redirect_uri: REDIRECT }, { headers: { authorization: `Basic ${basic}` } });
      assert.equal(ok.status, 200, JSON.stringify(ok.body));
    });

    it('with PKCE (S256): the verifier alone exchanges the code (JSON body, as the contract shows)', async () => {
      const { verifier, challenge } = pkce();
      const c = await code({ code_challenge: challenge, code_challenge_method: 'S256' });
      const answer = await token(
        { grant_type: 'authorization_code', code: c, client_id: app.clientId, code_verifier: verifier, redirect_uri: REDIRECT },
        { json: true },
      );
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      assert.equal((await untypedCaller(herald.api, answer.body.access_token)('GET', '/integrations')).status, 200);
    });

    it('with PKCE: a wrong or missing verifier is invalid_grant', async () => {
      const { verifier, challenge } = pkce();
      const c = await code({ code_challenge: challenge, code_challenge_method: 'S256' });
      const wrong = await token({ grant_type: 'authorization_code', code: c, client_id: app.clientId, code_verifier: pkce().verifier, redirect_uri: REDIRECT });
      assert.equal(wrong.status, 400);
      assert.equal(wrong.body.error, 'invalid_grant');
      assert.match(wrong.body.error_description, /code_verifier/);
      const missing = await token({
        grant_type: 'authorization_code',
        code: c,
        client_id: app.clientId,
        client_secret: app.clientSecret,
        redirect_uri: REDIRECT,
      });
      assert.equal(missing.body.error, 'invalid_grant');
      // A verifier for a code without a challenge is refused too (no downgrade).
      const plain = await token({
        grant_type: 'authorization_code',
        code: await code(),
        client_id: app.clientId,
        client_secret: app.clientSecret,
        code_verifier: verifier,
        redirect_uri: REDIRECT,
      });
      assert.equal(plain.body.error, 'invalid_grant');
      // "plain" challenges are not accepted at all.
      const refused = await consentRedirectError({ code_challenge: verifier, code_challenge_method: 'plain' });
      assert.equal(refused.searchParams.get('error'), 'invalid_request');
    });

    /** The redirect an invalid (but safely redirectable) request gets, without any consent. */
    async function consentRedirectError(extra: Record<string, string>): Promise<URL> {
      const query = new URLSearchParams({ response_type: 'code', client_id: app.clientId, redirect_uri: REDIRECT, state: 'st', ...extra });
      const answer = location(await owner.request('GET', `/oauth/authorize?${query}`), herald.url);
      assert.equal(answer.origin + answer.pathname, REDIRECT);
      assert.equal(answer.searchParams.get('state'), 'st');
      return answer;
    }

    it('a reused code is invalid_grant, and the token it gave is revoked', async () => {
      const c = await code();
      const fields = { grant_type: 'authorization_code', code: c, client_id: app.clientId, client_secret: app.clientSecret, redirect_uri: REDIRECT };
      const first = await token(fields);
      assert.equal(first.status, 200);
      const api = untypedCaller(herald.api, first.body.access_token);
      assert.equal((await api('GET', '/integrations')).status, 200);
      const second = await token(fields);
      assert.equal(second.status, 400);
      assert.equal(second.body.error, 'invalid_grant');
      assert.equal((await api('GET', '/integrations')).status, 401);
      const refreshed = await token({
        grant_type: 'refresh_token',
        refresh_token: first.body.refresh_token,
        client_id: app.clientId,
        client_secret: app.clientSecret,
      });
      assert.equal(refreshed.body.error, 'invalid_grant');
    });

    it('a wrong redirect URI: never redirected to at the consent step, invalid_grant at the token step', async () => {
      const query = new URLSearchParams({ response_type: 'code', client_id: app.clientId, redirect_uri: 'https://evil.example/steal', state: 's' });
      const page = await owner.request('GET', `/oauth/authorize?${query}`);
      assert.equal(page.status, 400);
      assert.equal(page.headers.get('location'), null);
      assert.match(page.text, /not registered/);
      // Posting the consent form with a swapped redirect_uri is refused the same way.
      const form = formOf(
        (await owner.request('GET', `/oauth/authorize?${new URLSearchParams({ response_type: 'code', client_id: app.clientId, redirect_uri: REDIRECT })}`))
          .text,
      );
      const swapped = await owner.request('POST', form.action, { form: { ...form.fields, redirect_uri: 'https://evil.example/steal', decision: 'approve' } });
      assert.equal(swapped.status, 400);
      assert.equal(swapped.headers.get('location'), null);

      const c = await code();
      const other = await token({
        grant_type: 'authorization_code',
        code: c,
        client_id: app.clientId,
        client_secret: app.clientSecret,
        redirect_uri: OTHER_REDIRECT,
      });
      assert.equal(other.body.error, 'invalid_grant');
      const omitted = await token({ grant_type: 'authorization_code', code: c, client_id: app.clientId, client_secret: app.clientSecret });
      assert.equal(omitted.body.error, 'invalid_grant');
      // An unknown client is shown an error page, not redirected.
      const unknownClient = await owner.request(
        'GET',
        `/oauth/authorize?${new URLSearchParams({ response_type: 'code', client_id: 'nope', redirect_uri: REDIRECT })}`,
      );
      assert.equal(unknownClient.status, 400);
      assert.equal(unknownClient.headers.get('location'), null);
    });

    it('an expired code is invalid_grant', async () => {
      const c = await code();
      // Ten minutes pass.
      await herald.services.store.db
        .updateTable('oauth_codes')
        .set({ expires_at: Date.now() - 1 })
        .where('used_at', 'is', null)
        .execute();
      const answer = await token({
        grant_type: 'authorization_code',
        code: c,
        client_id: app.clientId,
        client_secret: app.clientSecret,
        redirect_uri: REDIRECT,
      });
      assert.equal(answer.status, 400);
      assert.equal(answer.body.error, 'invalid_grant');
      assert.match(answer.body.error_description, /expired/);
    });

    it('refresh gives a new pair; the old access and refresh tokens stop working; scopes may narrow, not widen', async () => {
      const first = await token({
        grant_type: 'authorization_code',
        code: await code({ scope: 'posts:read channels:read' }),
        client_id: app.clientId,
        client_secret: app.clientSecret,
        redirect_uri: REDIRECT,
      });
      assert.equal(first.body.scope, 'channels:read posts:read');
      const refreshed = await token({
        grant_type: 'refresh_token',
        refresh_token: first.body.refresh_token,
        client_id: app.clientId,
        client_secret: app.clientSecret,
        scope: 'channels:read',
      });
      assert.equal(refreshed.status, 200, JSON.stringify(refreshed.body));
      assert.equal(refreshed.body.scope, 'channels:read');
      assert.notEqual(refreshed.body.access_token, first.body.access_token);
      assert.equal((await untypedCaller(herald.api, first.body.access_token)('GET', '/integrations')).status, 401);
      const fresh = untypedCaller(herald.api, refreshed.body.access_token);
      assert.equal((await fresh('GET', '/integrations')).status, 200);
      const start = new Date().toISOString();
      assert.equal((await fresh('GET', `/posts?startDate=${start}&endDate=${start}`)).status, 403);
      const reused = await token({
        grant_type: 'refresh_token',
        refresh_token: first.body.refresh_token,
        client_id: app.clientId,
        client_secret: app.clientSecret,
      });
      assert.equal(reused.body.error, 'invalid_grant');
      const widen = await token({
        grant_type: 'refresh_token',
        refresh_token: refreshed.body.refresh_token,
        client_id: app.clientId,
        client_secret: app.clientSecret,
        scope: 'posts:write',
      });
      assert.equal(widen.body.error, 'invalid_scope');
    });

    it('access tokens expire', async () => {
      const answer = await token({
        grant_type: 'authorization_code',
        code: await code(),
        client_id: app.clientId,
        client_secret: app.clientSecret,
        redirect_uri: REDIRECT,
      });
      const api = untypedCaller(herald.api, answer.body.access_token);
      assert.equal((await api('GET', '/integrations')).status, 200);
      // An hour passes.
      await herald.services.store.db
        .updateTable('oauth_tokens')
        .set({ access_expires_at: Date.now() - 1 })
        .where('revoked_at', 'is', null)
        .execute();
      assert.equal((await api('GET', '/integrations')).status, 401);
      // The refresh token still gets a new one.
      const refreshed = await token({
        grant_type: 'refresh_token',
        refresh_token: answer.body.refresh_token,
        client_id: app.clientId,
        client_secret: app.clientSecret,
      });
      assert.equal((await untypedCaller(herald.api, refreshed.body.access_token)('GET', '/integrations')).status, 200);
    });

    it("a token revoked from the account's settings is refused at once, and so is its refresh token", async () => {
      const answer = await token({
        grant_type: 'authorization_code',
        code: await code(),
        client_id: app.clientId,
        client_secret: app.clientSecret,
        redirect_uri: REDIRECT,
      });
      const api = untypedCaller(herald.api, answer.body.access_token);
      assert.equal((await api('GET', '/integrations')).status, 200);
      const grants = await owner.app('GET', '/oauth/authorizations');
      assert.ok(
        grants.body.every((g: any) => g.app.name === 'Scheduler Pro' && g.grantedBy === 'owner@example.com'),
        "grants.body.every((g: any) => g.app.name === 'Scheduler Pro' && g.grantedBy === 'owner@example.com')",
      );
      const newest = grants.body.at(-1);
      assert.equal((await owner.app('DELETE', `/oauth/authorizations/${newest.id}`)).status, 200);
      assert.equal((await api('GET', '/integrations')).status, 401);
      const refreshed = await token({
        grant_type: 'refresh_token',
        refresh_token: answer.body.refresh_token,
        client_id: app.clientId,
        client_secret: app.clientSecret,
      });
      assert.equal(refreshed.body.error, 'invalid_grant');
      assert.ok(
        !(await owner.app('GET', '/oauth/authorizations')).body.some((g: any) => g.id === newest.id),
        "!(await owner.app('GET', '/oauth/authorizations')).body.some((g: any) => g.id === newest.id)",
      );
    });

    it('the application may revoke its own token (RFC 7009)', async () => {
      const answer = await token({
        grant_type: 'authorization_code',
        code: await code(),
        client_id: app.clientId,
        client_secret: app.clientSecret,
        redirect_uri: REDIRECT,
      });
      const revoked = await fetch(`${herald.url}/api/oauth/revoke`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token: answer.body.access_token, client_id: app.clientId, client_secret: app.clientSecret }),
      });
      assert.equal(revoked.status, 200);
      assert.equal((await untypedCaller(herald.api, answer.body.access_token)('GET', '/integrations')).status, 401);
    });

    it('a token carries the scopes the person approved: posts:read cannot create posts', async () => {
      const answer = await token({
        grant_type: 'authorization_code',
        code: await code({ scope: 'posts:read' }),
        client_id: app.clientId,
        client_secret: app.clientSecret,
        redirect_uri: REDIRECT,
      });
      const api = untypedCaller(herald.api, answer.body.access_token);
      const start = new Date().toISOString();
      const end = new Date(Date.now() + 86_400_000 * 7).toISOString();
      assert.equal((await api('GET', `/posts?startDate=${start}&endDate=${end}`)).status, 200);
      const channelId = (await untypedCaller(herald.api, (await owner.app('POST', '/keys', { name: 'k' })).body.key)('GET', '/integrations')).body[0].id;
      const created = await api('POST', '/posts', scheduledPost(channelId, 'nope'));
      assert.equal(created.status, 403);
      assert.equal(created.body.code, 'insufficient_scope');
      const unknownScope = await consentRedirectError({ scope: 'posts:read everything' });
      assert.equal(unknownScope.searchParams.get('error'), 'invalid_scope');
    });

    it('a denied request goes back with access_denied and the state', async () => {
      const answer = await consent({ response_type: 'code', client_id: app.clientId, redirect_uri: REDIRECT, state: 'keep-me' }, 'deny');
      assert.equal(answer.searchParams.get('error'), 'access_denied');
      assert.equal(answer.searchParams.get('state'), 'keep-me');
      assert.equal(answer.searchParams.get('code'), null);
    });

    it('the consent form refuses a post without the session CSRF token', async () => {
      const page = await owner.request(
        'GET',
        `/oauth/authorize?${new URLSearchParams({ response_type: 'code', client_id: app.clientId, redirect_uri: REDIRECT })}`,
      );
      const form = formOf(page.text);
      const { csrf, ...withoutCsrf } = form.fields;
      assert.ok(csrf, 'csrf');
      const forged = await owner.request('POST', form.action, { form: { ...withoutCsrf, decision: 'approve' } });
      assert.equal(forged.status, 403);
      assert.equal(forged.headers.get('location'), null);
    });

    it('token endpoint errors use the OAuth names', async () => {
      const unsupported = await token({ grant_type: 'password', username: 'a', password: 'b', client_id: app.clientId });
      assert.equal(unsupported.status, 400);
      assert.equal(unsupported.body.error, 'unsupported_grant_type');
      const noGrant = await token({ client_id: app.clientId });
      assert.equal(noGrant.body.error, 'invalid_request');
      const unknownClient = await token({ grant_type: 'authorization_code', code: 'x', client_id: 'nope', client_secret: 'x' });
      assert.equal(unknownClient.status, 401);
      assert.equal(unknownClient.body.error, 'invalid_client');
      const unknownCode = await token({ grant_type: 'authorization_code', code: 'hac_nope', client_id: app.clientId, client_secret: app.clientSecret });
      assert.equal(unknownCode.body.error, 'invalid_grant');
      const badJson = await fetch(`${herald.url}/api/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{' });
      assert.equal(badJson.status, 400);
      assert.equal(((await badJson.json()) as any).error, 'invalid_request');
      const wrongType = await token({ grant_type: 'authorization_code', code: ['a', 'b'] as never, client_id: app.clientId }, { json: true });
      assert.equal(wrongType.body.error, 'invalid_request');
    });

    /** A person invited with `role`, signed in in a browser of their own. */
    async function invited(email: string, role: 'admin' | 'member'): Promise<{ browser: WebClient; id: string }> {
      const invitation = await owner.app('POST', '/invitations', { email, role });
      assert.equal(invitation.status, 201, JSON.stringify(invitation.body));
      const browser = new WebClient(herald.url);
      const joined = await browser.signUp(email, 'correct horse battery', { invitation: invitation.body.token });
      return { browser, id: joined.body.user.id };
    }

    async function codeFrom(browser: WebClient): Promise<string> {
      const answer = await consent({ response_type: 'code', client_id: app.clientId, redirect_uri: REDIRECT, state: 'xyz' }, 'approve', browser);
      return answer.searchParams.get('code')!;
    }

    it('removing a person revokes what they granted: an unused code, a token and its refresh', async () => {
      const { browser, id } = await invited('leaving@example.com', 'admin');
      const unused = await codeFrom(browser);
      const used = await token({
        grant_type: 'authorization_code',
        code: await codeFrom(browser),
        client_id: app.clientId,
        client_secret: app.clientSecret,
        redirect_uri: REDIRECT,
      });
      assert.equal(used.status, 200, JSON.stringify(used.body));
      assert.equal((await owner.app('DELETE', `/people/${id}`)).status, 200);

      const late = await token({
        grant_type: 'authorization_code',
        code: unused,
        client_id: app.clientId,
        client_secret: app.clientSecret,
        redirect_uri: REDIRECT,
      });
      assert.equal(late.body.error, 'invalid_grant', "a removed person's code gives no token");
      const refreshed = await token({
        grant_type: 'refresh_token',
        refresh_token: used.body.refresh_token,
        client_id: app.clientId,
        client_secret: app.clientSecret,
      });
      assert.equal(refreshed.body.error, 'invalid_grant', "a removed person's refresh token is refused");
      const read = await fetch(`${herald.api}/integrations`, { headers: { authorization: `Bearer ${used.body.access_token}` } });
      assert.equal(read.status, 401, "a removed person's access token is refused");
    });

    it('a member never grants full access: the token carries the named scopes, never "*"', async () => {
      const { browser } = await invited('member@example.com', 'member');
      const granted = await token({
        grant_type: 'authorization_code',
        code: await codeFrom(browser),
        client_id: app.clientId,
        client_secret: app.clientSecret,
        redirect_uri: REDIRECT,
      });
      assert.equal(granted.status, 200, JSON.stringify(granted.body));
      assert.notEqual(granted.body.scope, '*', 'not full access');
      assert.deepEqual(granted.body.scope.split(' ').sort(), Object.keys(SCOPES).sort(), 'every named scope');
      const posts = await fetch(`${herald.api}/posts?startDate=2030-01-01T00:00:00Z&endDate=2030-01-02T00:00:00Z`, {
        headers: { authorization: `Bearer ${granted.body.access_token}` },
      });
      assert.equal(posts.status, 200, 'a member still uses the account');
    });

    it('deleting the application revokes its tokens', async () => {
      const other = await owner.app('POST', '/oauth/apps', { name: 'Short-lived', redirectUris: [REDIRECT] });
      const c = location(
        await owner.request('POST', '/oauth/authorize', {
          form: {
            ...formOf((await owner.request('GET', `/oauth/authorize?${new URLSearchParams({ response_type: 'code', client_id: other.body.clientId })}`)).text)
              .fields,
            decision: 'approve',
          },
        }),
        herald.url,
      ).searchParams.get('code')!;
      // The one registered redirect URI was implied, so the token request may leave it out.
      const answer = await token({ grant_type: 'authorization_code', code: c, client_id: other.body.clientId, client_secret: other.body.clientSecret });
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      const api = untypedCaller(herald.api, answer.body.access_token);
      assert.equal((await api('GET', '/integrations')).status, 200);
      assert.equal((await owner.app('DELETE', `/oauth/apps/${other.body.clientId}`)).status, 200);
      assert.equal((await api('GET', '/integrations')).status, 401);
    });
  });
}

/**
 * `next` after a sign-in, from every class of Unicode: astral characters, lone
 * surrogates, controls (C0 and C1), U+0100..U+FFFF, bidi marks, look-alikes of
 * the slash. Each is followed percent-encoded or replaced by `/`, never a 500
 * and never a Location off Herald's origin. One store: the redirect does not
 * touch it. A proxy is trusted so that every sign-in comes from an address of
 * its own and the sign-in limits leave the runs alone (the limit per email,
 * 300, bounds the runs).
 */
describe('sign-in `next` from any Unicode (fuzz)', () => {
  const SEED = Number(process.env.HERALD_FUZZ_SEED ?? 20260727);
  const RUNS = Math.min(250, Number(process.env.HERALD_FUZZ_RUNS ?? 40));
  let herald: TestHerald;
  let signIns = 0;

  before(async () => {
    herald = await startHerald('sqlite', { env: { HERALD_TRUST_PROXY: '127.0.0.1' } });
    await new WebClient(herald.url).signUp('owner@example.com');
  });
  after(async () => herald?.close());

  /** Percent-encodes as a browser does, and a lone surrogate as its three WTF-8 bytes, which no browser sends but anyone can. */
  function percentEncoded(text: string): string {
    let out = '';
    for (const ch of text) {
      const c = ch.codePointAt(0)!;
      if (c < 0xd800 || c > 0xdfff) out += encodeURIComponent(ch);
      else out += [0xe0 | (c >> 12), 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f)].map((b) => `%${b.toString(16).toUpperCase()}`).join('');
    }
    return out;
  }

  /** Signs in (right password) with `next` as sent in the form; the answer's status and Location. */
  async function signInWith(next: string) {
    const browser = new WebClient(herald.url);
    const form = formOf((await browser.request('GET', '/oauth/login')).text);
    signIns += 1;
    // The page's own hidden `next` ("/") is left out: the form parser keeps the first value.
    const { next: _shown, ...fields } = form.fields;
    const body = Object.entries({ ...fields, email: 'owner@example.com', password: 'correct horse battery' })
      .map(([name, value]) => `${name}=${encodeURIComponent(value)}`)
      .concat(`next=${percentEncoded(next)}`)
      .join('&');
    const answer = await fetch(`${herald.url}/oauth/login`, {
      method: 'POST',
      headers: {
        cookie: `herald_form=${browser.jar.get('herald_form')}`,
        'content-type': 'application/x-www-form-urlencoded',
        'x-forwarded-for': `10.${signIns >> 8}.${signIns & 255}.1`,
      },
      body,
      redirect: 'manual',
    });
    const text = await answer.text();
    return { status: answer.status, location: answer.headers.get('location'), text };
  }

  /** A Location a browser reads as a path of this server, in printable ASCII only (nothing for it to read differently). */
  function assertStaysHome(location: string | null, what: string): void {
    assert.ok(location !== null, `${what}: no Location`);
    assert.match(location, /^\/[\x21-\x7e]*$/, `${what}: Location ${JSON.stringify(location)}`);
    assert.equal(new URL(location, herald.url).origin, herald.url, `${what}: Location ${JSON.stringify(location)} leaves Herald`);
  }

  const LONE_SURROGATE = /\p{Cs}/u;
  const unit = fc.oneof(
    fc.constantFrom(
      '/',
      '//',
      '\\',
      '%',
      '%2F',
      '?',
      '#',
      '.',
      '..',
      ' ',
      '\t',
      '\r',
      '\n',
      '\u0000',
      '\u007f',
      '\u0085',
      '\u009b',
      '\u00a0',
      '\u00e9',
      '\u00ff',
    ),
    fc.constantFrom(
      '\u0100',
      '\u200e',
      '\u200f',
      '\u202a',
      '\u202e',
      '\u2066',
      '\u2028',
      '\u2029',
      '\ufeff',
      '\uffff',
      '\u3000',
      '\uff0f',
      '\uff3c',
      '\u2215',
      '\u2044',
    ),
    fc.constantFrom('\ud800', '\udbff', '\udc00', '\udfff', '😀', '\u{10ffff}', '\u{1d11e}'),
    fc.integer({ min: 0, max: 0x9f }).map((c) => String.fromCharCode(c)),
    fc.integer({ min: 0x100, max: 0xffff }).map((c) => String.fromCharCode(c)),
    fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
  );
  const next = fc.oneof(
    fc
      .tuple(
        fc.constantFrom('/', '/', '/oauth/authorize?state=', '', '//', '/\\', '\\', 'https://evil.test/', '\u3000/', '\uff0f', '/\u202e'),
        fc.string({ unit, maxLength: 40 }),
      )
      .map(([start, rest]) => start + rest),
    fc.string({ unit: 'binary', maxLength: 40 }),
    fc.constantFrom('/' + '😀'.repeat(1100), '/' + 'é'.repeat(2100), '/' + 'a'.repeat(4096), '/' + '\ud800'.repeat(2000)),
  );

  it('is followed percent-encoded, or replaced by /: a 303 on Herald’s origin, never a 500', async () => {
    await fc.assert(
      fc.asyncProperty(next, async (sent) => {
        // Lone surrogates reach it only directly: a form or a query turns them into U+FFFD first.
        assertStaysHome(safeNext(sent), 'safeNext');
        const page = await fetch(`${herald.url}/oauth/login?next=${percentEncoded(sent)}`);
        const html = await page.text();
        assert.ok(page.status === 200 || (page.status >= 400 && page.status < 500), `the login page answered ${page.status}`);
        if (page.status === 200) assertStaysHome(formOf(html).fields.next, 'the form’s next');

        const answer = await signInWith(sent);
        // The server's input guard refuses any request carrying a NUL character, before the sign-in.
        if (sent.includes('\u0000') && answer.status === 400) return;
        assert.equal(answer.status, 303, `answered ${answer.status}: ${answer.text.slice(0, 200)}`);
        assertStaysHome(answer.location, 'the redirect');
        // What is followed is what was asked for, as a browser reads both.
        if (answer.location !== '/' && !LONE_SURROGATE.test(sent)) assert.equal(new URL(answer.location!, herald.url).href, new URL(sent, herald.url).href);
      }),
      { seed: SEED, numRuns: RUNS },
    );
  });

  it('follows paths with characters above U+00FF, percent-encoded as UTF-8', async () => {
    const cases: [next: string, location: string][] = [
      ['/caf\u00e9/\u{1f600}?q=\u0109#\u0101', '/caf%C3%A9/%F0%9F%98%80?q=%C4%89#%C4%81'],
      ['/\u0100', '/%C4%80'],
      ['/a\u202eb\u200f', '/a%E2%80%AEb%E2%80%8F'],
      ['/oauth/authorize?client_id=x&state=%2F%2F', '/oauth/authorize?client_id=x&state=%2F%2F'],
      // A lone surrogate has no UTF-8: sent as its WTF-8 bytes, it arrives as three U+FFFD.
      ['/\ud800', '/%EF%BF%BD%EF%BF%BD%EF%BF%BD'],
    ];
    for (const [sent, expected] of cases) {
      const answer = await signInWith(sent);
      assert.equal(answer.status, 303, `next=${JSON.stringify(sent)} answered ${answer.status}: ${answer.text.slice(0, 200)}`);
      assert.equal(answer.location, expected, `next=${JSON.stringify(sent)}`);
    }
  });
});
