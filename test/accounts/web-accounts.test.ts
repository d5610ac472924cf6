/**
 * The web side: people (sign up, sign in, invitations, roles), sessions with
 * CSRF protection, the API key screen (create, reveal, rotate, revoke, scopes)
 * and customers, all over HTTP against a real server on SQLite and PostgreSQL.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { addWebhookChannel, scheduledPost } from '../helpers/api-fixtures.ts';
import { untypedCaller, startHerald, testAccount, type TestHerald } from '../helpers/herald.ts';
import { testStores, storeSuite } from '../helpers/stores.ts';
import { WebClient } from './web-client.ts';

const PASSWORD = 'correct horse battery';

for (const store of await testStores()) {
  describe(`accounts, sessions and keys (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let owner: WebClient;
    let ownerAccountId: string;

    before(async () => {
      herald = await startHerald(store);
      owner = new WebClient(herald.url);
      const signedUp = await owner.signUp('Owner@Example.com', PASSWORD, { name: 'Olive Owner' });
      ownerAccountId = signedUp.body.account.id;
    });
    after(async () => herald?.close());

    describe('people and sessions', () => {
      it('the first person becomes the owner, with an HttpOnly SameSite session cookie', async () => {
        const session = await owner.app('GET', '/session');
        assert.equal(session.status, 200);
        assert.equal(session.body.user.email, 'owner@example.com');
        assert.equal(session.body.user.role, 'owner');
        assert.equal(session.body.csrfToken, owner.csrf);
        const fresh = new WebClient(herald.url);
        const login = await fresh.logIn('owner@example.com');
        assert.equal(login.status, 200);
        const cookie = login.headers.getSetCookie().find((c) => c.startsWith('herald_session='))!;
        assert.match(cookie, /HttpOnly/);
        assert.match(cookie, /SameSite=Lax/);
        const stored = await herald.services.store.db.selectFrom('users').select('password_hash').executeTakeFirstOrThrow();
        assert.match(stored.password_hash, /^scrypt\$/);
        assert.ok(!stored.password_hash.includes(PASSWORD), '!stored.password_hash.includes(PASSWORD)');
      });

      it('after the first person, signing up needs an invitation', async () => {
        const stranger = new WebClient(herald.url);
        const refused = await stranger.app('POST', '/auth/signup', { email: 'stranger@example.com', password: PASSWORD });
        assert.equal(refused.status, 403);
        assert.equal(refused.body.code, 'signup_closed');
        assert.equal((await stranger.app('GET', '/session')).status, 401);
      });

      it('a wrong password is refused, and signing out ends the session at once', async () => {
        const other = new WebClient(herald.url);
        const wrong = await other.logIn('owner@example.com', 'not the password');
        assert.equal(wrong.status, 401);
        assert.equal(wrong.body.code, 'invalid_credentials');
        assert.equal((await other.logIn('owner@example.com')).status, 200);
        const token = other.jar.get('herald_session')!;
        assert.equal((await other.app('POST', '/auth/logout')).status, 200);
        // Even a client that kept the cookie is signed out.
        const replay = await fetch(`${herald.url}/api/app/session`, { headers: { cookie: `herald_session=${token}` } });
        assert.equal(replay.status, 401);
      });

      it('an invited member joins the account; members may not manage keys or people', async () => {
        const invited = await owner.app('POST', '/invitations', { email: 'member@example.com', role: 'member' });
        assert.equal(invited.status, 201, JSON.stringify(invited.body));
        assert.ok(invited.body.token, 'invited.body.token');
        const member = new WebClient(herald.url);
        const wrongEmail = await member.app('POST', '/auth/signup', { email: 'someone@example.com', password: PASSWORD, invitation: invited.body.token });
        assert.equal(wrongEmail.status, 400);
        const joined = await member.signUp('member@example.com', PASSWORD, { invitation: invited.body.token });
        assert.equal(joined.body.user.role, 'member');
        assert.equal(joined.body.account.id, ownerAccountId);
        // An invitation works once.
        const again = await new WebClient(herald.url).app('POST', '/auth/signup', {
          email: 'member@example.com',
          password: PASSWORD,
          invitation: invited.body.token,
        });
        assert.equal(again.status, 400);

        const people = await owner.app('GET', '/people');
        assert.deepEqual(people.body.map((p: any) => p.email).sort(), ['member@example.com', 'owner@example.com']);
        const createKey = await member.app('POST', '/keys', { name: 'mine' });
        assert.equal(createKey.status, 403);
        assert.equal(createKey.body.code, 'forbidden');
        assert.equal((await member.app('POST', '/invitations', { email: 'x@example.com' })).status, 403);
        assert.equal((await member.app('GET', '/keys')).status, 200);

        // The owner promotes, then removes them: their session ends with them.
        const promoted = await owner.app('PATCH', `/people/${joined.body.user.id}`, { role: 'admin' });
        assert.equal(promoted.body.role, 'admin');
        assert.equal((await member.app('POST', '/keys', { name: 'as admin' })).status, 201);
        assert.equal((await owner.app('DELETE', `/people/${joined.body.user.id}`)).status, 200);
        assert.equal((await member.app('GET', '/session')).status, 401);
      });

      it('login attempts are limited per email, even with the right password afterwards', async () => {
        const invited = await owner.app('POST', '/invitations', { email: 'limited@example.com', role: 'member' });
        await new WebClient(herald.url).signUp('limited@example.com', PASSWORD, { invitation: invited.body.token });
        const client = new WebClient(herald.url);
        for (let i = 0; i < 10; i++) assert.equal((await client.logIn('limited@example.com', 'wrong password')).status, 401);
        const blocked = await client.logIn('limited@example.com');
        assert.equal(blocked.status, 429);
        assert.ok(Number(blocked.headers.get('retry-after')) > 0, "Number(blocked.headers.get('retry-after')) > 0");
        // Another person's sign-in is not affected.
        assert.equal((await new WebClient(herald.url).logIn('owner@example.com')).status, 200);
      });
    });

    describe('CSRF and the separation of session and API credentials', () => {
      it('a state-changing request without the CSRF token, or with a wrong one, is refused and changes nothing', async () => {
        const before = (await owner.app('GET', '/keys')).body.length;
        const missing = await owner.app('POST', '/keys', { name: 'csrf' }, { csrf: false });
        assert.equal(missing.status, 403);
        assert.equal(missing.body.code, 'csrf_failed');
        const wrong = await owner.app('POST', '/keys', { name: 'csrf' }, { csrf: false, headers: { 'x-csrf-token': 'forged' } });
        assert.equal(wrong.status, 403);
        assert.equal((await owner.app('GET', '/keys')).body.length, before);
      });

      it('the consent form refuses a post without the CSRF field (see the OAuth suite for the rest)', async () => {
        const answer = await owner.request('POST', '/oauth/login', { form: { email: 'owner@example.com', password: PASSWORD, mode: 'login', next: '/' } });
        assert.equal(answer.status, 403);
        assert.match(answer.text, /another site/);
      });

      it('sign-in and sign-up take JSON only, which a form on another site cannot send', async () => {
        // The right credentials, in each encoding an HTML form can use.
        const fields = { email: 'owner@example.com', password: PASSWORD };
        const multipart = new FormData();
        for (const [k, v] of Object.entries(fields)) multipart.append(k, v);
        const bodies: [string, RequestInit][] = [
          ['urlencoded', { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString() }],
          ['text/plain', { headers: { 'content-type': 'text/plain' }, body: 'email=owner@example.com\r\npassword=' + PASSWORD }],
          ['multipart', { body: multipart }],
        ];
        for (const path of ['/api/app/auth/login', '/api/app/auth/signup']) {
          for (const [what, init] of bodies) {
            const answer = await fetch(herald.url + path, { method: 'POST', ...init });
            assert.ok(answer.status === 400 || answer.status === 415, `${path} ${what}: ${answer.status}`);
            assert.equal(answer.headers.get('set-cookie'), null, `${path} ${what} set a cookie`);
          }
        }
      });

      it('a session cookie is not accepted by the public API', async () => {
        const answer = await owner.request('GET', '/api/public/v1/integrations');
        assert.equal(answer.status, 401);
        assert.equal(answer.body.code, 'missing_api_key');
      });

      it('an API key is not accepted by the web endpoints', async () => {
        const created = await owner.app('POST', '/keys', { name: 'for the API' });
        const key = created.body.key;
        for (const header of [key, `Bearer ${key}`]) {
          const answer = await fetch(`${herald.url}/api/app/keys`, { headers: { authorization: header } });
          assert.equal(answer.status, 401);
          assert.equal((await answer.json()).code, 'not_signed_in');
        }
      });
    });

    describe('API keys (Settings, Developers, Public API)', () => {
      it('create shows the key once; list never shows it; reveal shows it again', async () => {
        const created = await owner.app('POST', '/keys', { name: 'zapier' });
        assert.equal(created.status, 201);
        assert.match(created.body.key, /^hk_/);
        assert.equal(created.body.scopes, null);
        const listed = await owner.app('GET', '/keys');
        const mine = listed.body.find((k: any) => k.id === created.body.id);
        assert.equal(mine.name, 'zapier');
        assert.ok(!JSON.stringify(listed.body).includes(created.body.key), '!JSON.stringify(listed.body).includes(created.body.key)');
        const revealed = await owner.app('POST', `/keys/${created.body.id}/reveal`);
        assert.equal(revealed.body.key, created.body.key);
        const api = untypedCaller(herald.api, created.body.key);
        assert.equal((await api('GET', '/is-connected')).status, 200);
      });

      it('a rotated key is refused at once and the new one works', async () => {
        const created = await owner.app('POST', '/keys', { name: 'rotate me' });
        const old = untypedCaller(herald.api, created.body.key);
        assert.equal((await old('GET', '/integrations')).status, 200);
        const rotated = await owner.app('POST', `/keys/${created.body.id}/rotate`);
        assert.equal(rotated.status, 200);
        assert.notEqual(rotated.body.key, created.body.key);
        const refused = await old('GET', '/integrations');
        assert.equal(refused.status, 401);
        assert.equal(refused.body.code, 'invalid_api_key');
        assert.equal((await untypedCaller(herald.api, rotated.body.key)('GET', '/integrations')).status, 200);
      });

      it('a revoked key is refused at once and can no longer be revealed', async () => {
        const created = await owner.app('POST', '/keys', { name: 'revoke me' });
        const api = untypedCaller(herald.api, created.body.key);
        assert.equal((await api('GET', '/integrations')).status, 200);
        assert.equal((await owner.app('DELETE', `/keys/${created.body.id}`)).status, 200);
        assert.equal((await api('GET', '/integrations')).status, 401);
        assert.equal((await owner.app('POST', `/keys/${created.body.id}/reveal`)).status, 409);
        const listed = await owner.app('GET', '/keys');
        assert.equal(listed.body.find((k: any) => k.id === created.body.id).revoked, true);
      });

      it('a key with posts:read lists posts but cannot create them; unknown scopes are refused', async () => {
        const fullKey = (await owner.app('POST', '/keys', { name: 'full' })).body.key;
        const full = untypedCaller(herald.api, fullKey);
        const channel = await addWebhookChannel(testAccount(herald.api, ownerAccountId, fullKey));
        const readOnly = await owner.app('POST', '/keys', { name: 'reader', scopes: ['posts:read'] });
        assert.equal(readOnly.status, 201);
        assert.deepEqual(readOnly.body.scopes, ['posts:read']);
        const reader = untypedCaller(herald.api, readOnly.body.key);
        const start = new Date().toISOString();
        const end = new Date(Date.now() + 7 * 86_400_000).toISOString();
        assert.equal((await reader('GET', `/posts?startDate=${start}&endDate=${end}`)).status, 200);
        const create = await reader('POST', '/posts', scheduledPost(channel.id, 'not allowed'));
        assert.equal(create.status, 403);
        assert.equal(create.body.code, 'insufficient_scope');
        assert.match(create.body.message, /posts:write/);
        assert.equal((await reader('GET', `/posts?startDate=${start}&endDate=${end}`)).body.posts.length, 0);
        assert.equal((await reader('GET', '/integrations')).status, 403);
        assert.equal((await reader('GET', '/is-connected')).status, 200);
        // The full-access key may do it.
        assert.equal((await full('POST', '/posts', scheduledPost(channel.id, 'allowed'))).status, 201);

        const bad = await owner.app('POST', '/keys', { name: 'typo', scopes: ['posts:raed'] });
        assert.equal(bad.status, 400);
        assert.equal(bad.body.errors[0].path, 'scopes');
      });
    });

    describe('customers', () => {
      it('create, rename, assign channels, filter the API by them, delete', async () => {
        const key = (await owner.app('POST', '/keys', { name: 'customers' })).body.key;
        const api = untypedCaller(herald.api, key);
        const account = testAccount(herald.api, ownerAccountId, key);
        const [a, b] = [await addWebhookChannel(account, { name: 'A' }), await addWebhookChannel(account, { name: 'B' })];
        const created = await owner.app('POST', '/customers', { name: 'Acme' });
        assert.equal(created.status, 201);
        const id = created.body.id;
        assert.equal((await owner.app('PATCH', `/customers/${id}`, { name: 'Acme Ltd' })).body.name, 'Acme Ltd');
        const assigned = await owner.app('PUT', `/customers/${id}/channels`, { channels: [a.id] });
        assert.deepEqual(assigned.body.channels, [a.id]);

        const groups = await api('GET', '/groups');
        assert.ok(
          groups.body.some((g: any) => g.id === id && g.name === 'Acme Ltd'),
          "groups.body.some((g: any) => g.id === id && g.name === 'Acme Ltd')",
        );
        const inGroup = await api('GET', `/integrations?group=${id}`);
        assert.deepEqual(
          inGroup.body.map((c: any) => c.id),
          [a.id],
        );
        assert.deepEqual(inGroup.body[0].customer, { id, name: 'Acme Ltd' });
        await api('POST', '/posts', scheduledPost(a.id, 'for Acme'));
        await api('POST', '/posts', scheduledPost(b.id, 'for nobody'));
        const start = new Date().toISOString();
        const end = new Date(Date.now() + 7 * 86_400_000).toISOString();
        const filtered = await api('GET', `/posts?startDate=${start}&endDate=${end}&customer=${id}`);
        assert.deepEqual(
          filtered.body.posts.map((p: any) => p.content),
          ['for Acme'],
        );

        const unknown = await owner.app('PUT', `/customers/${id}/channels`, { channels: [a.id, 'no-such-channel'] });
        assert.equal(unknown.status, 404);
        assert.equal(unknown.body.errors[0].path, 'channels.1');
        // Reassigning makes the list exact: b in, a out.
        assert.deepEqual((await owner.app('PUT', `/customers/${id}/channels`, { channels: [b.id] })).body.channels, [b.id]);
        assert.deepEqual(
          (await api('GET', `/integrations?group=${id}`)).body.map((c: any) => c.id),
          [b.id],
        );

        assert.equal((await owner.app('DELETE', `/customers/${id}`)).status, 200);
        assert.ok(!(await api('GET', '/groups')).body.some((g: any) => g.id === id), "!(await api('GET', '/groups')).body.some((g: any) => g.id === id)");
        const channels = await api('GET', '/integrations');
        assert.ok(
          channels.body.every((c: any) => c.customer === null),
          'channels.body.every((c: any) => c.customer === null)',
        );
        assert.equal((await owner.app('DELETE', `/customers/${id}`)).status, 404);
      });

      it("another account's customers are invisible", async () => {
        const other = await herald.newAccount('Other');
        const theirs = await other.callUntyped('POST', '/groups', { name: 'Theirs' });
        assert.equal((await owner.app('PATCH', `/customers/${theirs.body.id}`, { name: 'Mine now' })).status, 404);
        assert.ok(
          !(await owner.app('GET', '/customers')).body.some((c: any) => c.id === theirs.body.id),
          "!(await owner.app('GET', '/customers')).body.some((c: any) => c.id === theirs.body.id)",
        );
      });
    });
  });
}

for (const store of await testStores()) {
  describe(`parallel first sign-ups (${store})`, storeSuite(store), () => {
    it('ten people at once: exactly one owner, the others are told sign-up is closed; never a 500', async () => {
      const herald = await startHerald(store);
      try {
        const answers = await Promise.all(
          Array.from({ length: 10 }, (_, i) => new WebClient(herald.url).app('POST', '/auth/signup', { email: `first${i}@example.com`, password: PASSWORD })),
        );
        const statuses = answers.map((a) => a.status).sort();
        assert.deepEqual(statuses, [201, ...Array(9).fill(403)], JSON.stringify(answers.map((a) => a.body)));
        const owners = await herald.services.store.db.selectFrom('users').select(['account_id', 'role']).execute();
        assert.deepEqual(
          owners.map((o) => o.role),
          ['owner'],
          'one person, the owner',
        );
        assert.equal(await herald.services.accounts.ownerAccount(), owners[0]!.account_id, "the installation's owner account is the owner's");
      } finally {
        await herald.close();
      }
    });

    it('one address signed up ten times at once: one person, the others get 409 email_taken', async () => {
      const herald = await startHerald(store);
      try {
        const answers = await Promise.all(
          Array.from({ length: 10 }, () => new WebClient(herald.url).app('POST', '/auth/signup', { email: 'same@example.com', password: PASSWORD })),
        );
        const winners = answers.filter((a) => a.status === 201);
        assert.equal(winners.length, 1, JSON.stringify(answers.map((a) => [a.status, a.body?.code])));
        for (const a of answers.filter((x) => x.status !== 201))
          assert.ok(a.status === 409 || a.status === 403, `answered ${a.status} ${JSON.stringify(a.body)}`);
        const count = await herald.services.store.db.selectFrom('users').select('id').execute();
        assert.equal(count.length, 1, 'one person');
      } finally {
        await herald.close();
      }
    });
  });
}
