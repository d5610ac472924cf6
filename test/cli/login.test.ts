/**
 * `herald login` against the real device-flow auth server (src/auth-server)
 * and Herald's OAuth consent, end to end over HTTP. The client runs as the real
 * bin/herald.js in an empty home folder; the person's browser is played by the
 * test, starting from the link the client printed.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadAuthServerConfig } from '../../src/config.ts';
import { startAuthServer, type AuthServer } from '../../src/auth-server/server.ts';
import { addWebhookChannel } from '../helpers/api-fixtures.ts';
import { untypedCaller, eventually, freePort, startHerald, type TestHerald, testAccount } from '../helpers/herald.ts';
import { testStores, storeSuite } from '../helpers/stores.ts';
import { formOf, location, WebClient } from '../accounts/web-client.ts';
import { BIN, describeRun, emptyHome, printed, runHerald, type Run } from './run-herald.ts';

interface Login {
  /** The link the client printed for the browser. */
  link(): Promise<URL>;
  done: Promise<Run>;
}

function startLogin(env: Record<string, string>): Login {
  const child = spawn(process.execPath, [BIN, 'login'], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c) => (stdout += c));
  child.stderr.on('data', (c) => (stderr += c));
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const done = new Promise<Run>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
  return {
    done,
    link: () =>
      eventually(
        async () => {
          const match = /\(or open (\S+)\)/.exec(stderr);
          return match ? new URL(match[1]) : undefined;
        },
        30_000,
        'the client to print the link',
      ),
  };
}

for (const store of await testStores()) {
  describe(`herald login (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let auth: AuthServer;
    let owner: WebClient;
    let accountId: string;
    let channelId: string;
    let otherKey: string;
    const homes: ReturnType<typeof emptyHome>[] = [];

    function home() {
      const created = emptyHome();
      homes.push(created);
      return created;
    }

    /** The browser: the printed link, the code form, Herald's consent page, back to the auth server. */
    async function browser(link: URL, decision: 'approve' | 'deny'): Promise<string> {
      const page = await owner.request('GET', link.toString());
      assert.equal(page.status, 200);
      const form = formOf(page.text);
      const toHerald = location(await owner.request('POST', new URL(form.action, auth.url).toString(), { form: form.fields }), auth.url);
      const consent = await owner.request('GET', toHerald.toString());
      assert.equal(consent.status, 200, consent.text);
      const approval = formOf(consent.text);
      const back = location(
        await owner.request('POST', new URL(approval.action, herald.url).toString(), { form: { ...approval.fields, decision } }),
        herald.url,
      );
      return (await owner.request('GET', back.toString())).text;
    }

    before(async () => {
      herald = await startHerald(store);
      owner = new WebClient(herald.url);
      accountId = (await owner.signUp('cli-owner@example.com')).body.account.id;
      const key = (await owner.app('POST', '/keys', { name: 'setup' })).body.key;
      channelId = (await addWebhookChannel(testAccount(herald.api, accountId, key), { name: 'Owner hook' })).id;
      const other = await herald.newAccount('Someone else');
      await addWebhookChannel(other, { name: 'Other hook' });
      otherKey = other.key;
      const port = await freePort();
      const authUrl = `http://127.0.0.1:${port}`;
      const app = await owner.app('POST', '/oauth/apps', { name: 'Herald CLI login', redirectUris: [`${authUrl}/device/callback`] });
      assert.equal(app.status, 201, JSON.stringify(app.body));
      auth = await startAuthServer(
        loadAuthServerConfig({
          HERALD_AUTH_PORT: String(port),
          HERALD_HOST: '127.0.0.1',
          HERALD_AUTH_PUBLIC_URL: authUrl,
          HERALD_API_URL: `${herald.url}/api`,
          HERALD_AUTH_CLIENT_ID: app.body.clientId,
          HERALD_AUTH_CLIENT_SECRET: app.body.clientSecret,
          HERALD_AUTH_POLL_INTERVAL: '1',
        }),
        herald.services.config,
        { logger: false },
      );
    });
    after(async () => {
      await auth?.close();
      await herald?.close();
      for (const h of homes) h.cleanup();
    });

    it('signs in through the browser, stores the token (0600), and the token then wins over HERALD_API_KEY', async () => {
      const user = home();
      // The other account's key is set too: after login the stored token must be the one used.
      const env = { HOME: user.home, HERALD_AUTH_SERVER: auth.url, HERALD_API_KEY: otherKey };
      const login = startLogin(env);
      const link = await login.link();
      assert.equal(link.origin + link.pathname, `${auth.url}/device/verify`);
      assert.match(await browser(link, 'approve'), /Signed in/);
      const result = await login.done;
      assert.equal(result.code, 0, describeRun(result));
      assert.ok(result.stderr.includes(link.searchParams.get('code')!), 'the code is printed for the person to compare');
      assert.match(result.stdout, /Signed in\. API: /);

      const file = path.join(user.configDir, 'credentials.json');
      assert.equal(fs.statSync(file).mode & 0o777, 0o600);
      const stored = JSON.parse(fs.readFileSync(file, 'utf8'));
      assert.equal(stored.apiUrl, `${herald.url}/api`);
      assert.equal(stored.organizationId, accountId);

      assert.deepEqual(
        printed(await runHerald(['channels', 'list', '--json'], env)).map((c: any) => c.id),
        [channelId],
      );
      const who = printed(await runHerald(['whoami', '--json'], env));
      assert.equal(who.source, 'login');
      assert.equal(who.organizationId, accountId);
    });

    it('a refused login exits 1 and stores nothing', async () => {
      const user = home();
      const login = startLogin({ HOME: user.home, HERALD_AUTH_SERVER: auth.url });
      assert.match(await browser(await login.link(), 'deny'), /refused/);
      const result = await login.done;
      assert.equal(result.code, 1, describeRun(result));
      assert.match(result.stderr, /refused/);
      assert.equal(fs.existsSync(path.join(user.configDir, 'credentials.json')), false);
    });

    it('no auth server at HERALD_AUTH_SERVER: exit 1, says where it looked', async () => {
      const port = await freePort();
      const run = await runHerald(['login'], { HOME: home().home, HERALD_AUTH_SERVER: `http://127.0.0.1:${port}` });
      assert.equal(run.code, 1, describeRun(run));
      assert.match(run.stderr, new RegExp(`cannot reach http://127\\.0\\.0\\.1:${port}: connection refused`));
    });
  });
}
