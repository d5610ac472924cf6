/**
 * MCP clients that sign in by themselves (MCP authorization): the 401 of
 * /api/mcp points to its protected resource metadata (RFC 9728), that names
 * Herald's authorization server (RFC 8414), where the client registers itself
 * (RFC 7591), asks with PKCE for a token bound to the MCP server (RFC 8707), and
 * refreshes and revokes it. Played over HTTP here; the browser and the official
 * SDK client do the same in test/web/mcp-connect.test.ts.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { REGISTRATIONS_PER_ADDRESS, RegistrationError } from '../../src/domain/dynamic-clients.ts';
import { SCOPES } from '../../src/domain/scopes.ts';
import { startHerald, type TestHerald } from '../helpers/herald.ts';
import { storeSuite, testStores } from '../helpers/stores.ts';
import { formOf, location, WebClient } from './web-client.ts';

const CALLBACK = 'http://127.0.0.1:9/agent/callback';

function pkce() {
  const verifier = crypto.randomBytes(32).toString('base64url');
  return { verifier, challenge: crypto.createHash('sha256').update(verifier).digest('base64url') };
}

for (const store of await testStores()) {
  describe(`MCP clients sign in by themselves (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let owner: WebClient;
    let mcpUrl: string;
    let apiKey: string;
    /** Registration requests this Herald read from 127.0.0.1, refused ones too (the per-address limit counts them; an unreadable body never reaches it). */
    let attempts = 0;

    async function register(metadata: unknown, raw?: string) {
      const response = await fetch(`${herald.url}/api/oauth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: raw ?? JSON.stringify(metadata),
      });
      if (response.status !== 429 && raw === undefined) attempts++;
      return { status: response.status, headers: response.headers, body: (await response.json()) as any };
    }

    async function token(fields: Record<string, string>) {
      const response = await fetch(`${herald.url}/api/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(fields).toString(),
      });
      return { status: response.status, body: (await response.json()) as any };
    }

    /** An MCP initialize call with `credential`. */
    async function mcp(credential?: string) {
      return fetch(mcpUrl, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...(credential ? { authorization: `Bearer ${credential}` } : {}),
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'agent-test', version: '1.0.0' } },
        }),
      });
    }

    const publicApi = (credential: string) => fetch(`${herald.api}/is-connected`, { headers: { authorization: `Bearer ${credential}` } });

    /** The consent page for `params` (the person is signed in), then their decision; the redirect Herald answers with. */
    async function consent(params: Record<string, string>, check?: (page: string) => void): Promise<URL> {
      const page = await owner.request('GET', `/oauth/authorize?${new URLSearchParams(params)}`);
      if (page.status !== 200) return location(page, herald.url);
      check?.(page.text);
      const form = formOf(page.text);
      return location(await owner.request('POST', form.action, { form: { ...form.fields, decision: 'approve' } }), herald.url);
    }

    /** A public client registers, is approved, and gets its first tokens. */
    async function connectAgent(name = 'Assistant connector') {
      const client = (await register({ client_name: name, redirect_uris: [CALLBACK], token_endpoint_auth_method: 'none' })).body;
      const { verifier, challenge } = pkce();
      const back = await consent({
        response_type: 'code',
        client_id: client.client_id,
        redirect_uri: CALLBACK,
        code_challenge: challenge,
        code_challenge_method: 'S256',
        resource: mcpUrl,
        state: 's1',
      });
      const code = back.searchParams.get('code');
      assert.ok(code, `approved: ${back}`);
      const tokens = await token({
        grant_type: 'authorization_code',
        code,
        client_id: client.client_id,
        redirect_uri: CALLBACK,
        code_verifier: verifier,
        resource: mcpUrl,
      });
      assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
      return { client, tokens: tokens.body as { access_token: string; refresh_token: string } };
    }

    before(async () => {
      herald = await startHerald(store);
      mcpUrl = `${herald.url}/api/mcp`;
      owner = new WebClient(herald.url);
      await owner.signUp('owner@example.com');
      apiKey = (await owner.app('POST', '/keys', { name: 'assistant' })).body.key;
    });
    after(async () => herald?.close());

    it('the 401 of /api/mcp points to metadata that leads to the authorization server; API keys still work', async () => {
      const refused = await mcp();
      assert.equal(refused.status, 401);
      const challenge = refused.headers.get('www-authenticate') ?? '';
      const metadataUrl = /resource_metadata="([^"]+)"/.exec(challenge)?.[1];
      assert.equal(metadataUrl, `${herald.url}/.well-known/oauth-protected-resource/api/mcp`, challenge);
      assert.match(challenge, /^Bearer /);
      assert.match((await mcp('hat_not-a-real-token')).headers.get('www-authenticate') ?? '', /error="invalid_token"/);

      const resource = await fetch(metadataUrl);
      assert.equal(resource.status, 200);
      const described = (await resource.json()) as any;
      assert.equal(described.resource, mcpUrl);
      assert.deepEqual(described.authorization_servers, [herald.url]);
      assert.deepEqual(described.scopes_supported, Object.keys(SCOPES));
      // The root form of the address says the same (clients that do not add the path).
      assert.deepEqual(await (await fetch(`${herald.url}/.well-known/oauth-protected-resource`)).json(), described);

      const server = (await (await fetch(`${herald.url}/.well-known/oauth-authorization-server`)).json()) as any;
      assert.equal(server.issuer, herald.url);
      assert.equal(server.authorization_endpoint, `${herald.url}/oauth/authorize`);
      assert.equal(server.token_endpoint, `${herald.url}/api/oauth/token`);
      assert.equal(server.registration_endpoint, `${herald.url}/api/oauth/register`);
      assert.equal(server.revocation_endpoint, `${herald.url}/api/oauth/revoke`);
      assert.deepEqual(server.code_challenge_methods_supported, ['S256']);
      assert.deepEqual(server.grant_types_supported, ['authorization_code', 'refresh_token']);
      assert.deepEqual(server.response_types_supported, ['code']);
      assert.ok(server.token_endpoint_auth_methods_supported.includes('none'));

      const withKey = await mcp(apiKey);
      assert.equal(withKey.status, 200, await withKey.clone().text());
      assert.equal(((await withKey.json()) as any).result.serverInfo.name.length > 0, true);
    });

    it('refuses bad registrations, naming the field as RFC 7591 does', async () => {
      const cases: [unknown, string, string][] = [
        [{ client_name: 'x' }, 'invalid_redirect_uri', 'redirect_uris'],
        [{ redirect_uris: [] }, 'invalid_redirect_uri', 'redirect_uris'],
        [{ redirect_uris: ['http://agent.example/callback'] }, 'invalid_redirect_uri', 'redirect_uris[0]'],
        [{ redirect_uris: [CALLBACK, 'javascript:alert(1)'] }, 'invalid_redirect_uri', 'redirect_uris[1]'],
        [{ redirect_uris: ['https://agent.example/cb#frag'] }, 'invalid_redirect_uri', 'redirect_uris[0]'],
        [{ redirect_uris: ['not a url'] }, 'invalid_redirect_uri', 'redirect_uris[0]'],
        [{ redirect_uris: [CALLBACK], grant_types: ['client_credentials'] }, 'invalid_client_metadata', 'grant_types'],
        [{ redirect_uris: [CALLBACK], response_types: ['token'] }, 'invalid_client_metadata', 'response_types'],
        [{ redirect_uris: [CALLBACK], token_endpoint_auth_method: 'private_key_jwt' }, 'invalid_client_metadata', 'token_endpoint_auth_method'],
        [{ redirect_uris: [CALLBACK], scope: 'posts:read everything' }, 'invalid_client_metadata', 'scope'],
        [{ redirect_uris: [CALLBACK], client_name: 'Bad\u0007name' }, 'invalid_client_metadata', 'client_name'],
        [{ redirect_uris: [CALLBACK], client_name: 42 }, 'invalid_client_metadata', 'client_name'],
        [[CALLBACK], 'invalid_client_metadata', ''],
      ];
      for (const [metadata, error, field] of cases) {
        const answer = await register(metadata);
        assert.equal(answer.status, 400, `${JSON.stringify(metadata)}: ${JSON.stringify(answer.body)}`);
        assert.equal(answer.body.error, error, JSON.stringify(answer.body));
        if (field) {
          assert.ok(answer.body.error_description.startsWith(field), `${answer.body.error_description} names ${field}`);
          assert.equal(answer.body.errors[0]?.path, field);
        }
      }
      const notJson = await register(undefined, '{"redirect_uris": [');
      assert.equal(notJson.status, 400);
      assert.equal(notJson.body.error, 'invalid_client_metadata');
    });

    it('registers a public client, which must use PKCE and gets a token for the MCP server only', async () => {
      const registered = await register({
        client_name: 'Claude connector',
        client_uri: 'https://assistant.example',
        redirect_uris: [CALLBACK, 'http://localhost:6274/callback', 'https://assistant.example/oauth/callback'],
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code', 'refresh_token'],
      });
      assert.equal(registered.status, 201, JSON.stringify(registered.body));
      const client = registered.body;
      assert.match(client.client_id, /^mcp_/);
      assert.equal(client.client_secret, undefined, 'a public client gets no secret');
      assert.equal(client.client_name, 'Claude connector');
      assert.equal(client.token_endpoint_auth_method, 'none');
      const base = { response_type: 'code', client_id: client.client_id, redirect_uri: CALLBACK, state: 'st' };

      const noPkce = await consent({ ...base, resource: mcpUrl });
      assert.equal(noPkce.searchParams.get('error'), 'invalid_request');
      assert.match(noPkce.searchParams.get('error_description')!, /code_challenge/);

      const { challenge } = pkce();
      const otherResource = await consent({ ...base, code_challenge: challenge, code_challenge_method: 'S256', resource: `${herald.url}/api/public/v1` });
      assert.equal(otherResource.searchParams.get('error'), 'invalid_target');

      let shown = '';
      const back = await consent({ ...base, code_challenge: challenge, code_challenge_method: 'S256', resource: mcpUrl }, (page) => {
        shown = page;
      });
      assert.match(shown, /Authorize Claude connector\?/);
      assert.match(shown, /registered itself with Herald/);
      assert.match(shown, /https:\/\/assistant\.example/);
      const code = back.searchParams.get('code')!;
      assert.ok(code, String(back));

      const wrongVerifier = await token({
        grant_type: 'authorization_code',
        code,
        client_id: client.client_id,
        redirect_uri: CALLBACK,
        code_verifier: pkce().verifier,
      });
      assert.equal(wrongVerifier.status, 400);
      assert.equal(wrongVerifier.body.error, 'invalid_grant');
    });

    it('a token bound to the MCP server works there only; refresh rotates; revocation ends access at once', async () => {
      const { client, tokens } = await connectAgent();
      assert.equal((await mcp(tokens.access_token)).status, 200);
      const elsewhere = await publicApi(tokens.access_token);
      assert.equal(elsewhere.status, 401, 'the public API refuses a token issued for the MCP server');
      assert.match(((await elsewhere.json()) as any).message, /issued for .*\/api\/mcp/);

      const refreshed = await token({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: client.client_id, resource: mcpUrl });
      assert.equal(refreshed.status, 200, JSON.stringify(refreshed.body));
      assert.notEqual(refreshed.body.refresh_token, tokens.refresh_token);
      assert.equal((await mcp(tokens.access_token)).status, 401, 'the old access token ended with the refresh');
      const again = await token({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: client.client_id });
      assert.equal(again.body.error, 'invalid_grant', 'a refresh token is used once');
      assert.equal((await mcp(refreshed.body.access_token)).status, 200);

      const revoked = await fetch(`${herald.url}/api/oauth/revoke`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token: refreshed.body.access_token, client_id: client.client_id }).toString(),
      });
      assert.equal(revoked.status, 200);
      assert.equal((await mcp(refreshed.body.access_token)).status, 401);
    });

    it("a registered application's tokens: bound to a resource they are refused by the other; unbound they work as before", async () => {
      const app = (await owner.app('POST', '/oauth/apps', { name: 'Scheduler', redirectUris: [CALLBACK] })).body;
      async function appToken(resource?: string) {
        const back = await consent({ response_type: 'code', client_id: app.clientId, redirect_uri: CALLBACK, ...(resource ? { resource } : {}) });
        const code = back.searchParams.get('code');
        assert.ok(code, String(back));
        const answer = await token({
          grant_type: 'authorization_code',
          code,
          client_id: app.clientId,
          client_secret: app.clientSecret,
          redirect_uri: CALLBACK,
        });
        assert.equal(answer.status, 200, JSON.stringify(answer.body));
        return answer.body.access_token as string;
      }
      const unbound = await appToken();
      assert.equal((await publicApi(unbound)).status, 200);
      assert.equal((await mcp(unbound)).status, 200);

      const forApi = await appToken(`${herald.url}/api/public/v1`);
      assert.equal((await publicApi(forApi)).status, 200);
      const refused = await mcp(forApi);
      assert.equal(refused.status, 401, 'the MCP server refuses a token issued for the public API');
      assert.match(refused.headers.get('www-authenticate') ?? '', /error="invalid_token"/);

      const forMcp = await appToken(mcpUrl);
      assert.equal((await mcp(forMcp)).status, 200);
      assert.equal((await publicApi(forMcp)).status, 401);

      const unknown = await consent({ response_type: 'code', client_id: app.clientId, redirect_uri: CALLBACK, resource: 'https://elsewhere.example/api' });
      assert.equal(unknown.searchParams.get('error'), 'invalid_target');
    });

    it('Settings lists the connected agents; disconnecting one ends its tokens at once', async () => {
      const { client, tokens } = await connectAgent('Agent to disconnect');
      const listed = await owner.app('GET', '/oauth/agents');
      assert.equal(listed.status, 200);
      const agent = listed.body.find((a: any) => a.clientId === client.client_id);
      assert.ok(agent, JSON.stringify(listed.body));
      assert.equal(agent.name, 'Agent to disconnect');
      assert.equal(agent.activeTokens, 1);
      assert.deepEqual(agent.redirectUris, [CALLBACK]);

      const gone = await owner.app('DELETE', `/oauth/agents/${client.client_id}`);
      assert.equal(gone.status, 200, JSON.stringify(gone.body));
      assert.equal((await mcp(tokens.access_token)).status, 401);
      const refresh = await token({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: client.client_id });
      assert.equal(refresh.body.error, 'invalid_client', 'the registration is gone with it');
      assert.ok(!(await owner.app('GET', '/oauth/agents')).body.some((a: any) => a.clientId === client.client_id));
      assert.equal((await owner.app('DELETE', `/oauth/agents/${client.client_id}`)).status, 404);
    });

    it('an agent belongs to the account that first approved it', async () => {
      const { client } = await connectAgent('Owned agent');
      const otherAccount = await herald.services.accounts.create('Another account');
      assert.equal(await herald.services.oauth.agents.claim(client.client_id, otherAccount), false, 'another account cannot take it over');
      assert.ok(!(await herald.services.oauth.agents.list(otherAccount)).some((a) => a.clientId === client.client_id));
      const gone = await new WebClient(herald.url).request('GET', '/api/app/oauth/agents');
      assert.equal(gone.status, 401, 'the list needs a session');
    });

    it('a client registered with a secret must send it', async () => {
      const registered = await register({ client_name: 'Confidential agent', redirect_uris: [CALLBACK] });
      assert.equal(registered.status, 201);
      assert.match(registered.body.client_secret, /^hcs_/);
      assert.equal(registered.body.token_endpoint_auth_method, 'client_secret_basic');
      const withoutSecret = await token({ grant_type: 'refresh_token', refresh_token: 'hrt_x', client_id: registered.body.client_id });
      assert.equal(withoutSecret.status, 401);
      assert.equal(withoutSecret.body.error, 'invalid_client');
    });

    it('caps the registrations nobody approved, until they are pruned', async () => {
      const agents = herald.services.oauth.agents;
      const waiting = Number(
        (
          await herald.services.store.db
            .selectFrom('oauth_dynamic_clients')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('account_id', 'is', null)
            .where('deleted_at', 'is', null)
            .executeTakeFirstOrThrow()
        ).n,
      );
      const limits = { maxUnused: waiting + 1 };
      await agents.register({ redirect_uris: [CALLBACK] }, limits);
      await assert.rejects(agents.register({ redirect_uris: [CALLBACK] }, limits), (err: unknown) => {
        assert.ok(err instanceof RegistrationError);
        assert.equal(err.error, 'temporarily_unavailable');
        return true;
      });
      // A day later the unused ones are gone, and registering works again.
      await herald.services.oauth.prune(Date.now() + 2 * 86_400_000);
      await agents.register({ redirect_uris: [CALLBACK] }, limits);
    });

    it('limits registrations per address', async () => {
      let answer = await register({ redirect_uris: [CALLBACK], token_endpoint_auth_method: 'none' });
      while (answer.status === 201 && attempts <= REGISTRATIONS_PER_ADDRESS) {
        answer = await register({ redirect_uris: [CALLBACK], token_endpoint_auth_method: 'none' });
      }
      assert.equal(answer.status, 429, JSON.stringify(answer.body));
      assert.equal(attempts, REGISTRATIONS_PER_ADDRESS, 'refused after as many requests as the limit allows');
      assert.equal(answer.body.error, 'rate_limited');
      assert.ok(Number(answer.headers.get('retry-after')) > 0);
    });
  });
}
