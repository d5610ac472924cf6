/**
 * Behaviours the other existing clients of this API (the Node SDK, the n8n node,
 * MCP servers) rely on, each reproduced the way those clients send it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { untypedCaller, PNG_1x1, startHerald, upload, type TestAccount, type TestHerald } from '../helpers/herald.ts';
import { addWebhookChannel, assertError, createPosts, entry, postBody } from '../helpers/api-fixtures.ts';
import { JPEG_1x1 } from '../helpers/jpeg.ts';
import { rawRequest } from '../helpers/raw-request.ts';
import { testStores, storeSuite } from '../helpers/stores.ts';

/** Small caps so the 413 and 429 answers are cheap to reach. */
const MAX_IMAGE_BYTES = 4096;
const ENV = { HERALD_POSTS_PER_HOUR: '1', HERALD_MAX_IMAGE_BYTES: String(MAX_IMAGE_BYTES) };

for (const store of await testStores()) {
  describe(`what SDK, n8n and MCP clients rely on (${store})`, storeSuite(store), () => {
    let herald: TestHerald;

    /** POST /posts is allowed once per hour per account here, so each posting test gets its own account. */
    async function accountWithChannel(): Promise<{ account: TestAccount; channelId: string }> {
      const account = await herald.newAccount();
      const channel = await addWebhookChannel(account);
      return { account, channelId: channel.id };
    }

    /** Creates posts from `body` and returns the stored root post (GET /posts/{id}). */
    async function createAndRead(account: TestAccount, body: unknown) {
      const created = await account.callUntyped('POST', '/posts', body);
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const detail = await account.callUntyped('GET', `/posts/${created.body[0].postId}`);
      assert.equal(detail.status, 200);
      return detail.body;
    }

    before(async () => {
      herald = await startHerald(store, { env: ENV });
    });
    after(async () => {
      await herald?.close();
    });

    describe('upload', () => {
      let account: TestAccount;
      before(async () => {
        account = await herald.newAccount();
      });

      async function servedType(path: string): Promise<string | null> {
        const served = await fetch(path);
        assert.equal(served.status, 200);
        await served.arrayBuffer();
        return served.headers.get('content-type');
      }

      it('takes a file name without an extension (filename="png") and reads the type from the bytes', async () => {
        const uploaded = await upload(account, herald.api, PNG_1x1, 'png');
        assert.equal(uploaded.status, 201, JSON.stringify(uploaded.body));
        assert.equal(uploaded.body.mimeType, 'image/png');
        assert.equal(uploaded.body.originalName, 'png');
        assert.ok(uploaded.body.path.startsWith(`${herald.url}/uploads/`), 'uploaded.body.path.startsWith(`${herald.url}/uploads/`)');
        assert.match((await servedType(uploaded.body.path)) ?? '', /^image\/png/);
      });

      it('stores JPEG bytes named .png as image/jpeg', async () => {
        const uploaded = await upload(account, herald.api, JPEG_1x1, 'photo.png');
        assert.equal(uploaded.status, 201, JSON.stringify(uploaded.body));
        assert.equal(uploaded.body.mimeType, 'image/jpeg');
        assert.match((await servedType(uploaded.body.path)) ?? '', /^image\/jpeg/);
      });
    });

    describe('every error is JSON with msg equal to message', () => {
      let account: TestAccount;
      before(async () => {
        account = await herald.newAccount();
      });

      it('401: missing or unknown key', async () => {
        assertError(await untypedCaller(herald.api)('GET', '/integrations'), 401);
        assertError(await untypedCaller(herald.api, 'wrong-key')('GET', '/integrations'), 401);
      });

      it('404: unknown post and unknown route', async () => {
        assertError(await account.callUntyped('GET', '/posts/no-such-post'), 404);
        assertError(await account.callUntyped('GET', '/no-such-route'), 404);
      });

      it('400: a body that breaks the rules', async () => {
        assertError(
          await account.callUntyped('POST', '/posts', { type: 'sometime', date: '2030-01-01T00:00:00Z', shortLink: false, tags: [], posts: [] }),
          400,
        );
      });

      it('413: a file over the size cap', async () => {
        const tooBig = Buffer.concat([PNG_1x1, Buffer.alloc(MAX_IMAGE_BYTES * 2)]);
        assertError(await upload(account, herald.api, tooBig, 'big.png'), 413);
      });

      it('415: a file that is not an accepted media type', async () => {
        assertError(await upload(account, herald.api, Buffer.from('just some text, not an image'), 'notes.png'), 415);
      });

      it('431: headers larger than the server accepts (answered before routing)', async () => {
        assertError(await account.callUntyped('GET', '/integrations', undefined, { 'x-padding': 'x'.repeat(20_000) }), 431);
      });

      it('429: POST /posts over the hourly allowance, with Retry-After and rate-limit headers', async () => {
        const { account: poster, channelId } = await accountWithChannel();
        const body = postBody('draft', [entry(channelId, ['within the allowance'])]);
        const first = await poster.callUntyped('POST', '/posts', body);
        assert.equal(first.status, 201, JSON.stringify(first.body));
        const second = await poster.callUntyped('POST', '/posts', { ...body, posts: [entry(channelId, ['one too many'])] });
        assertError(second, 429);
        assert.ok(Number(second.headers.get('retry-after')) > 0, "Number(second.headers.get('retry-after')) > 0");
        assert.equal(second.headers.get('x-ratelimit-limit'), '1');
        assert.equal(second.headers.get('ratelimit-remaining'), '0');
      });
    });

    describe('POST /posts as the clients send it', () => {
      it("accepts n8n's extra fields: value[].id '', posts[].group '', creationMethod, delay, settings.__type", async () => {
        const { account, channelId } = await accountWithChannel();
        const body = postBody(
          'schedule',
          [
            entry(
              channelId,
              [
                { id: '', content: 'from n8n', delay: 0 },
                { id: '', content: 'a reply', delay: 5 },
              ],
              { group: '', settings: { __type: 'webhook' } },
            ),
          ],
          { creationMethod: 'n8n' },
        );
        const post = await createAndRead(account, body);
        assert.equal(post.state, 'QUEUE');
        assert.equal(post.creationMethod, 'n8n');
        assert.equal(post.settings.__type, 'webhook');
        assert.ok(post.group, 'an empty group means "new group"');
        assert.deepEqual(
          post.thread.map((t: any) => [t.content, t.delay]),
          [
            ['from n8n', 0],
            ['a reply', 5],
          ],
        );
      });

      it('accepts tags as {value, label} objects and as plain strings', async () => {
        const { account, channelId } = await accountWithChannel();
        const post = await createAndRead(account, postBody('draft', [entry(channelId, ['tagged'])], { tags: [{ value: 'launch', label: 'Launch' }, 'news'] }));
        assert.deepEqual(post.tags, [
          { value: 'launch', label: 'Launch' },
          { value: 'news', label: 'news' },
        ]);
      });

      it('takes a date without an offset as UTC', async () => {
        const { account, channelId } = await accountWithChannel();
        const post = await createAndRead(account, postBody('draft', [entry(channelId, ['no offset'])], { date: '2026-12-01T09:00:00' }));
        assert.equal(post.publishDate, '2026-12-01T09:00:00.000Z');
      });

      it('normalises a date with an offset to UTC', async () => {
        const { account, channelId } = await accountWithChannel();
        const post = await createAndRead(account, postBody('draft', [entry(channelId, ['with offset'])], { date: '2026-12-01T11:00:00+02:00' }));
        assert.equal(post.publishDate, '2026-12-01T09:00:00.000Z');
      });
    });

    describe('requests as the clients send them', () => {
      let account: TestAccount;
      let channelId: string;
      before(async () => {
        ({ account, channelId } = await accountWithChannel());
      });

      it('GET /is-connected answers {connected: true}', async () => {
        const answer = await account.callUntyped('GET', '/is-connected');
        assert.equal(answer.status, 200);
        assert.deepEqual(answer.body, { connected: true });
      });

      it('accepts "Authorization: Bearer <key>"', async () => {
        const answer = await untypedCaller(herald.api, `Bearer ${account.key}`)('GET', '/integrations');
        assert.equal(answer.status, 200);
        assert.deepEqual(
          answer.body.map((c: any) => c.id),
          [channelId],
        );
      });

      it('merges duplicate slashes (/api//public/v1/integrations)', async () => {
        const answer = await untypedCaller(`${herald.url}/api//public/v1`, account.key)('GET', '/integrations');
        assert.equal(answer.status, 200);
        assert.deepEqual(
          answer.body.map((c: any) => c.id),
          [channelId],
        );
      });

      it('accepts Content-Type: application/json with no body on GET and DELETE', async () => {
        // Two posts from one request (POST /posts is allowed once per hour here).
        const created = await createPosts(account, postBody('draft', [entry(channelId, ['first to delete']), entry(channelId, ['second to delete'])]));
        const headers = { authorization: account.key, 'content-type': 'application/json' };
        // With no Content-Length at all (node-fetch on GET/DELETE), and with "Content-Length: 0".
        const variants: Record<string, string>[] = [{}, { 'content-length': '0' }];
        for (const [i, extra] of variants.entries()) {
          const listed = await rawRequest(`${herald.api}/integrations`, 'GET', { ...headers, ...extra });
          assert.equal(listed.status, 200, listed.text);
          assert.deepEqual(
            JSON.parse(listed.text).map((c: any) => c.id),
            [channelId],
          );
          const deleted = await rawRequest(`${herald.api}/posts/${created[i].postId}`, 'DELETE', { ...headers, ...extra });
          assert.equal(deleted.status, 200, deleted.text);
          assert.equal(JSON.parse(deleted.text).deleted, true);
          assert.equal((await account.callUntyped('GET', `/posts/${created[i].postId}`)).status, 404);
        }
      });
    });
  });
}
