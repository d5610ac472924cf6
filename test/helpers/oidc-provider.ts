/**
 * A real OpenID Connect provider for the single sign-on tests: the
 * `oidc-provider` package on 127.0.0.1 with its development sign-in pages
 * (any login name, any password; the tests sign in as the people they put in
 * `people`). Its keys are the test's, so a test can make the provider hand out
 * an ID token with a wrong claim (audience, expiry) signed as its real ones are:
 * only Herald's check of that claim stands between it and a session.
 */
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';
import { formOf, location, type WebAnswer, WebClient } from '../accounts/web-client.ts';
import { startHerald, type TestHerald } from './herald.ts';
import type { StoreKind } from './stores.ts';

export interface ProviderPerson {
  email: string;
  email_verified?: boolean;
  /** Microsoft Entra's "email domain owner verified", sent in place of email_verified. */
  xms_edov?: boolean;
  name?: string;
}

export interface TestProvider {
  /** The issuer (http://127.0.0.1:PORT), what HERALD_OIDC_ISSUER names. */
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** The provider's people by login name (their `sub`); change them freely between sign-ins. */
  people: Map<string, ProviderPerson>;
  /** Changes the claims of the next ID tokens the token endpoint hands out (undefined: as issued). */
  tamper?: (claims: Record<string, unknown>) => Record<string, unknown>;
  /** Registers Herald's callback address; called once Herald's address is known. */
  start(redirectUri: string): void;
  close(): Promise<void>;
}

const base64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** A listening provider; it answers once start() gave it Herald's redirect URI. */
export async function startOidcProvider(): Promise<TestProvider> {
  const { privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = { ...privateKey.export({ format: 'jwk' }), kid: 'test-signing-key', alg: 'RS256', use: 'sig' };
  let handler: ((req: http.IncomingMessage, res: http.ServerResponse) => void) | undefined;
  const server = http.createServer((req, res) => {
    if (handler) handler(req, res);
    else res.writeHead(503).end('not started');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const resign = (token: string, change: (claims: Record<string, unknown>) => Record<string, unknown>) => {
    const [header, payload] = token.split('.');
    const claims = change(JSON.parse(Buffer.from(payload!, 'base64url').toString('utf8')));
    const signed = `${header}.${base64url(claims)}`;
    return `${signed}.${crypto.sign('sha256', Buffer.from(signed), privateKey).toString('base64url')}`;
  };

  const testProvider: TestProvider = {
    issuer,
    clientId: 'herald-test-client',
    clientSecret: crypto.randomBytes(24).toString('base64url'),
    people: new Map(),
    start(redirectUri) {
      const provider = new Provider(issuer, {
        clients: [
          {
            client_id: testProvider.clientId,
            client_secret: testProvider.clientSecret,
            redirect_uris: [redirectUri],
            grant_types: ['authorization_code'],
            response_types: ['code'],
          },
        ],
        jwks: { keys: [jwk] },
        cookies: { keys: [crypto.randomBytes(16).toString('hex')] },
        claims: { openid: ['sub'], email: ['email', 'email_verified', 'xms_edov'], profile: ['name'] },
        // Every client must send a PKCE challenge (S256), as Herald always does.
        pkce: { required: () => true },
        features: { devInteractions: { enabled: true } },
        findAccount: (_ctx: unknown, sub: string) => {
          const person = testProvider.people.get(sub);
          return person ? { accountId: sub, claims: () => ({ sub, ...testProvider.people.get(sub) }) } : undefined;
        },
      });
      provider.use(async (ctx, next) => {
        await next();
        const body = ctx.body as { id_token?: string } | undefined;
        if (ctx.method === 'POST' && ctx.path === '/token' && testProvider.tamper && body?.id_token) {
          ctx.body = { ...body, id_token: resign(body.id_token, testProvider.tamper) };
        }
      });
      // The development pages warn on every start; the tests know.
      handler = provider.callback();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return testProvider;
}

/**
 * A person's browser through Herald's single sign-on: starts at Herald, signs in
 * at the provider as `login` (answering its sign-in and consent pages), and stops
 * at the provider's redirect back to Herald, whose address it returns unopened.
 */
export async function toProviderAndBack(
  herald: WebClient,
  provider: TestProvider,
  login: string,
  startPath = '/api/app/auth/oidc/start',
): Promise<{ start: URL; callback: URL }> {
  const at = new WebClient(provider.issuer);
  const start = location(await herald.request('GET', startPath), herald.origin);
  let answer: WebAnswer = await at.request('GET', start.href);
  for (let step = 0; step < 12; step++) {
    if (answer.status >= 300 && answer.status < 400) {
      const next = location(answer, provider.issuer);
      if (next.origin === herald.origin) return { start, callback: next };
      answer = await at.request('GET', next.href);
      continue;
    }
    if (answer.status !== 200) throw new Error(`the provider answered ${answer.status}: ${answer.text.replace(/<style>[\s\S]*?<\/style>/, '').slice(0, 1500)}`);
    const form = formOf(answer.text);
    const fields = form.fields.prompt === 'login' ? { ...form.fields, login, password: 'any password' } : form.fields;
    answer = await at.request('POST', new URL(form.action, provider.issuer).href, { form: fields });
  }
  throw new Error('the provider never sent the browser back to Herald');
}

/** Herald signing in through `provider` (its button says "Test IdP"), its callback registered at the provider. */
export async function startHeraldWithSso(store: StoreKind, provider: TestProvider): Promise<TestHerald> {
  const herald = await startHerald(store, {
    env: {
      HERALD_OIDC_ISSUER: provider.issuer,
      HERALD_OIDC_CLIENT_ID: provider.clientId,
      HERALD_OIDC_CLIENT_SECRET: provider.clientSecret,
      HERALD_OIDC_NAME: 'Test IdP',
    },
  });
  provider.start(`${herald.url}/api/app/auth/oidc/callback`);
  return herald;
}
