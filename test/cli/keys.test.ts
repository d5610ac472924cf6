import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { loadConfig } from '../../src/config.ts';
import { untypedCaller, freePort, startHerald } from '../helpers/herald.ts';
import { createTestDatabase, testStores, storeSuite } from '../helpers/stores.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const BIN = path.join(ROOT, 'bin', 'herald.js');

/** The test runner's environment without any HERALD_ setting, plus `extra`. */
function cliEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('HERALD_')));
  return { ...env, ...extra };
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `herald <args>` as a child process, as a user would. */
function herald(args: string[], env: NodeJS.ProcessEnv): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** `herald <args> --json`, which must succeed; its parsed output. */
async function heraldJson(args: string[], env: NodeJS.ProcessEnv): Promise<any> {
  const run = await herald([...args, '--json'], env);
  assert.equal(run.code, 0, `herald ${args.join(' ')} failed: ${run.stderr}`);
  return JSON.parse(run.stdout);
}

interface Served {
  api: string;
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
  stop(): Promise<void>;
}

/** Starts `herald serve` and waits until it listens. */
async function startServe(env: NodeJS.ProcessEnv): Promise<Served> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child: ChildProcess = spawn(process.execPath, [BIN, 'serve'], {
    cwd: ROOT,
    env: { ...env, HERALD_PORT: String(port), HERALD_HOST: '127.0.0.1', HERALD_PUBLIC_URL: url, HERALD_LOG_LEVEL: 'trace' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`herald serve did not start:\n${output}`)), 30_000);
    const collect = (chunk: Buffer) => {
      output += chunk;
      if (output.includes('Herald is listening')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', collect);
    child.stderr!.on('data', collect);
    child.on('exit', (code) => reject(new Error(`herald serve exited with ${code}:\n${output}`)));
  });
  return {
    api: `${url}/api/public/v1`,
    output: () => output,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

describe('herald command: help and migrate (sqlite)', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-cli-'));
  const env = cliEnv({ HERALD_DATA_DIR: dataDir });
  after(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  it('herald --help prints the usage, including the keys commands', async () => {
    const run = await herald(['--help'], env);
    assert.equal(run.code, 0);
    assert.match(run.stdout, /^Usage: herald <command>/);
    for (const command of ['start', 'serve', 'worker', 'migrate', 'keys create', 'keys list', 'keys reveal', 'keys rotate', 'keys revoke']) {
      assert.ok(run.stdout.includes(command), `usage mentions "${command}"`);
    }
  });

  it('every command answers --help with its own usage', async () => {
    for (const [command, says] of [
      ['start', /API server and the publishing engine/],
      ['serve', /API server only/],
      ['worker', /publishing engine only/],
      ['migrate', /schema up to date/],
      ['keys', /keys create/],
      ['apps', /apps create/],
      ['auth-server', /Device-flow auth server/],
    ] as const) {
      const run = await herald([command, '--help'], env);
      assert.equal(run.code, 0, `${command} --help: ${run.stderr}`);
      assert.match(run.stdout, says, command);
    }
  });

  it('an unknown command fails with the usage', async () => {
    const run = await herald(['launch'], env);
    assert.equal(run.code, 1);
    assert.match(run.stderr, /Unknown command "launch"/);
    assert.match(run.stderr, /Usage: herald/);
  });

  it('herald migrate creates the schema once; running it again changes nothing', async () => {
    const first = await herald(['migrate'], env);
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /Applied: 001_initial/);
    assert.ok(fs.existsSync(path.join(dataDir, 'herald.db')), "fs.existsSync(path.join(dataDir, 'herald.db'))");
    const again = await herald(['migrate'], env);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /up to date/);
  });
});

describe('herald keys with a running server on the same data folder (sqlite)', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-cli-'));
  // No HERALD_SECRET: the commands and the server share data/secret.key.
  const env = cliEnv({ HERALD_DATA_DIR: dataDir });
  let served: Served;
  const everyKey: string[] = [];
  let ci: { id: string; key: string };
  let deploy: { id: string; key: string };

  before(async () => {
    served = await startServe(env);
  });
  after(async () => {
    await served?.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('keys and apps use the store "npm start" uses wherever they are run from, and name it', async () => {
    const elsewhere = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-cwd-'));
    const cwd = process.cwd();
    try {
      process.chdir(elsewhere);
      // The default is Herald's own folder, not the folder the command runs in.
      assert.equal(loadConfig({}).dataDir, path.join(ROOT, 'data'));
      assert.equal(loadConfig({ HERALD_DATA_DIR: 'mine' }).dataDir, path.join(elsewhere, 'mine'), "a relative folder given is the user's");
    } finally {
      process.chdir(cwd);
      fs.rmSync(elsewhere, { recursive: true, force: true });
    }
    const run = await herald(['keys', 'list', '--json'], env);
    assert.equal(run.code, 0, run.stderr);
    assert.ok(run.stderr.includes(`herald: using SQLite ${dataDir}`), run.stderr);
    JSON.parse(run.stdout);
  });

  it('keys create makes named keys for the owner account, created on first use', async () => {
    const created = await heraldJson(['keys', 'create', '--name', 'ci'], env);
    assert.equal(created.name, 'ci');
    assert.match(created.key, /^hk_[A-Za-z0-9_-]{20,}$/);
    assert.ok(created.hint.endsWith(created.key.slice(-4)), 'created.hint.endsWith(created.key.slice(-4))');
    assert.equal(created.revoked, false);
    const second = await heraldJson(['keys', 'create', '--name', 'deploy'], env);
    assert.notEqual(second.id, created.id);
    assert.notEqual(second.key, created.key);
    ci = { id: created.id, key: created.key };
    deploy = { id: second.id, key: second.key };
    everyKey.push(ci.key, deploy.key);
    assert.ok(fs.existsSync(path.join(dataDir, 'secret.key')), 'the secret was generated into the data folder');
  });

  it('the keys work on the running server and reach the same account', async () => {
    const added = await untypedCaller(served.api, ci.key)('POST', '/integrations', {
      identifier: 'webhook',
      name: 'From ci',
      credentials: { url: 'https://hooks.example.com/herald' },
    });
    assert.equal(added.status, 201, JSON.stringify(added.body));
    const seen = await untypedCaller(served.api, `Bearer ${deploy.key}`)('GET', '/integrations');
    assert.equal(seen.status, 200);
    assert.deepEqual(
      seen.body.map((c: { name: string }) => c.name),
      ['From ci'],
    );
  });

  it('keys list shows ids, names and hints, never the values', async () => {
    const listed = await heraldJson(['keys', 'list'], env);
    assert.deepEqual(
      listed.map((k: any) => [k.id, k.name, k.revoked]),
      [
        [ci.id, 'ci', false],
        [deploy.id, 'deploy', false],
      ],
    );
    assert.equal(listed[0].hint, `hk_…${ci.key.slice(-4)}`);
    for (const key of listed) assert.ok(Date.parse(key.lastUsedAt) > Date.parse(key.createdAt), `${key.name} records its last use`);
    const text = await herald(['keys', 'list'], env);
    assert.equal(text.code, 0);
    for (const key of everyKey) {
      assert.ok(!JSON.stringify(listed).includes(key), 'JSON list holds no key value');
      assert.ok(!text.stdout.includes(key), 'text list holds no key value');
    }
    assert.ok(
      text.stdout.includes(ci.id) && text.stdout.includes('deploy') && text.stdout.includes(listed[1].hint),
      "text.stdout.includes(ci.id) && text.stdout.includes('deploy') && text.stdout.includes(listed[1].h...",
    );
  });

  it('keys reveal prints the same value', async () => {
    const revealed = await herald(['keys', 'reveal', ci.id], env);
    assert.equal(revealed.code, 0, revealed.stderr);
    assert.equal(revealed.stdout.trim(), ci.key);
  });

  it('keys rotate gives a new value; the running server refuses the old one at once', async () => {
    const rotated = await heraldJson(['keys', 'rotate', ci.id], env);
    assert.equal(rotated.id, ci.id);
    assert.notEqual(rotated.key, ci.key);
    everyKey.push(rotated.key);
    const old = await untypedCaller(served.api, ci.key)('GET', '/integrations');
    assert.equal(old.status, 401);
    assert.equal(old.body.code, 'invalid_api_key');
    assert.equal((await untypedCaller(served.api, rotated.key)('GET', '/integrations')).status, 200);
    assert.equal((await untypedCaller(served.api, deploy.key)('GET', '/integrations')).status, 200, 'other keys keep working');
    assert.equal((await heraldJson(['keys', 'reveal', ci.id], env)).key, rotated.key);
    ci = { id: ci.id, key: rotated.key };
  });

  it('keys revoke: the running server refuses the key at once', async () => {
    assert.equal((await untypedCaller(served.api, deploy.key)('GET', '/is-connected')).status, 200);
    const revoked = await heraldJson(['keys', 'revoke', deploy.id], env);
    assert.deepEqual(revoked, { id: deploy.id, revoked: true });
    const refused = await untypedCaller(served.api, deploy.key)('GET', '/is-connected');
    assert.equal(refused.status, 401);
    assert.equal(refused.body.statusCode, 401);
    assert.equal((await untypedCaller(served.api, ci.key)('GET', '/is-connected')).status, 200);

    const reveal = await herald(['keys', 'reveal', deploy.id], env);
    assert.notEqual(reveal.code, 0, 'a revoked key cannot be revealed');
    assert.match(reveal.stderr, /revoked/);
    assert.ok(!reveal.stdout.includes(deploy.key), '!reveal.stdout.includes(deploy.key)');
  });

  it("the server's log never contains a key value", async () => {
    const call = untypedCaller(served.api, ci.key);
    await call('GET', `/integrations?api_key=${encodeURIComponent(ci.key)}`);
    await call('POST', '/posts', `{"broken": "${ci.key}`, { 'idempotency-key': ci.key });
    await call('POST', '/posts', { type: 'draft', posts: [{ integration: { id: ci.key }, value: [{ content: 'x' }] }] });
    await untypedCaller(served.api, `Bearer ${ci.key}`)('GET', '/posts/unknown');
    await untypedCaller(served.api, deploy.key)('GET', '/integrations');
    await served.stop();
    const log = served.output();
    assert.match(log, /"msg":"request"/, 'the request log was captured');
    assert.ok(log.includes('/api/public/v1/posts'), "log.includes('/api/public/v1/posts')");
    for (const key of everyKey) assert.ok(!log.includes(key), `the log holds no key value (${key.slice(0, 6)}...)`);
  });
});

for (const store of (await testStores()).filter((s) => s === 'postgres')) {
  describe('herald migrate and keys on PostgreSQL', storeSuite(store), () => {
    let database: { url: string; drop: () => Promise<void> };
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-cli-'));
    let env: NodeJS.ProcessEnv;

    before(async () => {
      database = await createTestDatabase();
      env = cliEnv({ HERALD_DATA_DIR: dataDir, HERALD_DATABASE_URL: database.url });
    });
    after(async () => {
      await database?.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    });

    it('migrates once, then reports the database up to date', async () => {
      const first = await herald(['migrate'], env);
      assert.equal(first.code, 0, first.stderr);
      assert.match(first.stdout, /Applied: 001_initial/);
      const again = await herald(['migrate'], env);
      assert.equal(again.code, 0, again.stderr);
      assert.match(again.stdout, /up to date/);
      assert.ok(!fs.existsSync(path.join(dataDir, 'herald.db')), 'no SQLite file when PostgreSQL is configured');
    });

    it('creates the database when it is missing and the user may, and says what to do when it may not', async () => {
      const missing = new URL(database.url);
      missing.pathname = `/${missing.pathname.slice(1)}_new`;
      try {
        const run = await herald(['migrate'], { ...env, HERALD_DATABASE_URL: missing.toString() });
        assert.equal(run.code, 0, run.stderr);
        assert.match(run.stdout, new RegExp(`Created the database ${missing.pathname.slice(1)}\\.`));
        assert.match(run.stdout, /Applied: 001_initial/);
      } finally {
        const admin = new pg.Client({ connectionString: database.url });
        await admin.connect();
        await admin.query(`DROP DATABASE IF EXISTS "${missing.pathname.slice(1)}" WITH (FORCE)`);
        await admin.query('DROP ROLE IF EXISTS herald_nocreate');
        await admin.query('CREATE ROLE herald_nocreate LOGIN');
        await admin.end();
      }
      const noRight = new URL(missing.toString());
      noRight.username = 'herald_nocreate';
      const refused = await herald(['migrate'], { ...env, HERALD_DATABASE_URL: noRight.toString() });
      assert.equal(refused.code, 1);
      assert.match(refused.stderr, /database "[^"]+" does not exist, and Herald could not create it .*createdb/);
      const admin = new pg.Client({ connectionString: database.url });
      await admin.connect();
      await admin.query('DROP ROLE IF EXISTS herald_nocreate');
      await admin.end();
    });

    it('creates a key that a server on the same database accepts, and revokes it', async () => {
      const created = await heraldJson(['keys', 'create', '--name', 'pg'], env);
      const server = await startHerald('postgres', { databaseUrl: database.url });
      try {
        const call = untypedCaller(server.api, created.key);
        assert.equal((await call('GET', '/is-connected')).status, 200);
        await heraldJson(['keys', 'revoke', created.id], env);
        assert.equal((await call('GET', '/is-connected')).status, 401);
      } finally {
        await server.close();
      }
    });
  });
}
