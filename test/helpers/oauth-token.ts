/**
 * An access token from Herald's OAuth server, got as an application gets one: an
 * owner registers the application, a person of the account consents in their
 * browser session, and the code is exchanged at /api/oauth/token. The token acts
 * for that person (a member's posts may then wait for approval).
 */
import assert from 'node:assert/strict';
import { formOf, location, type WebClient } from '../accounts/web-client.ts';

const REDIRECT = 'http://127.0.0.1:9/agent/callback';

/** `registrar` (an owner or admin) registers an application; `person` grants it `scope` (space-separated). */
export async function oauthAccessToken(heraldUrl: string, registrar: WebClient, person: WebClient, scope: string): Promise<string> {
  const registered = await registrar.app('POST', '/oauth/apps', { name: 'Agent app', redirectUris: [REDIRECT] });
  assert.equal(registered.status, 201, JSON.stringify(registered.body));
  const { clientId, clientSecret } = registered.body;
  const query = new URLSearchParams({ response_type: 'code', client_id: clientId, redirect_uri: REDIRECT, scope });
  const form = formOf((await person.request('GET', `/oauth/authorize?${query}`)).text);
  const back = location(await person.request('POST', form.action, { form: { ...form.fields, decision: 'approve' } }), heraldUrl);
  const token = await fetch(`${heraldUrl}/api/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code: back.searchParams.get('code')!,
      client_id: clientId,
      client_secret: clientSecret,
      redirect_uri: REDIRECT,
    }),
  });
  assert.equal(token.status, 200, await token.clone().text());
  const { access_token: accessToken } = (await token.json()) as { access_token: string };
  return accessToken;
}
