import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PNG_1x1, startHerald, type UntypedResult, type TestAccount, type TestHerald, uploadUntyped } from '../helpers/herald.ts';
import { startHeldFileServer, type HeldFileServer } from '../helpers/held-file-server.ts';
import { addWebhookChannel, countRows, scheduledPost } from '../helpers/api-fixtures.ts';
import { testStores, storeSuite } from '../helpers/stores.ts';
import { teardown } from '../helpers/teardown.ts';

const withKey = (key: string) => ({ 'idempotency-key': key });
const replayed = (r: UntypedResult) => r.headers.get('idempotent-replayed');

for (const store of await testStores()) {
  describe(`Idempotency-Key on creating requests (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let files: HeldFileServer;
    let alice: TestAccount;
    let bob: TestAccount;
    let aliceChannel: string;

    before(async () => {
      herald = await startHerald(store);
      files = await startHeldFileServer();
      alice = await herald.newAccount('Alice');
      bob = await herald.newAccount('Bob');
      aliceChannel = (await addWebhookChannel(alice)).id;
    });
    after(() =>
      teardown(
        () => herald.close(),
        () => files.close(),
      ),
    );

    it('POST /posts: the same key and body replays the stored answer and creates nothing', async () => {
      const body = scheduledPost(aliceChannel, 'once only');
      const first = await alice.callUntyped('POST', '/posts', body, withKey('post-once'));
      assert.equal(first.status, 201, JSON.stringify(first.body));
      assert.equal(replayed(first), null);
      const stored = await countRows(herald, 'posts', alice.id);

      const again = await alice.callUntyped('POST', '/posts', body, withKey('post-once'));
      assert.equal(again.status, 201);
      assert.equal(replayed(again), 'true');
      assert.deepEqual(again.body, first.body);
      assert.equal(await countRows(herald, 'posts', alice.id), stored);
      assert.equal((await alice.callUntyped('GET', `/posts/${first.body[0].postId}`)).body.content, 'once only');
    });

    it('POST /posts: the same key with another body is 422 and creates nothing', async () => {
      const first = await alice.callUntyped('POST', '/posts', scheduledPost(aliceChannel, 'original'), withKey('post-mismatch'));
      assert.equal(first.status, 201);
      const stored = await countRows(herald, 'posts', alice.id);
      const other = await alice.callUntyped('POST', '/posts', scheduledPost(aliceChannel, 'something else'), withKey('post-mismatch'));
      assert.equal(other.status, 422);
      assert.equal(other.body.code, 'idempotency_key_mismatch');
      assert.equal(other.body.statusCode, 422);
      assert.equal(await countRows(herald, 'posts', alice.id), stored);
    });

    it('POST /posts: a request rejected by validation frees its key for the corrected retry', async () => {
      const key = withKey('post-fix-and-retry');
      const good = scheduledPost(aliceChannel, 'fixed at last');
      const before = await countRows(herald, 'posts', alice.id);
      const badShape = await alice.callUntyped('POST', '/posts', { ...good, type: 'later' }, key);
      assert.equal(badShape.status, 400);
      const { date: _date, ...noDate } = good;
      const badRule = await alice.callUntyped('POST', '/posts', noDate, key);
      assert.equal(badRule.status, 400, 'schedule without date is refused');
      assert.deepEqual(
        badRule.body.errors.map((e: any) => e.path),
        ['date'],
      );

      const fixed = await alice.callUntyped('POST', '/posts', good, key);
      assert.equal(fixed.status, 201, JSON.stringify(fixed.body));
      assert.equal(replayed(fixed), null);
      assert.equal(await countRows(herald, 'posts', alice.id), before + 1);
      assert.equal(replayed(await alice.callUntyped('POST', '/posts', good, key)), 'true');
    });

    it('POST /posts: an answer older than 24 hours is not replayed', async () => {
      const body = scheduledPost(aliceChannel, 'yesterday and today');
      const first = await alice.callUntyped('POST', '/posts', body, withKey('post-old'));
      assert.equal(first.status, 201);
      await herald.services.store.db
        .updateTable('idempotency_keys')
        .set((eb) => ({ created_at: eb('created_at', '-', 25 * 3_600_000) }))
        .where('account_id', '=', alice.id)
        .where('key', '=', 'post-old')
        .execute();
      const stored = await countRows(herald, 'posts', alice.id);
      const later = await alice.callUntyped('POST', '/posts', body, withKey('post-old'));
      assert.equal(later.status, 201);
      assert.equal(replayed(later), null);
      assert.notEqual(later.body[0].postId, first.body[0].postId);
      assert.equal(await countRows(herald, 'posts', alice.id), stored + 1);
    });

    it('POST /upload: the same bytes replay the stored media; other bytes are 422', async () => {
      const first = await uploadUntyped(alice, herald.api, PNG_1x1, 'pixel.png', withKey('upload-1'));
      assert.equal(first.status, 201, JSON.stringify(first.body));
      assert.equal(replayed(first), null);
      const stored = await countRows(herald, 'media', alice.id);

      const again = await uploadUntyped(alice, herald.api, PNG_1x1, 'pixel.png', withKey('upload-1'));
      assert.equal(again.status, 201);
      assert.equal(replayed(again), 'true');
      assert.deepEqual(again.body, first.body);

      const otherBytes = Buffer.concat([PNG_1x1, Buffer.from('trailing')]);
      const other = await uploadUntyped(alice, herald.api, otherBytes, 'pixel.png', withKey('upload-1'));
      assert.equal(other.status, 422);
      assert.equal(other.body.code, 'idempotency_key_mismatch');
      assert.equal(await countRows(herald, 'media', alice.id), stored);
    });

    it('POST /upload: a repeat replays also when the file name is cleaned on the way in (spaces around it)', async () => {
      const first = await uploadUntyped(alice, herald.api, PNG_1x1, ' pixel.png ', withKey('upload-folder'));
      assert.equal(first.status, 201, JSON.stringify(first.body));
      const again = await uploadUntyped(alice, herald.api, PNG_1x1, ' pixel.png ', withKey('upload-folder'));
      assert.equal(again.status, 201, JSON.stringify(again.body));
      assert.equal(replayed(again), 'true');
      assert.deepEqual(again.body, first.body);
    });

    it('POST /upload: a refused file frees the key for a retry', async () => {
      const refused = await uploadUntyped(alice, herald.api, Buffer.from('just some text, not an image'), 'notes.txt', withKey('upload-retry'));
      assert.ok(refused.status >= 400 && refused.status < 500, `refused with a 4xx, got ${refused.status}`);
      const retry = await uploadUntyped(alice, herald.api, PNG_1x1, 'pixel.png', withKey('upload-retry'));
      assert.equal(retry.status, 201, JSON.stringify(retry.body));
      assert.equal(replayed(retry), null);
    });

    it('POST /upload-from-url: a repeat replays without fetching again; another URL is 422', async () => {
      const url = `${files.url}/replay.png`;
      const first = await alice.callUntyped('POST', '/upload-from-url', { url }, withKey('fetch-1'));
      assert.equal(first.status, 201, JSON.stringify(first.body));
      const stored = await countRows(herald, 'media', alice.id);

      const again = await alice.callUntyped('POST', '/upload-from-url', { url }, withKey('fetch-1'));
      assert.equal(again.status, 201);
      assert.equal(replayed(again), 'true');
      assert.deepEqual(again.body, first.body);
      assert.equal(files.hits.get('/replay.png'), 1, 'the replay did not fetch the file again');

      const other = await alice.callUntyped('POST', '/upload-from-url', { url: `${files.url}/other.png` }, withKey('fetch-1'));
      assert.equal(other.status, 422);
      assert.equal(files.hits.get('/other.png'), undefined);
      assert.equal(await countRows(herald, 'media', alice.id), stored);
    });

    it('POST /upload-from-url: a second request while the first is in flight is 409', async () => {
      const body = { url: `${files.url}/slow.png` };
      const stored = await countRows(herald, 'media', alice.id);
      const hold = files.holdNext();
      const first = alice.callUntyped('POST', '/upload-from-url', body, withKey('fetch-slow'));
      await hold.arrived;

      const meanwhile = await alice.callUntyped('POST', '/upload-from-url', body, withKey('fetch-slow'));
      assert.equal(meanwhile.status, 409);
      assert.equal(meanwhile.body.code, 'idempotency_key_in_flight');

      hold.release();
      const done = await first;
      assert.equal(done.status, 201, JSON.stringify(done.body));
      const after = await alice.callUntyped('POST', '/upload-from-url', body, withKey('fetch-slow'));
      assert.equal(replayed(after), 'true');
      assert.deepEqual(after.body, done.body);
      assert.equal(files.hits.get('/slow.png'), 1);
      assert.equal(await countRows(herald, 'media', alice.id), stored + 1);
    });

    it('POST /upload-from-url: a failed fetch frees the key for a retry', async () => {
      const failed = await alice.callUntyped('POST', '/upload-from-url', { url: `${files.url}/missing.png` }, withKey('fetch-retry'));
      assert.equal(failed.status, 400);
      assert.equal(failed.body.errors[0].path, 'url');
      const retry = await alice.callUntyped('POST', '/upload-from-url', { url: `${files.url}/found.png` }, withKey('fetch-retry'));
      assert.equal(retry.status, 201, JSON.stringify(retry.body));
      assert.equal(replayed(retry), null);
    });

    it('keys belong to one account: two accounts use the same key and body independently', async () => {
      const body = { url: `${files.url}/shared.png` };
      const forAlice = await alice.callUntyped('POST', '/upload-from-url', body, withKey('same-key'));
      const forBob = await bob.callUntyped('POST', '/upload-from-url', body, withKey('same-key'));
      assert.equal(forAlice.status, 201);
      assert.equal(forBob.status, 201);
      assert.equal(replayed(forBob), null, "Bob does not get Alice's answer");
      assert.notEqual(forBob.body.id, forAlice.body.id);
      assert.equal(await countRows(herald, 'media', bob.id), 1);

      const bobAgain = await bob.callUntyped('POST', '/upload-from-url', body, withKey('same-key'));
      assert.equal(replayed(bobAgain), 'true');
      assert.equal(bobAgain.body.id, forBob.body.id);
      assert.equal((await alice.callUntyped('POST', '/upload-from-url', body, withKey('same-key'))).body.id, forAlice.body.id);
    });

    it('identical requests sent at once create exactly one post', async () => {
      const body = scheduledPost(aliceChannel, 'sent five times at once');
      const stored = await countRows(herald, 'posts', alice.id);
      const answers = await Promise.all(Array.from({ length: 5 }, () => alice.callUntyped('POST', '/posts', body, withKey('post-burst'))));
      for (const a of answers) assert.ok(a.status === 201 || a.status === 409, `201 (first or replay) or 409 (in flight), got ${a.status}`);
      const created = answers.filter((a) => a.status === 201);
      assert.ok(created.length >= 1, 'created.length >= 1');
      for (const a of created) assert.deepEqual(a.body, created[0].body);
      assert.equal(await countRows(herald, 'posts', alice.id), stored + 1);
    });

    it('a key used on one route is refused on another', async () => {
      const posted = await alice.callUntyped('POST', '/posts', scheduledPost(aliceChannel, 'route one'), withKey('one-route'));
      assert.equal(posted.status, 201);
      const elsewhere = await alice.callUntyped('POST', '/upload-from-url', { url: `${files.url}/elsewhere.png` }, withKey('one-route'));
      assert.equal(elsewhere.status, 422);
      assert.equal(files.hits.get('/elsewhere.png'), undefined);
    });

    it('refuses a malformed Idempotency-Key with 400 and creates nothing', async () => {
      const stored = await countRows(herald, 'posts', alice.id);
      const tooLong = await alice.callUntyped('POST', '/posts', scheduledPost(aliceChannel, 'long key'), withKey('k'.repeat(256)));
      assert.equal(tooLong.status, 400);
      assert.equal(tooLong.body.errors[0].path, 'headers.idempotency-key');
      assert.equal(await countRows(herald, 'posts', alice.id), stored);
    });
  });
}
