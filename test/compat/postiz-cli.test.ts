/**
 * The published `postiz` command-line client, unchanged, against a running Herald:
 * a user points POSTIZ_API_URL at {public_url}/api and everything they do with
 * that client must work.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { addWebhookChannel } from '../helpers/api-fixtures.ts';
import { PNG_1x1, startHerald, type TestAccount, type TestHerald } from '../helpers/herald.ts';
import { describeRun, postizCli, printedApiError, printedJson, type PostizCli } from '../helpers/postiz-cli.ts';
import { testStores, storeSuite } from '../helpers/stores.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../fakes/webhook-receiver.ts';

const DAY_MS = 86_400_000;

for (const store of await testStores()) {
  describe(`postiz CLI against Herald (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let receiver: WebhookReceiver;
    let account: TestAccount;
    let cli: PostizCli;
    let channelIds: string[];
    /** POSTIZ_API_URL as documented: the public URL plus /api. */
    let apiUrl: string;
    const postz = (args: string[], options: { apiUrl?: string; key?: string } = {}) =>
      cli.run(args, { apiUrl: options.apiUrl ?? apiUrl, key: options.key ?? account.key });

    before(async () => {
      herald = await startHerald(store);
      receiver = await startWebhookReceiver();
      account = await herald.newAccount();
      cli = postizCli();
      apiUrl = `${herald.url}/api`;
      channelIds = [];
      // Two webhook channels (a webhook channel is identified by its URL, hence two paths).
      for (const name of ['Hook A', 'Hook B']) {
        channelIds.push((await addWebhookChannel(account, { name }, `${receiver.url}/${name.slice(-1)}`)).id);
      }
    });
    after(async () => {
      await herald?.close();
      await receiver?.close();
      cli?.cleanup();
    });

    it('integrations:list shows both channels', async () => {
      const result = await postz(['integrations:list']);
      assert.equal(result.code, 0, describeRun(result));
      const listed = printedJson(result);
      assert.deepEqual(listed.map((c: any) => c.id).sort(), [...channelIds].sort());
      assert.ok(
        listed.every((c: any) => c.identifier === 'webhook' && c.disabled === false),
        "listed.every((c: any) => c.identifier === 'webhook' && c.disabled === false)",
      );
    });

    describe('upload, create, list, delete', () => {
      let uploaded: { id: string; path: string };
      let created: { postId: string; integration: string }[];
      const publishAt = new Date(Math.ceil((Date.now() + 7 * DAY_MS) / 60_000) * 60_000).toISOString();
      const text = 'Hello from the postiz CLI';

      it('upload stores a PNG and prints its path on the upload host', async () => {
        const file = path.join(cli.home, 'picture.png');
        fs.writeFileSync(file, PNG_1x1);
        const result = await postz(['upload', file]);
        assert.equal(result.code, 0, describeRun(result));
        uploaded = printedJson(result);
        assert.ok(uploaded.path.startsWith(`${herald.url}/uploads/`), uploaded.path);
        assert.ok(uploaded.id, 'uploaded.id');
        const served = await fetch(uploaded.path);
        assert.equal(served.status, 200);
        assert.deepEqual(Buffer.from(await served.arrayBuffer()), PNG_1x1);
      });

      it('posts:create schedules the post on both channels, matching the media by path', async () => {
        const result = await postz(['posts:create', '-c', text, '-m', uploaded.path, '-i', channelIds.join(','), '-s', publishAt]);
        assert.equal(result.code, 0, describeRun(result));
        created = printedJson(result);
        assert.equal(created.length, 2);
        assert.deepEqual(created.map((c) => c.integration).sort(), [...channelIds].sort());
        for (const { postId } of created) {
          const detail = await account.callUntyped('GET', `/posts/${postId}`);
          assert.equal(detail.status, 200);
          assert.equal(detail.body.state, 'QUEUE');
          assert.equal(detail.body.content, text);
          assert.equal(detail.body.publishDate, publishAt);
          // The client sends a random image id; the stored reference is the uploaded media.
          assert.deepEqual(detail.body.image, [{ id: uploaded.id, path: uploaded.path }]);
        }
      });

      it('posts:list over a range covering the date shows the post on both channels', async () => {
        const at = Date.parse(publishAt);
        const result = await postz(['posts:list', '--startDate', new Date(at - DAY_MS).toISOString(), '--endDate', new Date(at + DAY_MS).toISOString()]);
        assert.equal(result.code, 0, describeRun(result));
        const { posts } = printedJson(result);
        const ours = posts.filter((p: any) => p.content === text);
        assert.deepEqual(ours.map((p: any) => p.integration.id).sort(), [...channelIds].sort());
        assert.deepEqual(ours.map((p: any) => p.id).sort(), created.map((c) => c.postId).sort());
        assert.ok(
          ours.every((p: any) => p.state === 'QUEUE' && p.publishDate === publishAt),
          "ours.every((p: any) => p.state === 'QUEUE' && p.publishDate === publishAt)",
        );
      });

      it('posts:delete removes the post', async () => {
        const { postId } = created[0];
        const result = await postz(['posts:delete', postId]);
        assert.equal(result.code, 0, describeRun(result));
        assert.match(result.stdout, /deleted successfully/);
        const gone = await account.callUntyped('GET', `/posts/${postId}`);
        assert.equal(gone.status, 404);
        const at = Date.parse(publishAt);
        const listed = await account.callUntyped(
          'GET',
          `/posts?startDate=${new Date(at - DAY_MS).toISOString()}&endDate=${new Date(at + DAY_MS).toISOString()}`,
        );
        assert.equal(listed.status, 200);
        assert.ok(!listed.body.posts.some((p: any) => p.id === postId), '!listed.body.posts.some((p: any) => p.id === postId)');
      });
    });

    it('posts:create -t draft stores a draft', async () => {
      const date = new Date(Date.now() + 3 * DAY_MS).toISOString();
      const result = await postz(['posts:create', '-t', 'draft', '-c', 'Draft from the CLI', '-i', channelIds[0], '-s', date]);
      assert.equal(result.code, 0, describeRun(result));
      const [entry] = printedJson(result);
      assert.equal(entry.integration, channelIds[0]);
      const detail = await account.callUntyped('GET', `/posts/${entry.postId}`);
      assert.equal(detail.body.state, 'DRAFT');
      assert.equal(detail.body.content, 'Draft from the CLI');
    });

    it("integrations:settings prints the channel's rules, settings schema and tools", async () => {
      const result = await postz(['integrations:settings', channelIds[0]]);
      assert.equal(result.code, 0, describeRun(result));
      const { output } = printedJson(result);
      assert.equal(typeof output.rules, 'string');
      assert.equal(typeof output.maxLength, 'number');
      assert.equal(output.settings.type, 'object');
      assert.ok(
        output.tools.some((t: any) => t.methodName === 'sendTest'),
        "output.tools.some((t: any) => t.methodName === 'sendTest')",
      );

      const unknown = await postz(['integrations:settings', 'no-such-channel']);
      assert.notEqual(unknown.code, 0, describeRun(unknown));
      assert.equal(printedApiError(unknown).status, 404);
    });

    it("a wrong key fails with the server's JSON message", async () => {
      const result = await postz(['integrations:list'], { key: 'not-a-real-key' });
      assert.notEqual(result.code, 0, describeRun(result));
      const { status, body } = printedApiError(result);
      assert.equal(status, 401);
      assert.equal(body.msg, body.message);
      assert.match(body.message, /API key/);
      assert.ok(result.stderr.includes(body.message), 'result.stderr.includes(body.message)');
    });

    it('an API URL without /api fails with a message naming the /api prefix', async () => {
      const result = await postz(['integrations:list'], { apiUrl: herald.url });
      assert.notEqual(result.code, 0, describeRun(result));
      const { status, body } = printedApiError(result);
      assert.equal(status, 404);
      assert.match(body.message, /\/api prefix/);
      assert.match(result.stderr, /\/api prefix/);
    });

    it('an API URL ending in a slash still works (the client then sends //public/v1/...)', async () => {
      const withSlash = `${apiUrl}/`;
      const listed = await postz(['integrations:list'], { apiUrl: withSlash });
      assert.equal(listed.code, 0, describeRun(listed));
      assert.deepEqual(
        printedJson(listed)
          .map((c: any) => c.id)
          .sort(),
        [...channelIds].sort(),
      );

      const file = path.join(cli.home, 'again.png');
      fs.writeFileSync(file, PNG_1x1);
      const uploadedAgain = await postz(['upload', file], { apiUrl: withSlash });
      assert.equal(uploadedAgain.code, 0, describeRun(uploadedAgain));
      assert.ok(printedJson(uploadedAgain).path.startsWith(`${herald.url}/uploads/`), 'printedJson(uploadedAgain).path.startsWith(`${herald.url}/uploads/`)');

      const date = new Date(Date.now() + 2 * DAY_MS).toISOString();
      const created = await postz(['posts:create', '-c', 'Via a trailing slash', '-i', channelIds[1], '-s', date], { apiUrl: withSlash });
      assert.equal(created.code, 0, describeRun(created));
      const [entry] = printedJson(created);
      const deleted = await postz(['posts:delete', entry.postId], { apiUrl: withSlash });
      assert.equal(deleted.code, 0, describeRun(deleted));
      assert.equal((await account.callUntyped('GET', `/posts/${entry.postId}`)).status, 404);
    });
  });
}
