/**
 * Single sign-on with OpenID Connect against a real provider (oidc-provider on
 * 127.0.0.1), driven over HTTP as a browser would: discovery, PKCE, state,
 * nonce and the ID token's checks; who gets in (an invitation, an allowed
 * domain, a person known by their e-mail or their provider identity) and who
 * is refused; and passwords turned off for everyone but the owner. On SQLite
 * and PostgreSQL.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { appRoutes } from '../../src/contract/routes/app.ts';
import { freePort, startHerald, type TestHerald } from '../helpers/herald.ts';
import { startHeraldWithSso, startOidcProvider, toProviderAndBack, type TestProvider } from '../helpers/oidc-provider.ts';
import { storeSuite, testStores } from '../helpers/stores.ts';
import { location, WebClient } from './web-client.ts';

const PASSWORD = 'correct horse battery';
const { routes } = appRoutes;

/** Where Herald sent the browser after the provider's answer, and whether that browser now has a session. */
async function finish(herald: TestHerald, browser: WebClient, callback: URL) {
  const landed = location(await browser.request('GET', callback.href), herald.url);
  const session = await browser.app('GET', '/session');
  return { landed, session };
}

for (const store of await testStores()) {
  describe(`single sign-on with OpenID Connect (${store})`, storeSuite(store), () => {
    let provider: TestProvider;
    let herald: TestHerald;
    let owner: WebClient;

    /** A fresh browser signing in at the provider as `login`, all the way back into Herald. */
    async function signIn(login: string) {
      const browser = new WebClient(herald.url);
      const { callback } = await toProviderAndBack(browser, provider, login);
      return { browser, ...(await finish(herald, browser, callback)) };
    }

    /** The owner lets people of team.test join as members (each test that relies on it says so, so it runs alone too). */
    async function allowTeamDomain() {
      const saved = await owner.route(routes.saveSsoSettings, { body: { allowedDomains: ['team.test'], domainRole: 'member', passwordsOff: false } });
      assert.equal(saved.status, 200);
    }

    before(async () => {
      provider = await startOidcProvider();
      herald = await startHeraldWithSso(store, provider);
      owner = new WebClient(herald.url);
      await owner.signUp('owner@example.com', PASSWORD);
    });
    after(async () => {
      await herald?.close();
      await provider?.close();
    });
    beforeEach(() => {
      provider.tamper = undefined;
    });

    it('tells the sign-in page that single sign-on exists, by its name', async () => {
      const methods = await new WebClient(herald.url).route(routes.signInMethods, {});
      assert.equal(methods.status, 200);
      assert.deepEqual(methods.body, { password: true, sso: { name: 'Test IdP', startUrl: '/api/app/auth/oidc/start' } });
    });

    it('an invited e-mail joins with the invitation’s role, through discovery and PKCE', async () => {
      const invited = await owner.app('POST', '/invitations', { email: 'Alice@Example.com', role: 'admin' });
      assert.equal(invited.status, 201);
      provider.people.set('alice', { email: 'alice@example.com', email_verified: true, name: 'Alice A' });
      const browser = new WebClient(herald.url);
      const { start, callback } = await toProviderAndBack(browser, provider, 'alice');
      // The authorization endpoint is the one discovery found; the request carries PKCE (S256), state and nonce.
      assert.equal(start.origin + start.pathname, `${provider.issuer}/auth`);
      assert.equal(start.searchParams.get('code_challenge_method'), 'S256');
      assert.match(start.searchParams.get('code_challenge') ?? '', /^[A-Za-z0-9_-]{43}$/);
      assert.ok(start.searchParams.get('state') && start.searchParams.get('nonce'), 'state and nonce are sent');
      assert.equal(start.searchParams.get('redirect_uri'), `${herald.url}/api/app/auth/oidc/callback`);
      assert.equal(callback.searchParams.get('state'), start.searchParams.get('state'));
      const { landed, session } = await finish(herald, browser, callback);
      assert.equal(landed.pathname, '/');
      assert.equal(session.status, 200);
      assert.equal(session.body.user.email, 'alice@example.com');
      assert.equal(session.body.user.name, 'Alice A');
      assert.equal(session.body.user.role, 'admin');
      // The same session as a password sign-in makes: the CSRF token guards its writes.
      assert.equal(session.body.csrfToken, browser.csrf);
      assert.equal((await browser.app('POST', '/auth/logout', undefined, { csrf: false })).status, 403);
      const invitations = await owner.app('GET', '/invitations');
      assert.equal(invitations.body.find((i: { email: string }) => i.email === 'alice@example.com').accepted, true);
    });

    it('the server-rendered sign-in page (before an application’s consent) offers it too, and comes back to the same place', async () => {
      const next = '/oauth/authorize?client_id=some-app&response_type=code';
      const page = await new WebClient(herald.url).request('GET', `/oauth/login?next=${encodeURIComponent(next)}`);
      const link = /<a href="([^"]+)">Sign in with Test IdP<\/a>/.exec(page.text);
      assert.ok(link, 'the page links to single sign-on');
      const startPath = link[1]!.replaceAll('&amp;', '&');
      assert.equal(new URL(startPath, herald.url).searchParams.get('next'), next);
      const browser = new WebClient(herald.url);
      const { callback } = await toProviderAndBack(browser, provider, 'alice', startPath);
      const { landed, session } = await finish(herald, browser, callback);
      assert.equal(landed.pathname + landed.search, next);
      assert.equal(session.body.user.email, 'alice@example.com');
      // Only paths of this server are followed.
      const elsewhere = new WebClient(herald.url);
      const away = await toProviderAndBack(elsewhere, provider, 'alice', `/api/app/auth/oidc/start?next=${encodeURIComponent('//evil.test/')}`);
      assert.equal((await finish(herald, elsewhere, away.callback)).landed.href, `${herald.url}/`);
    });

    it('finds the person by their provider identity after their e-mail changed at the provider', async () => {
      const first = await signIn('alice');
      provider.people.set('alice', { email: 'alice.renamed@example.com', email_verified: true });
      const again = await signIn('alice');
      assert.equal(again.session.status, 200);
      assert.equal(again.session.body.user.id, first.session.body.user.id);
      assert.equal(again.session.body.user.email, 'alice@example.com');
    });

    it('a domain the owner allowed lets its people join with the role the owner chose', async () => {
      const saved = await owner.route(routes.saveSsoSettings, { body: { allowedDomains: ['Team.Test'], domainRole: 'admin', passwordsOff: false } });
      assert.equal(saved.status, 200, JSON.stringify(saved.body));
      assert.deepEqual(saved.body.allowedDomains, ['team.test']);
      provider.people.set('bob', { email: 'bob@team.test', email_verified: true });
      const { session } = await signIn('bob');
      assert.equal(session.status, 200);
      assert.equal(session.body.user.role, 'admin');
      assert.equal(session.body.account.id, (await owner.app('GET', '/session')).body.account.id);
    });

    it('refuses an e-mail the provider did not verify, even of an allowed domain', async () => {
      await allowTeamDomain();
      provider.people.set('carol', { email: 'carol@team.test', email_verified: false });
      const { landed, session } = await signIn('carol');
      assert.equal(landed.pathname, '/signin');
      assert.equal(landed.searchParams.get('sso_error'), 'unverified_email');
      assert.equal(session.status, 401);
    });

    it('takes Microsoft Entra’s xms_edov in place of a missing email_verified, and refuses it false', async () => {
      await allowTeamDomain();
      provider.people.set('ines', { email: 'ines@team.test', xms_edov: false });
      assert.equal((await signIn('ines')).landed.searchParams.get('sso_error'), 'unverified_email');
      provider.people.set('ines', { email: 'ines@team.test', xms_edov: true });
      const { session } = await signIn('ines');
      assert.equal(session.status, 200);
      assert.equal(session.body.user.email, 'ines@team.test');
    });

    it('refuses an e-mail with neither an invitation nor an allowed domain', async () => {
      provider.people.set('dave', { email: 'dave@elsewhere.test', email_verified: true });
      const { landed, session } = await signIn('dave');
      assert.equal(landed.searchParams.get('sso_error'), 'not_invited');
      assert.equal(session.status, 401);
      const people = await owner.app('GET', '/people');
      assert.ok(!people.body.some((p: { email: string }) => p.email === 'dave@elsewhere.test'), 'no person was made');
    });

    it('refuses a person removed from the account, though their domain is allowed', async () => {
      await allowTeamDomain();
      provider.people.set('erin', { email: 'erin@team.test', email_verified: true });
      const joined = await signIn('erin');
      assert.equal(joined.session.status, 200);
      assert.equal((await owner.app('DELETE', `/people/${joined.session.body.user.id}`)).status, 200);
      const again = await signIn('erin');
      assert.equal(again.landed.searchParams.get('sso_error'), 'removed');
      assert.equal(again.session.status, 401);
      // Under a new address at the provider too: the provider identity was removed with them.
      provider.people.set('erin', { email: 'erin2@team.test', email_verified: true });
      assert.equal((await signIn('erin')).landed.searchParams.get('sso_error'), 'removed');
    });

    it('refuses an answer whose state was tampered with', async () => {
      await allowTeamDomain();
      provider.people.set('frank', { email: 'frank@team.test', email_verified: true });
      const browser = new WebClient(herald.url);
      const { callback } = await toProviderAndBack(browser, provider, 'frank');
      callback.searchParams.set('state', `${callback.searchParams.get('state')}x`);
      const { landed, session } = await finish(herald, browser, callback);
      assert.equal(landed.searchParams.get('sso_error'), 'failed');
      assert.equal(session.status, 401);
    });

    it('refuses an answer without the sign-in this browser started', async () => {
      await allowTeamDomain();
      provider.people.set('frank', { email: 'frank@team.test', email_verified: true });
      const { callback } = await toProviderAndBack(new WebClient(herald.url), provider, 'frank');
      // Another browser (without the sign-in's cookie) brings the provider's answer.
      const other = new WebClient(herald.url);
      const { landed, session } = await finish(herald, other, callback);
      assert.equal(landed.searchParams.get('sso_error'), 'expired');
      assert.equal(session.status, 401);
    });

    it('refuses an ID token issued for another client', async () => {
      await allowTeamDomain();
      provider.people.set('gina', { email: 'gina@team.test', email_verified: true });
      provider.tamper = (claims) => ({ ...claims, aud: 'another-client' });
      const { landed, session } = await signIn('gina');
      assert.equal(landed.searchParams.get('sso_error'), 'failed');
      assert.equal(session.status, 401);
    });

    it('refuses an expired ID token', async () => {
      await allowTeamDomain();
      provider.people.set('gina', { email: 'gina@team.test', email_verified: true });
      const hourAgo = Math.floor(Date.now() / 1000) - 3600;
      provider.tamper = (claims) => ({ ...claims, iat: hourAgo - 600, exp: hourAgo });
      const { landed, session } = await signIn('gina');
      assert.equal(landed.searchParams.get('sso_error'), 'failed');
      assert.equal(session.status, 401);
      // The same token signed again unchanged goes through: the expiry alone was refused, not the signing.
      provider.tamper = (claims) => claims;
      assert.equal((await signIn('gina')).session.status, 200);
    });

    it('refuses an ID token that does not carry the nonce of the sign-in', async () => {
      await allowTeamDomain();
      provider.people.set('gina', { email: 'gina@team.test', email_verified: true });
      provider.tamper = (claims) => ({ ...claims, nonce: 'another sign-in' });
      const { landed, session } = await signIn('gina');
      assert.equal(landed.searchParams.get('sso_error'), 'failed');
      assert.equal(session.status, 401);
    });

    it('with passwords off, a member must use single sign-on (which finds their person) while the owner keeps their password', async () => {
      const invited = await owner.app('POST', '/invitations', { email: 'hana@example.com', role: 'member' });
      const hana = new WebClient(herald.url);
      const hanaId = (await hana.signUp('hana@example.com', PASSWORD, { invitation: invited.body.token })).body.user.id;
      assert.equal((await new WebClient(herald.url).logIn('hana@example.com')).status, 200);

      const off = await owner.route(routes.saveSsoSettings, { body: { allowedDomains: [], domainRole: 'member', passwordsOff: true } });
      assert.equal(off.status, 200);
      const refused = await new WebClient(herald.url).logIn('hana@example.com');
      assert.equal(refused.status, 403);
      assert.equal(refused.body.code, 'passwords_off');
      assert.match(refused.body.message, /Sign in with Test IdP/);
      // A wrong password still says only that: passwords off tells a stranger nothing.
      assert.equal((await new WebClient(herald.url).logIn('hana@example.com', 'not the password')).body.code, 'invalid_credentials');
      assert.equal((await new WebClient(herald.url).logIn('owner@example.com')).status, 200);

      // Nor can an invitation be taken up with a password meanwhile: the invitee joins through the provider.
      const later = await owner.app('POST', '/invitations', { email: 'ivan@example.com', role: 'member' });
      const withPassword = await new WebClient(herald.url).app('POST', '/auth/signup', {
        email: 'ivan@example.com',
        password: PASSWORD,
        invitation: later.body.token,
      });
      assert.equal(withPassword.status, 403);
      assert.equal(withPassword.body.code, 'passwords_off');
      provider.people.set('ivan', { email: 'ivan@example.com', email_verified: true });
      assert.equal((await signIn('ivan')).session.body.user.role, 'member');

      provider.people.set('hana-at-idp', { email: 'hana@example.com', email_verified: true });
      const { session } = await signIn('hana-at-idp');
      assert.equal(session.status, 200);
      assert.equal(session.body.user.id, hanaId);
      await owner.route(routes.saveSsoSettings, { body: { allowedDomains: [], domainRole: 'member', passwordsOff: false } });
    });

    it('the settings are the owner’s: an admin may not read or change them, and bad domains are named', async () => {
      const settings = await owner.route(routes.ssoSettings, {});
      assert.equal(settings.status, 200);
      assert.equal(settings.body.configured, true);
      assert.equal(settings.body.providerName, 'Test IdP');
      const bad = await owner.app('PUT', '/sso', { allowedDomains: ['not a domain'], domainRole: 'member', passwordsOff: false });
      assert.equal(bad.status, 400);
      assert.equal(bad.body.errors[0].path, 'allowedDomains.0');
      const alice = await signIn('alice');
      assert.equal(alice.session.body.user.role, 'admin');
      assert.equal((await alice.browser.app('GET', '/sso')).status, 403);
      assert.equal((await alice.browser.app('PUT', '/sso', { allowedDomains: [], domainRole: 'admin', passwordsOff: false })).status, 403);
    });
  });
}

describe('without single sign-on configured', () => {
  let herald: TestHerald;
  before(async () => {
    herald = await startHerald('sqlite');
  });
  after(async () => herald?.close());

  it('offers passwords only, and passwords cannot be turned off', async () => {
    const owner = new WebClient(herald.url);
    assert.deepEqual((await owner.route(routes.signInMethods, {})).body, { password: true, sso: null });
    await owner.signUp('owner@example.com', PASSWORD);
    const refused = await owner.app('PUT', '/sso', { allowedDomains: [], domainRole: 'member', passwordsOff: true });
    assert.equal(refused.status, 400);
    assert.equal(refused.body.errors[0].path, 'passwordsOff');
    assert.equal((await owner.request('GET', '/api/app/auth/oidc/start')).status, 404);
  });
});

describe('with the provider unreachable', () => {
  let herald: TestHerald;
  before(async () => {
    const closedPort = await freePort();
    herald = await startHerald('sqlite', {
      env: { HERALD_OIDC_ISSUER: `http://127.0.0.1:${closedPort}`, HERALD_OIDC_CLIENT_ID: 'herald', HERALD_OIDC_CLIENT_SECRET: 'not used' },
    });
  });
  after(async () => herald?.close());

  it('sends the browser back to the sign-in page, which says the provider cannot be reached', async () => {
    const browser = new WebClient(herald.url);
    const landed = location(await browser.request('GET', '/api/app/auth/oidc/start'), herald.url);
    assert.equal(landed.pathname, '/signin');
    assert.equal(landed.searchParams.get('sso_error'), 'unavailable');
  });
});
