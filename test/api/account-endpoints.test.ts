import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { untypedCaller, PNG_1x1, startHerald, upload, type TestAccount, type TestHerald } from '../helpers/herald.ts';
import { testStores, storeSuite } from '../helpers/stores.ts';
import { assertError, idRoutes, startFileServer, type FileServer } from '../helpers/api-fixtures.ts';
import { teardown } from '../helpers/teardown.ts';

/** Fetches a URL and returns status, content type and bytes. */
async function download(url: string) {
  const response = await fetch(url);
  return { status: response.status, type: response.headers.get('content-type'), bytes: Buffer.from(await response.arrayBuffer()) };
}

for (const store of await testStores()) {
  describe(`account endpoints, media and documented errors (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let account: TestAccount;
    let files: FileServer;

    before(async () => {
      herald = await startHerald(store);
      account = await herald.newAccount();
      files = await startFileServer(PNG_1x1);
    });
    after(() =>
      teardown(
        () => herald.close(),
        () => files.close(),
      ),
    );

    it('GET /is-connected answers {connected: true} for a raw key, a Bearer key, and a GET sent with Content-Type: application/json', async () => {
      const raw = await account.callUntyped('GET', '/is-connected');
      assert.deepEqual([raw.status, raw.body], [200, { connected: true }]);
      const bearer = await untypedCaller(herald.api, `Bearer ${account.key}`)('GET', '/is-connected');
      assert.deepEqual([bearer.status, bearer.body], [200, { connected: true }]);
      const withType = await account.callUntyped('GET', '/is-connected', undefined, { 'content-type': 'application/json' });
      assert.deepEqual([withType.status, withType.body], [200, { connected: true }]);
    });

    it('401 with a JSON error body without Authorization, with an unknown key and with a revoked key, on every kind of route', async () => {
      const anonymous = untypedCaller(herald.api);
      const unknown = untypedCaller(herald.api, 'hk_this-key-does-not-exist');
      const other = await herald.newAccount('Revoked');
      const keys = await herald.services.accounts.listKeys(other.id);
      await herald.services.accounts.revokeKey(other.id, keys[0].id);
      const routes: [string, string, unknown?][] = [
        ['GET', '/is-connected'],
        ['GET', '/integrations'],
        ['GET', '/posts?startDate=2030-01-01T00:00:00Z&endDate=2030-02-01T00:00:00Z'],
        ['POST', '/posts', { type: 'draft', posts: [] }],
        ['DELETE', '/posts/some-id'],
        ['POST', '/upload-from-url', { url: `${files.url}/file.png` }],
      ];
      for (const [method, route, body] of routes) {
        assertError(await anonymous(method, route, body), 401, { code: 'missing_api_key', path: 'headers.authorization' });
        assertError(await unknown(method, route, body), 401, { path: 'headers.authorization' });
        assertError(await other.callUntyped(method, route, body), 401, { path: 'headers.authorization' });
      }
      const media = await herald.services.store.db.selectFrom('media').select('id').execute();
      assert.equal(media.length, 0, 'no refused request stored anything');
    });

    it('/public/v1/... without the /api prefix is a JSON 404 saying to add /api; duplicate slashes are merged', async () => {
      for (const route of ['/public/v1/is-connected', '//public/v1/posts?startDate=x', '/public/v1/integrations/']) {
        const answer = await untypedCaller(herald.url, account.key)('GET', route);
        assertError(answer, 404, { message: /\/api/ });
      }
      const merged = await untypedCaller(`${herald.url}/api/`, account.key)('GET', '/public/v1/is-connected');
      assert.deepEqual([merged.status, merged.body], [200, { connected: true }]);
      assertError(await account.callUntyped('GET', '/no-such-route'), 404);
    });

    it('404 with a JSON error body for unknown ids on every :id route', async () => {
      for (const [method, route, body] of idRoutes({ channel: 'no-such-channel', post: 'no-such-post', group: 'no-such-group' })) {
        const answer = await account.callUntyped(method, route, body);
        assert.equal(answer.status, 404, `${method} ${route}: ${JSON.stringify(answer.body)}`);
        assertError(answer, 404);
      }
    });

    it('groups: create customers and list them by name; a bad name is 400', async () => {
      assert.deepEqual((await account.callUntyped('GET', '/groups')).body, []);
      const beta = await account.callUntyped('POST', '/groups', { name: 'Beta' });
      const alpha = await account.callUntyped('POST', '/groups', { name: 'Alpha' });
      assert.equal(beta.status, 201);
      assert.deepEqual(alpha.body.name, 'Alpha');
      const list = await account.callUntyped('GET', '/groups');
      assert.deepEqual(list.body, [alpha.body, beta.body]);
      assertError(await account.callUntyped('POST', '/groups', {}), 400, { path: 'name' });
      assertError(await account.callUntyped('POST', '/groups', { name: '   ' }), 400, { path: 'name' });
      assert.equal((await account.callUntyped('GET', '/groups')).body.length, 2);
    });

    it('notifications are paged newest first, with total, page, limit and hasMore', async () => {
      const empty = await account.callUntyped('GET', '/notifications');
      assert.deepEqual(empty.body, { notifications: [], total: 0, page: 0, limit: empty.body.limit, hasMore: false });
      const { limit } = empty.body;
      for (let i = 0; i < limit; i++) await herald.services.notifications.add(account.id, `older ${i}`);
      // Made a minute ago, so the next one is the newest whatever the clock's resolution.
      const aMinuteAgo = Date.now() - 60_000;
      await herald.services.store.db.updateTable('notifications').set({ created_at: aMinuteAgo }).where('account_id', '=', account.id).execute();
      await herald.services.notifications.add(account.id, 'newest', '/api/public/v1/posts/x');

      const first = await account.callUntyped('GET', '/notifications?page=0');
      assert.deepEqual([first.body.total, first.body.page, first.body.hasMore, first.body.notifications.length], [limit + 1, 0, true, limit]);
      assert.deepEqual(first.body.notifications[0].content, 'newest');
      assert.equal(first.body.notifications[0].link, '/api/public/v1/posts/x');
      assert.ok(!Number.isNaN(Date.parse(first.body.notifications[0].createdAt)), 'each notification says when it was made, as a date clients parse');
      const second = await account.callUntyped('GET', '/notifications?page=1');
      assert.deepEqual([second.body.page, second.body.hasMore, second.body.notifications.length], [1, false, 1]);
      const ids = new Set([...first.body.notifications, ...second.body.notifications].map((n: any) => n.id));
      assert.equal(ids.size, limit + 1, 'the pages do not overlap');
      assertError(await account.callUntyped('GET', '/notifications?page=abc'), 400, { path: 'page' });
      assertError(await account.callUntyped('GET', '/notifications?page=-1'), 400, { path: 'page' });
    });

    it('POST /upload stores the file on the upload host and reads its type from the bytes', async () => {
      const uploaded = await upload(account, herald.api, PNG_1x1, 'photo.png');
      assert.equal(uploaded.status, 201, JSON.stringify(uploaded.body));
      for (const key of ['id', 'name', 'originalName', 'path', 'thumbnail', 'alt']) assert.ok(key in uploaded.body, `media has ${key}`);
      assert.equal(uploaded.body.originalName, 'photo.png');
      assert.ok(uploaded.body.path.startsWith(`${herald.url}/uploads/`), uploaded.body.path);
      const served = await download(uploaded.body.path);
      assert.deepEqual([served.status, served.type, served.bytes.equals(PNG_1x1)], [200, 'image/png', true]);

      for (const name of ['png', 'holiday.jpg']) {
        const named = await upload(account, herald.api, PNG_1x1, name);
        assert.equal(named.status, 201, `${name}: ${JSON.stringify(named.body)}`);
        assert.equal(named.body.mimeType, 'image/png');
        assert.match(named.body.path, /\.png$/);
      }
    });

    it('POST /upload refuses what is not an accepted file, storing nothing', async () => {
      const before = await herald.services.store.db.selectFrom('media').select('id').where('account_id', '=', account.id).execute();
      assertError(await upload(account, herald.api, Buffer.from('just some text, not an image'), 'fake.png'), 415, { path: 'file' });
      assertError(await upload(account, herald.api, Buffer.alloc(0), 'empty.png'), 400, { path: 'file' });
      assertError(await account.callUntyped('POST', '/upload', { file: PNG_1x1.toString('base64') }), 415);
      const wrongField = new FormData();
      wrongField.append('image', new Blob([PNG_1x1]), 'photo.png');
      assertError(await account.callUntyped('POST', '/upload', wrongField), 400, { path: 'image' });
      const after = await herald.services.store.db.selectFrom('media').select('id').where('account_id', '=', account.id).execute();
      assert.equal(after.length, before.length);
    });

    it('POST /upload-from-url fetches from an allowed local host and stores the bytes', async () => {
      const fetched = await account.callUntyped('POST', '/upload-from-url', { url: `${files.url}/file.png?size=small` });
      assert.equal(fetched.status, 201, JSON.stringify(fetched.body));
      assert.equal(fetched.body.mimeType, 'image/png');
      assert.equal(fetched.body.originalName, 'file.png');
      assert.ok(fetched.body.path.startsWith(`${herald.url}/uploads/`), 'fetched.body.path.startsWith(`${herald.url}/uploads/`)');
      assert.ok((await download(fetched.body.path)).bytes.equals(PNG_1x1), '(await download(fetched.body.path)).bytes.equals(PNG_1x1)');
    });

    it('POST /upload-from-url: bad, unreachable and private URLs are 400 naming url', async () => {
      const cases: unknown[] = [
        {},
        { url: '' },
        { url: 'not a url' },
        { url: 'file:///etc/passwd' },
        { url: `${files.url}/missing.png` },
        { url: 'http://169.254.169.254/latest/meta-data/' },
        { url: 'http://10.0.0.1/file.png' },
        { url: 'http://user:pw@127.0.0.1/file.png' },
      ];
      for (const body of cases) assertError(await account.callUntyped('POST', '/upload-from-url', body), 400, { path: 'url' });
    });
  });

  describe(`upload-from-url without HERALD_ALLOW_PRIVATE_HOSTS (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let files: FileServer;

    before(async () => {
      herald = await startHerald(store, { env: { HERALD_ALLOW_PRIVATE_HOSTS: '' } });
      files = await startFileServer(PNG_1x1);
    });
    after(() =>
      teardown(
        () => herald.close(),
        () => files.close(),
      ),
    );

    it('refuses 127.0.0.1 and names that resolve to it with 400, storing nothing', async () => {
      const account = await herald.newAccount();
      const port = new URL(files.url).port;
      for (const url of [`${files.url}/file.png`, `http://localhost:${port}/file.png`, `http://[::1]:${port}/file.png`]) {
        assertError(await account.callUntyped('POST', '/upload-from-url', { url }), 400, { path: 'url', code: 'url_refused' });
      }
      assert.equal((await herald.services.store.db.selectFrom('media').select('id').execute()).length, 0);
    });
  });
}
