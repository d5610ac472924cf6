/**
 * Settings › Developers shows the MCP server: its endpoint on this server and a
 * client configuration to copy. The configuration, with a real key put in for
 * the placeholder, is what an MCP client connects with.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Browser } from 'playwright-core';
import { startHerald, type TestHerald } from '../helpers/herald.ts';
import { storeSuite } from '../helpers/stores.ts';
import {
  BROWSER_STORES,
  browserContext,
  browserSuite,
  describeViolations,
  ensureWebBuilt,
  launchBrowser,
  screenshot,
  seriousA11yViolations,
} from '../helpers/browser.ts';
import { WebClient } from '../accounts/web-client.ts';
import { teardown } from '../helpers/teardown.ts';

const browser = browserSuite();

for (const store of BROWSER_STORES) {
  describe(`MCP server in Settings › Developers (${store})`, { skip: storeSuite(store).skip || browser.skip }, () => {
    let herald: TestHerald;
    let chromium: Browser;

    before(async () => {
      ensureWebBuilt();
      herald = await startHerald(store);
      chromium = await launchBrowser();
    });
    after(() =>
      teardown(
        () => chromium?.close(),
        () => herald?.close(),
      ),
    );

    it('shows the endpoint and a configuration that connects, copied as shown', async () => {
      const owner = new WebClient(herald.url);
      const accountId = (await owner.signUp('owner@example.com')).body.account.id;
      // Signed in as the owner (the session the sign-up set); axe is injected, so the page's CSP is bypassed.
      const context = await browserContext(chromium, herald.url, owner, { bypassCSP: true });
      await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: herald.url });
      const page = await context.newPage();
      await page.goto(`${herald.url}/settings/developers`);
      await page.getByRole('heading', { name: 'MCP server' }).waitFor();

      const endpoint = `${herald.url}/api/mcp`;
      assert.equal(await page.getByTestId('mcp-url').textContent(), endpoint);
      const shown = (await page.getByTestId('mcp-config').textContent())!;
      const config = JSON.parse(shown);
      assert.deepEqual(config, { mcpServers: { herald: { type: 'http', url: endpoint, headers: { Authorization: 'YOUR_API_KEY' } } } });
      await page.getByRole('button', { name: 'Copy the configuration' }).click();
      assert.equal(await page.evaluate(() => navigator.clipboard.readText()), shown);

      // What a person does next: a key in place of the placeholder, and the client is in.
      const { key } = await herald.services.accounts.createKey(accountId, 'assistant');
      const { url, headers } = config.mcpServers.herald;
      const client = new Client({ name: 'settings-page-check', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { ...headers, Authorization: key } } }));
      assert.ok(
        (await client.listTools()).tools.some((t) => t.name === 'create_post'),
        'the configuration the page shows connects an MCP client that can post',
      );
      await client.close();

      const problems = await seriousA11yViolations(page);
      assert.deepEqual(problems, [], describeViolations(problems));
      await screenshot(page, store, 'settings-developers-mcp');
      await page.setViewportSize({ width: 390, height: 844 });
      await screenshot(page, store, 'phone-settings-developers-mcp');
      await context.close();
    });
  });
}
