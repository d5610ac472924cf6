/**
 * `herald apps create` and `herald auth-server` as a user runs them: register
 * the auth server's application, start it as its own process on the same
 * database, and start a device flow against it.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { freePort } from '../helpers/herald.ts';
import { createTestDatabase, testStores, storeSuite } from '../helpers/stores.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const BIN = path.join(ROOT, 'bin', 'herald.js');

function cliEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('HERALD_') && name !== 'PORT'));
  return { ...env, ...extra };
}

function herald(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Starts `herald auth-server` and waits until it listens; its output so far, and how to stop it. */
async function startAuth(env: NodeJS.ProcessEnv): Promise<{ output: () => string; stop: () => Promise<void> }> {
  const child = spawn(process.execPath, [BIN, 'auth-server'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`auth-server did not start:\n${output}`)), 30_000);
    const collect = (chunk: Buffer) => {
      output += chunk;
      if (output.includes('auth server is listening')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    child.on('exit', (code) => reject(new Error(`auth-server exited with ${code}:\n${output}`)));
  });
  return {
    output: () => output,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

for (const store of await testStores()) {
  describe(`herald apps and herald auth-server (${store})`, storeSuite(store), () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-auth-cli-'));
    let database: { url: string; drop(): Promise<void> } | undefined;
    let env: NodeJS.ProcessEnv;
    let port: number;
    let stop: (() => Promise<void>) | undefined;

    before(async () => {
      database = store === 'postgres' ? await createTestDatabase() : undefined;
      port = await freePort();
      env = cliEnv({
        HERALD_DATA_DIR: dataDir,
        HERALD_SECRET: 'cli-secret-8e1a3c5f7b9d2f4a6c8e0b3d5f7a9c1e',
        ...(database ? { HERALD_DATABASE_URL: database.url } : {}),
      });
    });
    after(async () => {
      await stop?.();
      await database?.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    });

    it("auth-server on Herald's store without client credentials registers its own application, and uses it again after a restart", async () => {
      const authUrl = `http://127.0.0.1:${port}`;
      const authEnv = {
        ...env,
        HERALD_AUTH_PORT: String(port),
        HERALD_HOST: '127.0.0.1',
        HERALD_AUTH_PUBLIC_URL: authUrl,
        HERALD_API_URL: 'http://127.0.0.1:5999/api',
      };
      const first = await startAuth(authEnv);
      const registered = /registered its own at Herald \(client ([^)]+)\)/.exec(first.output());
      assert.ok(registered, first.output());
      const code = await fetch(`${authUrl}/device/code`, { method: 'POST', headers: { 'content-type': 'application/json' } });
      assert.equal(code.status, 200);
      await first.stop();

      const second = await startAuth(authEnv);
      assert.ok(second.output().includes(`client ${registered[1]})`), second.output());
      assert.ok(!second.output().includes('registered its own'), 'the same application, not a second one');
      await second.stop();
      const listed = JSON.parse((await herald(['apps', 'list', '--json'], env)).stdout);
      assert.deepEqual(
        listed.map((a: any) => [a.clientId, a.redirectUris]),
        [[registered[1], [`${authUrl}/device/callback`]]],
      );
      assert.equal(listed[0].tokenLifetime, 90 * 24 * 60 * 60);
      // Only one of client id and secret is a mistake, said at once.
      const half = await herald(['auth-server'], { ...authEnv, HERALD_AUTH_CLIENT_ID: 'only-the-id' });
      assert.equal(half.code, 1);
      assert.match(half.stderr, /HERALD_AUTH_CLIENT_ID and HERALD_AUTH_CLIENT_SECRET go together/);
    });

    it('apps create registers the client; auth-server runs with it and starts device flows', async () => {
      const authUrl = `http://127.0.0.1:${port}`;
      const created = await herald(
        ['apps', 'create', '--name', 'Device login', '--redirect-uri', `${authUrl}/device/callback`, '--token-lifetime', '7776000', '--json'],
        env,
      );
      assert.equal(created.code, 0, created.stderr);
      const app = JSON.parse(created.stdout);
      assert.match(app.clientSecret, /^hcs_/);
      assert.equal(app.tokenLifetime, 7776000);
      const listed = await herald(['apps', 'list', '--json'], env);
      // Beside the one the auth server registered for itself in the test before.
      assert.equal(JSON.parse(listed.stdout).filter((a: any) => a.clientId === app.clientId).length, 1);
      assert.ok(!listed.stdout.includes(app.clientSecret), '!listed.stdout.includes(app.clientSecret)');

      const auth = await startAuth({
        ...env,
        HERALD_AUTH_PORT: String(port),
        HERALD_HOST: '127.0.0.1',
        HERALD_AUTH_PUBLIC_URL: authUrl,
        HERALD_API_URL: 'http://127.0.0.1:5999/api',
        HERALD_AUTH_CLIENT_ID: app.clientId,
        HERALD_AUTH_CLIENT_SECRET: app.clientSecret,
      });
      stop = auth.stop;
      const output = auth.output();
      assert.ok(!output.includes(app.clientSecret), 'the secret is never printed');
      assert.deepEqual(await (await fetch(`${authUrl}/health`)).json(), { status: 'ok' });
      const started = await fetch(`${authUrl}/device/code`, { method: 'POST', headers: { 'content-type': 'application/json' } });
      assert.equal(started.status, 200);
      const body = (await started.json()) as any;
      assert.equal(body.verification_uri, `${authUrl}/device/verify`);
      assert.equal(body.interval, 5);
      // The code leads to Herald's consent page for this client, with PKCE.
      const entered = await fetch(`${authUrl}/device/verify`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: `code=${body.user_code}`,
        redirect: 'manual',
      });
      assert.equal(entered.status, 303);
      const target = new URL(entered.headers.get('location')!);
      assert.equal(target.origin + target.pathname, 'http://127.0.0.1:5999/oauth/authorize');
      assert.equal(target.searchParams.get('client_id'), app.clientId);
      assert.equal(target.searchParams.get('redirect_uri'), `${authUrl}/device/callback`);
      assert.equal(target.searchParams.get('code_challenge_method'), 'S256');
    });
  });
}
