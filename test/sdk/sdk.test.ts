/**
 * The SDK against a running Herald: by default it behaves like the reference
 * SDK (error bodies returned, not thrown; deletePost gives the raw Response),
 * with throwOnError it throws typed errors; uploads from a path, a Buffer and a
 * stream; Idempotency-Key on creating calls; and the package entry `herald/sdk`
 * works from plain JavaScript, with type declarations a TypeScript user can check against.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { freePort, PNG_1x1, startHerald, type TestAccount, type TestHerald } from '../helpers/herald.ts';
import { addWebhookChannel, type Channel } from '../helpers/api-fixtures.ts';
import { testStores, storeSuite } from '../helpers/stores.ts';
import { Herald, HeraldApiError, HeraldConnectionError, isErrorBody } from '../../src/sdk/index.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');

function runNode(args: string[], env: Record<string, string>): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

function draftBody(channelId: string, content: string) {
  return {
    type: 'draft' as const,
    date: '2031-05-01T10:00:00.000Z',
    shortLink: false,
    tags: [],
    posts: [{ integration: { id: channelId }, value: [{ content, image: [] }] }],
  };
}

for (const store of await testStores()) {
  describe(`SDK (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let account: TestAccount;
    let channel: Channel;
    let apiUrl: string;
    let folder: string;

    before(async () => {
      herald = await startHerald(store);
      account = await herald.newAccount();
      channel = await addWebhookChannel(account, { name: 'SDK hook' });
      apiUrl = `${herald.url}/api`;
      folder = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-sdk-'));
    });
    after(async () => {
      await herald?.close();
      fs.rmSync(folder, { recursive: true, force: true });
    });

    describe('default: like the reference SDK', () => {
      it('returns the success body of each call', async () => {
        const sdk = new Herald(account.key, apiUrl);
        assert.deepEqual(await sdk.integrations(), (await account.callUntyped('GET', '/integrations')).body);
        assert.deepEqual(await sdk.isConnected(), { connected: true });
        const created = await sdk.post(draftBody(channel.id, 'from the SDK'));
        assert.ok(Array.isArray(created), 'Array.isArray(created)');
        const listed = await sdk.postList({ startDate: '2031-05-01T00:00:00Z', endDate: '2031-05-02T00:00:00Z' });
        assert.ok(!isErrorBody(listed), '!isErrorBody(listed)');
        assert.deepEqual(
          listed.posts.map((p) => p.content),
          ['from the SDK'],
        );
      });

      it('a 4xx does not throw: the parsed error body comes back', async () => {
        const sdk = new Herald(account.key, apiUrl);
        const missing = await sdk.getPost('no-such-post');
        assert.ok(isErrorBody(missing), 'isErrorBody(missing)');
        assert.equal(missing.statusCode, 404);
        assert.deepEqual(missing, (await account.callUntyped('GET', '/posts/no-such-post')).body);
        const rejected = await sdk.post({ ...draftBody(channel.id, 'x'), type: 'sometime' as 'draft' });
        assert.ok(isErrorBody(rejected), 'isErrorBody(rejected)');
        assert.equal(rejected.statusCode, 400);
        assert.ok(
          rejected.errors.some((e) => e.path === 'type'),
          JSON.stringify(rejected),
        );
      });

      it('a wrong key does not throw: the 401 body comes back', async () => {
        const answer = await new Herald('hk_wrong', apiUrl).integrations();
        assert.ok(isErrorBody(answer), 'isErrorBody(answer)');
        assert.equal(answer.statusCode, 401);
        assert.equal(answer.code, 'invalid_api_key');
      });

      it('deletePost resolves to the raw Response, also for an unknown id', async () => {
        const sdk = new Herald(account.key, apiUrl);
        const [made] = (await sdk.post(draftBody(channel.id, 'to delete'))) as { postId: string }[];
        const response = await sdk.deletePost(made.postId);
        assert.ok(response instanceof Response, 'response instanceof Response');
        assert.equal(response.status, 200);
        assert.equal((await response.json()).deleted, true);
        const unknown = await sdk.deletePost('no-such-post');
        assert.equal(unknown.status, 404);
      });

      it('a URL without /api: the 404 body that says to add it', async () => {
        const answer = await new Herald(account.key, herald.url).integrations();
        assert.ok(isErrorBody(answer), 'isErrorBody(answer)');
        assert.equal(answer.statusCode, 404);
        assert.equal(answer.code, 'missing_api_prefix');
        assert.ok(answer.message.includes(`(here ${herald.url}/api)`), `the hint names this server: ${answer.message}`);
      });

      it('no server: a HeraldConnectionError (there is no body to return)', async () => {
        const port = await freePort();
        await assert.rejects(new Herald(account.key, `http://127.0.0.1:${port}/api`).integrations(), (err: unknown) => {
          assert.ok(err instanceof HeraldConnectionError, 'err instanceof HeraldConnectionError');
          assert.match(err.message, /connection refused/);
          return true;
        });
      });
    });

    describe('throwOnError: true', () => {
      it('returns typed success bodies, and deletePost the parsed body', async () => {
        const sdk = new Herald(account.key, apiUrl, { throwOnError: true });
        const [made] = await sdk.post(draftBody(channel.id, 'typed'));
        const post = await sdk.getPost(made.postId);
        assert.equal(post.thread[0].content, 'typed');
        assert.deepEqual(await sdk.deletePost(made.postId), { deleted: true, id: made.postId, group: post.group });
      });

      it('a 4xx throws HeraldApiError with the status, code, message and fields', async () => {
        assert.equal(new Herald(account.key, { throwOnError: true }).apiUrl, 'http://localhost:5000/api', 'the default API URL');
        const typed = new Herald(account.key, apiUrl, { throwOnError: true });
        const expected = (await account.callUntyped('GET', '/posts/no-such-post')).body;
        await assert.rejects(typed.getPost('no-such-post'), (err: unknown) => {
          assert.ok(err instanceof HeraldApiError, 'err instanceof HeraldApiError');
          assert.equal(err.status, 404);
          assert.equal(err.code, expected.code);
          assert.equal(err.message, expected.message);
          assert.deepEqual(err.body, expected);
          return true;
        });
        await assert.rejects(typed.post({ ...draftBody(channel.id, 'x'), type: 'sometime' as 'draft' }), (err: unknown) => {
          assert.ok(err instanceof HeraldApiError, 'err instanceof HeraldApiError');
          assert.equal(err.status, 400);
          assert.ok(
            err.errors.some((e) => e.path === 'type'),
            "err.errors.some((e) => e.path === 'type')",
          );
          return true;
        });
        await assert.rejects(typed.deletePost('no-such-post'), (err: unknown) => err instanceof HeraldApiError && err.status === 404);
      });

      it('a wrong key throws a 401 HeraldApiError', async () => {
        await assert.rejects(new Herald('hk_wrong', apiUrl, { throwOnError: true }).integrations(), (err: unknown) => {
          assert.ok(err instanceof HeraldApiError, 'err instanceof HeraldApiError');
          assert.equal(err.status, 401);
          assert.equal(err.code, 'invalid_api_key');
          return true;
        });
      });

      it('a URL without /api throws with a hint to add it', async () => {
        await assert.rejects(new Herald(account.key, herald.url, { throwOnError: true }).integrations(), (err: unknown) => {
          assert.ok(err instanceof HeraldApiError, 'err instanceof HeraldApiError');
          assert.equal(err.status, 404);
          assert.match(err.hint ?? '', new RegExp(`has no /api prefix; .*e\\.g\\. ${herald.url.replace(/[.]/g, '\\.')}/api`));
          return true;
        });
      });

      it('no server: HeraldConnectionError', async () => {
        const port = await freePort();
        await assert.rejects(new Herald(account.key, `http://127.0.0.1:${port}/api`, { throwOnError: true }).isConnected(), HeraldConnectionError);
      });
    });

    describe('upload', () => {
      it("takes a path, a Buffer (with the reference SDK's extension argument) and a stream", async () => {
        const sdk = new Herald(account.key, apiUrl, { throwOnError: true });
        const file = path.join(folder, 'pixel.png');
        fs.writeFileSync(file, PNG_1x1);
        const progress: [number, number | undefined][] = [];
        const fromPath = await sdk.upload(file, { onProgress: (sent, total) => progress.push([sent, total]) });
        assert.equal(fromPath.originalName, 'pixel.png');
        assert.deepEqual(progress.at(-1), [PNG_1x1.length, PNG_1x1.length], 'the last progress report is the whole file');
        const fromBuffer = await sdk.upload(PNG_1x1, 'png');
        assert.equal(fromBuffer.originalName, 'png');
        const fromStream = await sdk.upload(fs.createReadStream(file));
        assert.equal(fromStream.originalName, 'pixel.png');
        const fromIterable = await sdk.upload(Readable.from([PNG_1x1.subarray(0, 10), PNG_1x1.subarray(10)]), { filename: 'chunks.png' });
        for (const media of [fromPath, fromBuffer, fromStream, fromIterable]) {
          assert.equal(media.mimeType, 'image/png');
          const served = await fetch(media.path);
          assert.deepEqual(Buffer.from(await served.arrayBuffer()), PNG_1x1);
        }
        assert.equal(new Set([fromPath.id, fromBuffer.id, fromStream.id, fromIterable.id]).size, 4);
      });

      it('a rejected file: the error body by default, HeraldApiError with throwOnError', async () => {
        const text = Buffer.from('not an image at all');
        const body = await new Herald(account.key, apiUrl).upload(text, 'notes.png');
        assert.ok(isErrorBody(body), 'isErrorBody(body)');
        assert.equal(body.statusCode, 415);
        await assert.rejects(
          new Herald(account.key, apiUrl, { throwOnError: true }).upload(text, 'notes.png'),
          (err: unknown) => err instanceof HeraldApiError && err.status === 415,
        );
      });
    });

    describe('Idempotency-Key', () => {
      it('a repeated post or upload with the same key creates nothing new', async () => {
        const sdk = new Herald(account.key, apiUrl, { throwOnError: true });
        const body = draftBody(channel.id, 'exactly once');
        const first = await sdk.post(body, { idempotencyKey: 'sdk-post-1' });
        const again = await sdk.post(body, { idempotencyKey: 'sdk-post-1' });
        assert.deepEqual(again, first);
        const listed = await sdk.postList({ startDate: '2031-05-01T00:00:00Z', endDate: '2031-05-02T00:00:00Z' });
        assert.equal(listed.posts.filter((p) => p.content === 'exactly once').length, 1);
        const media = await sdk.upload(PNG_1x1, { filename: 'once.png', idempotencyKey: 'sdk-upload-1' });
        assert.equal((await sdk.upload(PNG_1x1, { filename: 'once.png', idempotencyKey: 'sdk-upload-1' })).id, media.id);
        const fromUrl = await sdk.uploadFromUrl(media.path, { idempotencyKey: 'sdk-url-1' });
        assert.equal((await sdk.uploadFromUrl(media.path, { idempotencyKey: 'sdk-url-1' })).id, fromUrl.id);
      });
    });
  });
}

describe('the herald/sdk package entry', () => {
  before(() => {
    // What `npm install` runs (the "prepare" script).
    const built = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'build-sdk.mjs')], { cwd: ROOT, encoding: 'utf8' });
    assert.equal(built.status, 0, built.stderr);
    assert.ok(!built.stderr.includes('WARNING'), built.stderr);
  });

  it('imports from plain JavaScript and talks to Herald', async () => {
    const herald = await startHerald('sqlite');
    try {
      const account = await herald.newAccount();
      const script = `
        import HeraldDefault, { Herald, HeraldApiError } from 'herald/sdk';
        const sdk = new Herald(process.env.KEY, process.env.URL, { throwOnError: true });
        const connected = await sdk.isConnected();
        let status = 0;
        try { await sdk.getPost('nope'); } catch (err) { status = err instanceof HeraldApiError ? err.status : -1; }
        console.log(JSON.stringify({ same: HeraldDefault === Herald, connected, status }));`;
      // Asynchronous: the server under test runs in this very process.
      const run = await runNode(['--input-type=module', '-e', script], { PATH: process.env.PATH ?? '', KEY: account.key, URL: `${herald.url}/api` });
      assert.equal(run.status, 0, run.stderr);
      assert.deepEqual(JSON.parse(run.stdout), { same: true, connected: { connected: true }, status: 404 });
    } finally {
      await herald.close();
    }
  });

  it('ships type declarations: a TypeScript user gets the API types, and misuse fails to compile', () => {
    const consumer = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-sdk-user-'));
    try {
      fs.mkdirSync(path.join(consumer, 'node_modules'));
      fs.symlinkSync(ROOT, path.join(consumer, 'node_modules', 'herald'), 'dir');
      fs.writeFileSync(path.join(consumer, 'package.json'), JSON.stringify({ type: 'module' }));
      fs.writeFileSync(
        path.join(consumer, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: {
            module: 'nodenext',
            moduleResolution: 'nodenext',
            target: 'es2022',
            strict: true,
            noEmit: true,
            types: ['node'],
            typeRoots: [path.join(ROOT, 'node_modules', '@types')],
          },
          files: ['good.ts', 'bad.ts'],
        }),
      );
      fs.writeFileSync(
        path.join(consumer, 'good.ts'),
        `import { Herald, type Integration, type PostDetail } from 'herald/sdk';
         const sdk = new Herald('key', 'http://localhost:5000/api', { throwOnError: true });
         export async function names(): Promise<string[]> { const list: Integration[] = await sdk.integrations(); return list.map((c) => c.name); }
         export async function states(id: string): Promise<string[]> { const post: PostDetail = await sdk.getPost(id); return post.thread.map((t) => t.state); }
         export async function ids(): Promise<string[]> { const created = await sdk.post({ type: 'now', date: '2026-01-01T00:00:00Z', ` +
          `shortLink: false, tags: [], posts: [{ integration: { id: 'c' }, value: [{ content: 'hi', image: [] }] }] }); ` +
          'return created.map((p) => p.postId); }\n',
      );
      fs.writeFileSync(
        path.join(consumer, 'bad.ts'),
        `import { Herald } from 'herald/sdk';
         const sdk = new Herald('key', 'http://localhost:5000/api', { throwOnError: true });
         export const wrong = () => sdk.post({ type: 'sometime', date: '2026-01-01T00:00:00Z', shortLink: false, tags: [], posts: [] });\n`,
      );
      const tsc = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
      const run = spawnSync(process.execPath, [tsc, '-p', consumer], { cwd: consumer, encoding: 'utf8' });
      const errors = run.stdout.split('\n').filter((l) => /error TS/.test(l));
      assert.ok(errors.length > 0, 'the misuse in bad.ts must not compile');
      assert.ok(
        errors.every((l) => l.startsWith('bad.ts')),
        `only bad.ts may fail:\n${run.stdout}`,
      );
      assert.match(errors.join('\n'), /"sometime"/);
    } finally {
      fs.rmSync(consumer, { recursive: true, force: true });
    }
  });
});
