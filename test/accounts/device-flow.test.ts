/**
 * The device-flow auth server (seed 5.5) end to end over HTTP, with the
 * published `postiz` CLI, unchanged, as the device: `auth:login --auth-server`
 * in an empty home folder, the browser step played by the test (the CLI's
 * "open a browser" lands in a stand-in `xdg-open` that records the address),
 * then `integrations:list` with the stored token. Herald and the auth server
 * share one database, SQLite or PostgreSQL.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadAuthServerConfig } from '../../src/config.ts';
import { startAuthServer, type AuthServer } from '../../src/auth-server/server.ts';
import { addWebhookChannel } from '../helpers/api-fixtures.ts';
import { untypedCaller, eventually, freePort, startHerald, type TestHerald, testAccount } from '../helpers/herald.ts';
import { POSTIZ_CLI, printedJson, describeRun, type CliResult } from '../helpers/postiz-cli.ts';
import { testStores, storeSuite } from '../helpers/stores.ts';
import { formOf, location, WebClient } from './web-client.ts';

interface Device {
  home: string;
  /** The address the CLI asked the browser to open, once it did. */
  openedUrl(): Promise<URL>;
  done: Promise<CliResult>;
}

/** Runs the postiz CLI in its own empty home folder, with an `xdg-open` that only writes down the address. */
function postiz(args: string[], home = fs.mkdtempSync(path.join(os.tmpdir(), 'postiz-device-'))): Device {
  const bin = path.join(home, 'bin');
  fs.mkdirSync(bin, { recursive: true });
  fs.writeFileSync(path.join(bin, 'xdg-open'), '#!/bin/sh\nprintf "%s" "$1" > "$HOME/opened-url"\n', { mode: 0o755 });
  const env = { PATH: `${bin}:${process.env.PATH ?? ''}`, HOME: home };
  const child = spawn(process.execPath, [POSTIZ_CLI, ...args], { env, cwd: home, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c) => (stdout += c));
  child.stderr.on('data', (c) => (stderr += c));
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const done = new Promise<CliResult>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
  const file = path.join(home, 'opened-url');
  return {
    home,
    done,
    openedUrl: () =>
      eventually(
        async () => (fs.existsSync(file) && fs.readFileSync(file, 'utf8') ? new URL(fs.readFileSync(file, 'utf8')) : undefined),
        20_000,
        'the CLI to open the browser',
      ),
  };
}

for (const store of await testStores()) {
  describe(`device-flow auth server (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let auth: AuthServer;
    let owner: WebClient;
    let accountId: string;
    let channelId: string;
    const homes: string[] = [];

    async function device(args: string[]): Promise<Device> {
      const d = postiz(args);
      homes.push(d.home);
      return d;
    }

    async function post(pathname: string, body: unknown) {
      const response = await fetch(auth.url + pathname, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      return { status: response.status, body: (await response.json()) as any };
    }

    /** The person's browser: enters the code, approves or denies at Herald, lands on the callback. */
    async function browser(verifyUrl: URL, decision: 'approve' | 'deny'): Promise<{ status: number; text: string }> {
      const page = await owner.request('GET', verifyUrl.toString());
      assert.equal(page.status, 200);
      const form = formOf(page.text);
      const toHerald = location(await owner.request('POST', new URL(form.action, auth.url).toString(), { form: form.fields }), auth.url);
      assert.equal(toHerald.origin + toHerald.pathname, `${herald.url}/oauth/authorize`);
      assert.equal(toHerald.searchParams.get('code_challenge_method'), 'S256');
      const consent = await owner.request('GET', toHerald.toString());
      assert.equal(consent.status, 200, consent.text);
      const approval = formOf(consent.text);
      const back = location(
        await owner.request('POST', new URL(approval.action, herald.url).toString(), { form: { ...approval.fields, decision } }),
        herald.url,
      );
      assert.equal(back.origin + back.pathname, `${auth.url}/device/callback`);
      return owner.request('GET', back.toString());
    }

    async function pendingRows(): Promise<number> {
      return (await herald.services.store.db.selectFrom('device_requests').select('user_code').execute()).length;
    }

    before(async () => {
      herald = await startHerald(store);
      owner = new WebClient(herald.url);
      accountId = (await owner.signUp('owner@example.com')).body.account.id;
      const key = (await owner.app('POST', '/keys', { name: 'setup' })).body.key;
      channelId = (await addWebhookChannel(testAccount(herald.api, accountId, key), { name: 'My hook' })).id;
      const port = await freePort();
      const authUrl = `http://127.0.0.1:${port}`;
      const registered = await owner.app('POST', '/oauth/apps', {
        name: 'Herald device login',
        redirectUris: [`${authUrl}/device/callback`],
        tokenLifetime: 90 * 86_400,
      });
      assert.equal(registered.status, 201);
      const config = loadAuthServerConfig({
        HERALD_AUTH_PORT: String(port),
        HERALD_HOST: '127.0.0.1',
        HERALD_AUTH_PUBLIC_URL: authUrl,
        HERALD_API_URL: `${herald.url}/api`,
        HERALD_AUTH_CLIENT_ID: registered.body.clientId,
        HERALD_AUTH_CLIENT_SECRET: registered.body.clientSecret,
        HERALD_AUTH_POLL_INTERVAL: '1',
      });
      auth = await startAuthServer(config, herald.services.config, { logger: false });
      assert.equal(auth.url, authUrl);
    });
    after(async () => {
      await auth?.close();
      await herald?.close();
      for (const home of homes) fs.rmSync(home, { recursive: true, force: true });
    });

    it('GET /health', async () => {
      const response = await fetch(`${auth.url}/health`);
      assert.equal(response.status, 200);
      assert.deepEqual(await response.json(), { status: 'ok' });
    });

    it('postiz auth:login signs in through the browser; integrations:list then works with the stored token', async () => {
      const login = await device(['auth:login', '--auth-server', auth.url]);
      const opened = await login.openedUrl();
      assert.equal(opened.origin + opened.pathname, `${auth.url}/device/verify`);
      // The page shows the code the CLI printed, filled in.
      const code = opened.searchParams.get('code')!;
      assert.match(code, /^[A-Z]{4}-[A-Z]{4}$/);
      const page = await owner.request('GET', opened.toString());
      assert.equal(formOf(page.text).fields.code, code);
      const landed = await browser(opened, 'approve');
      assert.equal(landed.status, 200);
      assert.match(landed.text, /Signed in/);

      const result = await login.done;
      assert.equal(result.code, 0, describeRun(result));
      assert.ok(result.stdout.includes(code), 'the CLI showed the code');
      assert.match(result.stdout, /Successfully authenticated/);
      const stored = JSON.parse(fs.readFileSync(path.join(login.home, '.postiz', 'credentials.json'), 'utf8'));
      assert.match(stored.accessToken, /^hat_/);
      assert.equal(stored.apiUrl, `${herald.url}/api`);
      assert.equal(stored.organizationId, accountId);
      assert.equal(await pendingRows(), 0, 'the request is deleted once its token is fetched');

      // No POSTIZ_API_KEY anywhere: the stored token is what authenticates.
      const listed = await postiz(['integrations:list'], login.home).done;
      assert.equal(listed.code, 0, describeRun(listed));
      assert.deepEqual(
        printedJson(listed).map((c: any) => c.id),
        [channelId],
      );
      // The grant shows in the account's settings, where it can be revoked.
      const grants = await owner.app('GET', '/oauth/authorizations');
      assert.ok(
        grants.body.some((g: any) => g.app.name === 'Herald device login'),
        "grants.body.some((g: any) => g.app.name === 'Herald device login')",
      );
    });

    it('a denied request: the CLI is told access_denied and stores nothing', async () => {
      const login = await device(['auth:login', '--auth-server', auth.url]);
      const landed = await browser(await login.openedUrl(), 'deny');
      assert.match(landed.text, /refused/);
      const result = await login.done;
      assert.equal(result.code, 1, describeRun(result));
      assert.match(result.stderr, /access_denied/);
      assert.equal(fs.existsSync(path.join(login.home, '.postiz', 'credentials.json')), false);
      assert.equal(await pendingRows(), 0);
    });

    it('an expired request: the CLI is told expired_token, the request is deleted and its code no longer works', async () => {
      const login = await device(['auth:login', '--auth-server', auth.url]);
      const opened = await login.openedUrl();
      // Fifteen minutes pass.
      await herald.services.store.db
        .updateTable('device_requests')
        .set({ expires_at: Date.now() - 1 })
        .execute();
      const result = await login.done;
      assert.equal(result.code, 1, describeRun(result));
      assert.match(result.stderr, /expired/i);
      assert.equal(await pendingRows(), 0);
      const page = await owner.request('GET', opened.toString());
      const entered = await owner.request('POST', `${auth.url}/device/verify`, { form: formOf(page.text).fields });
      assert.equal(entered.status, 400);
      assert.match(entered.text, /unknown or expired/);
    });

    it('a token is handed out once: fetching it twice gets invalid_grant', async () => {
      const started = await post('/device/code', {});
      assert.equal(started.status, 200);
      assert.equal(started.body.expires_in, 900);
      assert.equal(started.body.interval, 1);
      const pending = await post('/device/token', { device_code: started.body.device_code });
      assert.equal(pending.status, 400);
      assert.equal(pending.body.error, 'authorization_pending');
      await browser(new URL(started.body.verification_uri_complete), 'approve');
      const first = await post('/device/token', { device_code: started.body.device_code });
      assert.equal(first.status, 200, JSON.stringify(first.body));
      assert.equal(first.body.api_url, `${herald.url}/api`);
      assert.equal(first.body.organization_id, accountId);
      assert.equal(first.body.expires_in, 90 * 86_400);
      assert.equal((await untypedCaller(herald.api, first.body.access_token)('GET', '/integrations')).status, 200);
      const second = await post('/device/token', { device_code: started.body.device_code });
      assert.equal(second.status, 400);
      assert.equal(second.body.error, 'invalid_grant');
    });

    it('polling faster than the interval gets slow_down with a longer interval', async () => {
      const started = await post('/device/code', {});
      assert.equal((await post('/device/token', { device_code: started.body.device_code })).body.error, 'authorization_pending');
      const tooFast = await post('/device/token', { device_code: started.body.device_code });
      assert.equal(tooFast.status, 400);
      assert.equal(tooFast.body.error, 'slow_down');
      assert.equal(tooFast.body.interval, 6);
    });

    it('bad input: missing or unknown device_code, unknown user code, a stray callback', async () => {
      const missing = await post('/device/token', {});
      assert.equal(missing.status, 400);
      assert.equal(missing.body.error, 'invalid_request');
      assert.equal((await post('/device/token', { device_code: 'hdc_nope' })).body.error, 'invalid_grant');
      const entered = await fetch(`${auth.url}/device/verify`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'code=BCDF-GHJK',
        redirect: 'manual',
      });
      assert.equal(entered.status, 400);
      const stray = await fetch(`${auth.url}/device/callback?code=x&state=unknown`);
      assert.equal(stray.status, 400);
      const page = await fetch(`${auth.url}/device/verify?code=${encodeURIComponent('<script>')}`);
      assert.ok(!(await page.text()).includes('<script>'), 'the prefilled code is escaped');
    });

    // Last in this suite: it uses up this address's allowance of code entries.
    it('code entries are limited per real address, whatever X-Forwarded-For claims (no proxy is trusted by default)', async () => {
      let limitedAt: number | undefined;
      for (let i = 1; i <= 31 && limitedAt === undefined; i++) {
        const entered = await fetch(`${auth.url}/device/verify`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': `198.51.100.${i}` },
          body: 'code=BCDF-GHJK',
          redirect: 'manual',
        });
        await entered.text();
        if (entered.status === 429) limitedAt = i;
      }
      assert.ok(limitedAt !== undefined, 'a guesser changing X-Forwarded-For on every try is still limited within 31 tries');
    });
  });
}
