/**
 * A full disk (issue 27): uploads and every other write answer 503
 * `storage_full` with Retry-After instead of 500, and /api/ready reports the
 * disk. For real on a small tmpfs holding the data folder (mounting needs root;
 * without it those suites are skipped, saying so), and on every machine with
 * ENOSPC raised where uploads are stored and PostgreSQL's own disk_full raised
 * by a trigger.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { addWebhookChannel, entry, postBody, startFileServer } from '../helpers/api-fixtures.ts';
import { callTool, connectMcp } from '../helpers/mcp-client.ts';
import { PNG_1x1, startHerald, upload, type UntypedResult, type TestAccount, type TestHerald } from '../helpers/herald.ts';
import { storeSuite, testStores } from '../helpers/stores.ts';

const ready = async (herald: TestHerald) => {
  const response = await fetch(`${herald.url}/api/ready`);
  return { status: response.status, body: (await response.json()) as { status: string; checks: Record<string, string> } };
};

function assertStorageFull(answer: UntypedResult): void {
  assert.equal(answer.status, 503, JSON.stringify(answer.body));
  assert.equal(answer.body.code, 'storage_full');
  assert.match(answer.body.message, /disk is full; nothing was changed/);
  assert.match(answer.headers.get('retry-after') ?? '', /^\d+$/, 'a retry hint in seconds');
}

/** Mounts a tmpfs of `size` at `dir`; undefined when done, else why it could not be. */
function mountTmpfs(dir: string, size: string): string | undefined {
  const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${size},mode=0700`, 'tmpfs', dir], { encoding: 'utf8' });
  return mounted.status === 0 ? undefined : `mounting a tmpfs was refused (${(mounted.stderr || mounted.error?.message || '').trim()}); it needs root`;
}

/** Lazily: the embedded store's file may stay open until its statements are collected; the tmpfs goes once it is let go. */
function unmount(dir: string): void {
  spawnSync('umount', ['--lazy', dir]);
}

/** Whether this machine lets the test mount a tmpfs, or why not. */
const tmpfsRefused = (() => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-tmpfs-'));
  const refused = mountTmpfs(dir, '1m');
  if (!refused) unmount(dir);
  fs.rmdirSync(dir);
  return refused;
})();

/** Fills the filesystem of `dir` to the last page; returns the file that holds the space. */
function fill(dir: string): string {
  const file = path.join(dir, 'filler');
  const fd = fs.openSync(file, 'w');
  try {
    for (const size of [1024 ** 2, 64 * 1024, 4096, 1]) {
      const chunk = Buffer.alloc(size, 1);
      try {
        for (;;) fs.writeSync(fd, chunk);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
      }
    }
  } finally {
    fs.closeSync(fd);
  }
  return file;
}

for (const store of await testStores()) {
  describe(`a full disk (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let account: TestAccount;

    before(async () => {
      herald = await startHerald(store);
      account = await herald.newAccount();
    });
    after(async () => {
      await herald?.close();
    });

    /** Runs `during` while storing an uploaded file fails as a full disk fails it. */
    async function withFullStorage<T>(during: () => Promise<T>): Promise<T> {
      const storage = herald.services.storage;
      const put = storage.put;
      storage.put = async () => {
        throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', errno: -28, syscall: 'write' });
      };
      try {
        return await during();
      } finally {
        storage.put = put;
      }
    }

    it('an upload whose file cannot be written is answered 503 storage_full, and readiness reports the disk', async () => {
      assertStorageFull(await withFullStorage(() => upload(account, herald.api, PNG_1x1)));
      const answer = await ready(herald);
      assert.equal(answer.status, 503, JSON.stringify(answer.body));
      assert.match(answer.body.checks.disk, /^a write failed \d+ s ago: no space left on the disk$/);
      assert.equal((await upload(account, herald.api, PNG_1x1)).status, 201, 'the same upload works once there is space');
    });

    it('an MCP tool that cannot store its file answers the storage_full error body, not a fault of Herald', async () => {
      const files = await startFileServer(PNG_1x1);
      const agent = await connectMcp(herald.url, account.key);
      try {
        const answer = await withFullStorage(() => callTool(agent, 'upload_media_from_url', { url: `${files.url}/file.png` }));
        assert.equal(answer.isError, true);
        assert.equal(answer.data.error.code, 'storage_full', answer.text);
        assert.equal(answer.data.error.statusCode, 503);
        assert.match(answer.text, /disk is full; nothing was changed/);
      } finally {
        await agent.close();
        await files.close();
      }
    });

    it('a write the database refuses for lack of space (PostgreSQL disk_full) is answered 503 storage_full', {
      skip: store !== 'postgres' && 'PostgreSQL only',
    }, async () => {
      const channel = await addWebhookChannel(account);
      const { db } = herald.services.store;
      await sql`CREATE FUNCTION herald_test_disk_full() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION 'could not extend file: No space left on device' USING ERRCODE = 'disk_full'; END $$`.execute(db);
      await sql`CREATE TRIGGER herald_test_disk_full BEFORE INSERT ON posts FOR EACH ROW EXECUTE FUNCTION herald_test_disk_full()`.execute(db);
      let refused: UntypedResult;
      try {
        refused = await account.callUntyped('POST', '/posts', postBody('schedule', [entry(channel.id, ['on a full disk'])]));
      } finally {
        await sql`DROP TRIGGER herald_test_disk_full ON posts`.execute(db);
        await sql`DROP FUNCTION herald_test_disk_full()`.execute(db);
      }
      assertStorageFull(refused);
      assert.equal((await account.callUntyped('POST', '/posts', postBody('schedule', [entry(channel.id, ['with room again'])]))).status, 201);
    });
  });

  describe(`a full disk, for real: the data folder on a small tmpfs (${store})`, { skip: storeSuite(store).skip || tmpfsRefused || false }, () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-full-'));
    let mounted = false;
    let herald: TestHerald | undefined;
    let account: TestAccount;
    let filler: string | undefined;

    before(async () => {
      const refused = mountTmpfs(dataDir, '16m');
      if (refused) throw new Error(refused);
      mounted = true;
      herald = await startHerald(store, { dataDir });
      account = await herald.newAccount();
    });
    after(async () => {
      if (filler) fs.rmSync(filler, { force: true });
      await herald?.close();
      if (mounted) unmount(dataDir);
      fs.rmSync(dataDir, { recursive: true, force: true });
    });

    it('readiness fails its disk check while the data folder has little space left', async () => {
      const answer = await ready(herald!);
      assert.equal(answer.status, 503, JSON.stringify(answer.body));
      assert.match(answer.body.checks.disk, new RegExp(`^\\d+ MB free on the disk of ${dataDir}; Herald needs at least 64 MB$`));
      assert.equal(answer.body.checks.store, 'ok');
    });

    it('uploads and other writes answer 503 storage_full with Retry-After once it is full, and work again once space is freed', async () => {
      const channel = await addWebhookChannel(account);
      filler = fill(dataDir);
      assertStorageFull(await upload(account, herald!.api, PNG_1x1));
      assert.deepEqual(fs.readdirSync(path.join(dataDir, 'uploads', '.tmp')), [], 'nothing of the refused upload is left');
      assert.match((await ready(herald!)).body.checks.disk, /^a write failed \d+ s ago: no space left on the disk$/);
      if (store === 'sqlite') {
        // The database file shares the disk: a write fails as soon as it needs a page the disk no longer has.
        let answer: UntypedResult | undefined;
        for (let i = 0; i < 500 && (answer === undefined || answer.status === 201); i++) {
          answer = await account.callUntyped('POST', '/posts', postBody('schedule', [entry(channel.id, [`post ${i} `.repeat(200)])]));
        }
        assertStorageFull(answer!);
      }
      fs.rmSync(filler);
      filler = undefined;
      assert.equal((await upload(account, herald!.api, PNG_1x1)).status, 201, 'the same upload works once space is freed');
      assert.equal((await account.callUntyped('POST', '/posts', postBody('schedule', [entry(channel.id, ['with room again'])]))).status, 201);
    });
  });
}
