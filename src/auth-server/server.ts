/**
 * The device-flow auth server (README, "Command-line client and SDK"): lets a command-line client sign in to
 * Herald through a browser. It is an OAuth client of Herald: the person enters
 * the code shown by the client, approves at Herald's consent page, and this
 * server exchanges the authorization code (with PKCE) for an access token that
 * the client then fetches from /device/token. It runs as its own process
 * (`herald auth-server`, port 3111) on Herald's database.
 */
import Fastify, { LogController, type FastifyInstance, type FastifyReply } from 'fastify';
import type { AuthServerConfig, Config } from '../config.ts';
import { migrate, openStore, type Store } from '../db/index.ts';
import { RateLimiter } from '../domain/rate-limit.ts';
import { ApiError } from '../domain/errors.ts';
import { s256 } from '../domain/oauth.ts';
import { createSecretBox, resolveSecret } from '../lib/secrets.ts';
import { clientErrorHandler, installErrorHandling, installJsonParser } from '../api/errors.ts';
import { installFormParser } from '../api/form-body.ts';
import { errorBox, escapeHtml, sendPage, withQuery } from '../api/oauth/pages.ts';
import { DEVICE_REQUEST_TTL_MS, DeviceRequests, formatUserCode, type TokenGrant } from './device-requests.ts';
import { proxyTrust } from '../api/slow-clients.ts';
import { ownApplication } from './own-application.ts';

const CODES_PER_ADDRESS = 60;
const VERIFY_ATTEMPTS_PER_ADDRESS = 30;
const LIMIT_WINDOW_MS = 15 * 60_000;
const TOKEN_EXCHANGE_TIMEOUT_MS = 15_000;

export interface AuthServer {
  /** http://host:port it listens on. */
  url: string;
  server: FastifyInstance;
  /** Its OAuth application at Herald, and whether it registered it itself now. */
  application: { clientId: string; registered: boolean };
  close(): Promise<void>;
}

/** The settings with the OAuth application known. */
type ReadyConfig = AuthServerConfig & { clientId: string; clientSecret: string };

/** RFC 8628 3.5 error answer of /device/token. */
function deviceError(reply: FastifyReply, error: string, description: string, extra: Record<string, unknown> = {}): FastifyReply {
  return reply
    .code(400)
    .header('cache-control', 'no-store')
    .send({ error, error_description: description, ...extra });
}

function field(body: unknown, ...names: string[]): string | undefined {
  if (!body || typeof body !== 'object') return undefined;
  for (const name of names) {
    const value = (body as Record<string, unknown>)[name];
    if (typeof value === 'string' && value !== '') return value;
  }
  return undefined;
}

function verifyPage(reply: FastifyReply, status: number, code: string, error?: string): FastifyReply {
  return sendPage(
    reply,
    status,
    'Sign in a device to Herald',
    `<h1>Sign in a device to Herald</h1><p>Enter the code your terminal shows.</p>${errorBox(error)}\n` +
      '<form method="post" action="/device/verify"><label for="code">Code</label>' +
      `<input type="text" id="code" name="code" class="code" value="${escapeHtml(code)}" autocomplete="off" autocapitalize="characters" required>\n` +
      '<button type="submit">Continue</button></form>',
  );
}

export async function buildAuthServer(
  config: ReadyConfig,
  store: Store,
  box: ReturnType<typeof createSecretBox>,
  options: { logger?: boolean; logLevel?: string } = {},
): Promise<FastifyInstance> {
  const requests = new DeviceRequests(store.db, box);
  const limiter = new RateLimiter(store.db);
  const callbackUrl = `${config.publicUrl}/device/callback`;
  const app = Fastify({
    logger: options.logger === false ? false : { level: options.logLevel ?? 'info' },
    logController: new LogController({ disableRequestLogging: true }),
    trustProxy: proxyTrust(config.trustProxy),
    bodyLimit: 64 * 1024,
    routerOptions: { ignoreTrailingSlash: true, ignoreDuplicateSlashes: true },
    clientErrorHandler,
  });
  installJsonParser(app);
  installFormParser(app);
  installErrorHandling(app);
  app.addHook('onClose', async () => limiter.close());

  app.get('/health', async () => ({ status: 'ok' }));

  app.post('/device/code', async (request, reply) => {
    await limiter.consumeSliding(`device:code:${request.ip}`, CODES_PER_ADDRESS, LIMIT_WINDOW_MS, 'Device sign-ins from this address');
    const scope = field(request.body, 'scope') ?? config.scope;
    const { deviceCode, userCode } = await requests.create(config.pollIntervalSeconds, scope);
    const verificationUri = `${config.publicUrl}/device/verify`;
    return reply.header('cache-control', 'no-store').send({
      device_code: deviceCode,
      user_code: formatUserCode(userCode),
      verification_uri: verificationUri,
      verification_uri_complete: withQuery(verificationUri, { code: formatUserCode(userCode) }),
      expires_in: DEVICE_REQUEST_TTL_MS / 1000,
      interval: config.pollIntervalSeconds,
    });
  });

  app.get('/device/verify', async (request, reply) => verifyPage(reply, 200, field(request.query, 'code', 'user_code') ?? ''));

  app.post('/device/verify', async (request, reply) => {
    const code = field(request.body, 'code', 'user_code') ?? '';
    try {
      await limiter.consumeSliding(`device:verify:${request.ip}`, VERIFY_ATTEMPTS_PER_ADDRESS, LIMIT_WINDOW_MS, 'Code entries from this address');
    } catch (err) {
      if (err instanceof ApiError)
        return verifyPage(reply.header('retry-after', err.headers['Retry-After'] ?? '60'), 429, code, 'Too many attempts; wait a few minutes and try again.');
      throw err;
    }
    if (!code) return verifyPage(reply, 400, code, 'Enter the code your terminal shows.');
    const started = await requests.begin(code.slice(0, 64));
    if (!started) return verifyPage(reply, 400, code, 'This code is unknown or expired. Check it, or start again in your terminal.');
    return reply.redirect(
      withQuery(config.authorizeUrl, {
        response_type: 'code',
        client_id: config.clientId,
        redirect_uri: callbackUrl,
        state: started.state,
        code_challenge: s256(started.codeVerifier),
        code_challenge_method: 'S256',
        scope: started.scope ?? undefined,
      }),
      303,
    );
  });

  app.get('/device/callback', async (request, reply) => {
    const state = field(request.query, 'state');
    const found = state ? await requests.byState(state) : undefined;
    if (found === 'expired') return sendPage(reply, 400, 'Sign-in expired', '<h1>This sign-in expired</h1><p>Start again in your terminal.</p>');
    if (!found)
      return sendPage(reply, 400, 'Sign-in not found', '<h1>This sign-in is unknown or finished</h1><p>Start again in your terminal if it did not work.</p>');
    const error = field(request.query, 'error');
    const code = field(request.query, 'code');
    if (error || !code) {
      await requests.deny(found);
      return sendPage(reply, 200, 'Sign-in refused', '<h1>Sign-in refused</h1><p>Your terminal was told; it will not be signed in.</p>');
    }
    let answer: Response;
    try {
      answer = await fetch(`${config.apiUrl}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code,
          redirect_uri: callbackUrl,
          client_id: config.clientId,
          client_secret: config.clientSecret,
          code_verifier: found.code_verifier ?? '',
        }),
        signal: AbortSignal.timeout(TOKEN_EXCHANGE_TIMEOUT_MS),
      });
    } catch (err) {
      request.log.error({ err: (err as Error).message }, 'token exchange with Herald failed');
      return sendPage(reply, 502, 'Sign-in failed', '<h1>Herald could not be reached</h1><p>Try entering the code again in a moment.</p>');
    }
    const body = (await answer.json().catch(() => ({}))) as Partial<TokenGrant> & { error?: string; error_description?: string };
    if (!answer.ok || typeof body.access_token !== 'string' || typeof body.id !== 'string') {
      request.log.error({ status: answer.status, error: body.error, description: body.error_description }, 'Herald refused the token exchange');
      return sendPage(
        reply,
        502,
        'Sign-in failed',
        `<h1>Herald refused the sign-in</h1><p>${escapeHtml(body.error_description ?? `HTTP ${answer.status}`)}</p><p>Try entering the code again.</p>`,
      );
    }
    await requests.approve(found, {
      access_token: body.access_token,
      token_type: body.token_type ?? 'bearer',
      expires_in: body.expires_in,
      scope: body.scope,
      id: body.id,
    });
    return sendPage(reply, 200, 'Signed in', '<h1>Signed in</h1><p>Your terminal is signed in to Herald. You can close this window.</p>');
  });

  app.post('/device/token', async (request, reply) => {
    const deviceCode = field(request.body, 'device_code');
    if (!deviceCode) return deviceError(reply, 'invalid_request', 'device_code is required');
    const result = await requests.poll(deviceCode.slice(0, 200));
    switch (result.kind) {
      case 'unknown':
        return deviceError(reply, 'invalid_grant', 'device_code is unknown or its token was fetched already');
      case 'expired':
        return deviceError(reply, 'expired_token', 'the sign-in expired; start again');
      case 'slow_down':
        return deviceError(reply, 'slow_down', `poll at most every ${result.interval} seconds`, { interval: result.interval });
      case 'pending':
        return deviceError(reply, 'authorization_pending', 'waiting for the user to approve in the browser');
      case 'denied':
        return deviceError(reply, 'access_denied', 'the user refused the sign-in');
      case 'approved':
        return reply.header('cache-control', 'no-store').send({
          access_token: result.token.access_token,
          token_type: result.token.token_type,
          ...(result.token.expires_in !== undefined ? { expires_in: result.token.expires_in } : {}),
          ...(result.token.scope !== undefined ? { scope: result.token.scope } : {}),
          api_url: config.apiUrl,
          organization_id: result.token.id,
        });
    }
  });

  return app;
}

/** Opens Herald's database (migrating it), then listens. Tests start it in-process the same way. */
export async function startAuthServer(
  config: AuthServerConfig,
  storeConfig: Pick<Config, 'databaseUrl' | 'dataDir' | 'secret' | 'logLevel'>,
  options: { logger?: boolean } = {},
): Promise<AuthServer> {
  const store = openStore(storeConfig);
  try {
    await migrate(store);
    const box = createSecretBox(resolveSecret(storeConfig.secret, storeConfig.dataDir));
    // On Herald's own store it needs no application registered by hand.
    const application =
      config.clientId && config.clientSecret
        ? { clientId: config.clientId, clientSecret: config.clientSecret, registered: false }
        : await ownApplication(store, box, storeConfig.dataDir, `${config.publicUrl}/device/callback`);
    const server = await buildAuthServer({ ...config, ...application }, store, box, { logger: options.logger, logLevel: storeConfig.logLevel });
    await server.listen({ port: config.port, host: config.host });
    const address = server.server.address();
    const port = typeof address === 'object' && address ? address.port : config.port;
    const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
    return {
      url: `http://${host}:${port}`,
      server,
      application: { clientId: application.clientId, registered: application.registered },
      async close() {
        await server.close();
        await store.close();
      },
    };
  } catch (err) {
    await store.close();
    throw err;
  }
}
