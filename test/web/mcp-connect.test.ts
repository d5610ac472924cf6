/**
 * An assistant connects to Herald's MCP server with only its address, as a
 * custom connector does: the official MCP SDK client, with an OAuth provider,
 * is refused, discovers Herald's authorization server from the 401, registers
 * itself, and sends the person to the consent page, where they approve in a
 * real browser. It then calls a tool, refreshes its token, and once the person
 * disconnects it in Settings its next call is refused.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { auth, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { Browser } from 'playwright-core';
import { startHerald, type TestHerald } from '../helpers/herald.ts';
import { storeSuite } from '../helpers/stores.ts';
import { BROWSER_STORES, browserContext, browserSuite, ensureWebBuilt, launchBrowser, screenshot } from '../helpers/browser.ts';
import { WebClient } from '../accounts/web-client.ts';
import { teardown } from '../helpers/teardown.ts';

/** What an assistant keeps between steps: its registration, its tokens, and where it sent the person. */
class AssistantProvider implements OAuthClientProvider {
  client?: OAuthClientInformationMixed;
  saved?: OAuthTokens;
  verifier?: string;
  authorizationUrl?: URL;

  constructor(readonly redirectUrl: string) {}

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'Test Assistant',
      client_uri: 'https://assistant.example',
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.client = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  /** What a client forgets when Herald says its registration or grant is gone. */
  invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery') {
    if (scope === 'all' || scope === 'client') this.client = undefined;
    if (scope === 'all' || scope === 'tokens') this.saved = undefined;
  }
  codeVerifier() {
    assert.ok(this.verifier, 'a code verifier was saved');
    return this.verifier;
  }
}

/** The assistant's redirect endpoint: answers the browser and hands the code over. */
async function callbackServer(): Promise<{ url: string; code: Promise<string>; close: () => Promise<void> }> {
  let deliver!: (code: string) => void;
  const code = new Promise<string>((resolve) => {
    deliver = resolve;
  });
  const server = http.createServer((request, response) => {
    const query = new URL(request.url ?? '/', 'http://127.0.0.1').searchParams;
    response.writeHead(200, { 'content-type': 'text/plain' }).end('Connected: you can close this tab.');
    const got = query.get('code');
    if (got) deliver(got);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/callback`, code, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

async function mcpStatus(url: string, accessToken: string): Promise<number> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  await response.body?.cancel();
  return response.status;
}

const browser = browserSuite();

for (const store of BROWSER_STORES) {
  describe(`An assistant connects with only the MCP address (${store})`, { skip: storeSuite(store).skip || browser.skip }, () => {
    let herald: TestHerald;
    let chromium: Browser;
    let callback: Awaited<ReturnType<typeof callbackServer>>;

    before(async () => {
      ensureWebBuilt();
      herald = await startHerald(store);
      chromium = await launchBrowser();
      callback = await callbackServer();
    });
    after(() =>
      teardown(
        () => chromium?.close(),
        () => callback?.close(),
        () => herald?.close(),
      ),
    );

    it('discovers, registers, is approved in the browser, calls a tool, refreshes, and is cut off when disconnected', async () => {
      const owner = new WebClient(herald.url);
      await owner.signUp('owner@example.com');
      const context = await browserContext(chromium, herald.url, owner);
      const page = await context.newPage();
      const mcpUrl = new URL(`${herald.url}/api/mcp`);
      const provider = new AssistantProvider(callback.url);

      // Knowing only the address: refused, it finds the authorization server, registers, and sends the person to consent.
      const first = new Client({ name: 'test-assistant', version: '1.0.0' });
      const firstTransport = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider });
      await assert.rejects(first.connect(firstTransport), /Unauthorized/);
      assert.match(String(provider.client?.client_id), /^mcp_/, 'the client registered itself');
      const asked = provider.authorizationUrl;
      assert.ok(asked, 'the person was sent to authorize');
      assert.equal(asked.origin + asked.pathname, `${herald.url}/oauth/authorize`);
      assert.equal(asked.searchParams.get('resource'), mcpUrl.href);
      assert.equal(asked.searchParams.get('code_challenge_method'), 'S256');

      await page.goto(asked.href);
      await page.getByRole('heading', { name: 'Authorize Test Assistant?' }).waitFor();
      await page.getByText('registered itself with Herald').waitFor();
      await screenshot(page, store, 'mcp-agent-consent');
      await page.getByRole('button', { name: 'Approve' }).click();
      await page.waitForURL((url) => url.href.startsWith(callback.url));
      await firstTransport.finishAuth(await callback.code);
      await first.close();

      // Signed in: the assistant calls a tool.
      const client = new Client({ name: 'test-assistant', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider }));
      const listed = await client.callTool({ name: 'list_channels', arguments: {} });
      assert.notEqual(listed.isError, true, JSON.stringify(listed));

      // Its token is refreshed: a new pair, the old access token refused, the new one used by the next call.
      const before = provider.saved!;
      assert.ok(before.refresh_token, 'a refresh token came with the access token');
      assert.equal(await auth(provider, { serverUrl: mcpUrl }), 'AUTHORIZED');
      assert.notEqual(provider.saved!.access_token, before.access_token);
      assert.notEqual(provider.saved!.refresh_token, before.refresh_token);
      assert.equal(await mcpStatus(mcpUrl.href, before.access_token), 401);
      assert.notEqual((await client.callTool({ name: 'list_channels', arguments: {} })).isError, true);

      // The person disconnects it in Settings: its next call is refused.
      await page.goto(`${herald.url}/settings/developers`);
      const card = page.getByTestId(`agent-${provider.client!.client_id}`);
      await card.getByText('Test Assistant').waitFor();
      await screenshot(page, store, 'settings-connected-agents');
      page.once('dialog', (dialog) => void dialog.accept());
      await card.getByRole('button', { name: 'Disconnect' }).click();
      await card.waitFor({ state: 'detached' });
      const cutOff = provider.saved!;
      assert.equal(await mcpStatus(mcpUrl.href, cutOff.access_token), 401);
      const disconnectedId = provider.client!.client_id;
      await assert.rejects(client.callTool({ name: 'list_channels', arguments: {} }), /Unauthorized/);
      // Its registration and refresh token are gone: it can only register anew and ask the person again.
      assert.notEqual(provider.client?.client_id, disconnectedId);
      assert.notEqual(provider.authorizationUrl?.href, asked.href);
      await client.close().catch(() => {});
      await context.close();
    });
  });
}
