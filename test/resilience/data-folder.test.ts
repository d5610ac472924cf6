/**
 * The data folder of the embedded store: one `herald start` at a time (a second
 * is refused, one left by a killed process is taken over), and what Herald
 * writes there is readable by its own user only.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { startHeraldProcess, type HeraldProcess } from '../helpers/herald-process.ts';
import { PNG_1x1 } from '../helpers/herald.ts';
import { printed, runHerald } from '../cli/run-herald.ts';

const mode = (file: string) => fs.statSync(file).mode & 0o777;

describe('the data folder (sqlite)', () => {
  const dataDir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'herald-folder-')), 'data');
  const started: HeraldProcess[] = [];
  const start = async () => {
    const p = await startHeraldProcess({ dataDir }, 'start');
    started.push(p);
    return p;
  };
  after(async () => {
    await Promise.all(started.map((p) => p.stop('SIGKILL')));
    fs.rmSync(path.dirname(dataDir), { recursive: true, force: true });
  });

  it('a second herald start on the same folder is refused, saying why; after a stop, or a kill, the next one starts', async () => {
    const first = await start();
    await first.running;
    const second = await start();
    await assert.rejects(second.running, /Another Herald \(pid \d+\) already runs on the data folder/);
    assert.ok(first.alive(), 'the first keeps running');

    assert.equal(await first.stop('SIGTERM'), 0);
    const third = await start();
    await third.running;
    await third.stop('SIGKILL');
    const fourth = await start();
    await fourth.running;
    assert.ok(fourth.alive(), 'a lock left by a killed process is taken over');
  });

  it("everything Herald writes there is its own user's only: 0700 folders, 0600 files (database, journal, uploads)", async () => {
    const running = started.at(-1)!;
    const created = await runHerald(['keys', 'create', '--name', 'modes', '--json'], {
      HERALD_DATA_DIR: dataDir,
      HERALD_SECRET: 'test-secret-2f9c4e7a1b3d5f8e0a6c9b2d4f7e1a3c',
    });
    const { key } = printed(created);
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(PNG_1x1)]), 'pixel.png');
    const uploaded = await fetch(`${running.url}/api/public/v1/upload`, { method: 'POST', headers: { authorization: key }, body: form });
    assert.equal(uploaded.status, 201, await uploaded.clone().text());

    const walk = (dir: string): string[] =>
      fs
        .readdirSync(dir, { withFileTypes: true })
        .flatMap((e) => (e.isDirectory() ? [path.join(dir, e.name), ...walk(path.join(dir, e.name))] : [path.join(dir, e.name)]));
    const everything = [dataDir, ...walk(dataDir)];
    assert.ok(
      everything.some((f) => f.endsWith('herald.db')) && everything.some((f) => f.endsWith('.png')),
      `the database and the upload are there: ${everything.join(', ')}`,
    );
    const open = everything.filter((f) => mode(f) !== (fs.statSync(f).isDirectory() ? 0o700 : 0o600));
    assert.deepEqual(
      open.map((f) => `${path.relative(dataDir, f)} ${mode(f).toString(8)}`),
      [],
      'nothing readable by others',
    );
  });
});
