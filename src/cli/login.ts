/**
 * `herald login`: the OAuth 2 device flow against Herald's auth server.
 * It prints the code and the link, opens the browser when it can,
 * polls /device/token at the server's interval and stores the token (0600).
 */
import { spawn } from 'node:child_process';
import type { ClientConfig } from '../config.ts';
import { HeraldConnectionError } from '../sdk/errors.ts';
import { saveCredentials } from './credentials.ts';
import type { Output } from './output.ts';
import { ClientError } from './session.ts';

interface DeviceCode {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete?: string;
  expires_in?: number;
  interval?: number;
}

interface TokenAnswer {
  access_token?: string;
  api_url?: string;
  organization_id?: string;
  error?: string;
  error_description?: string;
}

/** Pending requests live 15 minutes on the auth server. */
const DEFAULT_EXPIRY_S = 15 * 60;
const DEFAULT_INTERVAL_S = 5;

async function postJson<T>(authServer: string, route: string, body: unknown): Promise<{ status: number; body: T }> {
  let response: Response;
  try {
    response = await fetch(`${authServer}${route}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(body),
    });
  } catch (err) {
    throw new ClientError(
      `${new HeraldConnectionError(authServer, err).message}. Set HERALD_AUTH_SERVER to your Herald auth server (default http://localhost:3111).`,
    );
  }
  const text = await response.text();
  try {
    return { status: response.status, body: JSON.parse(text) as T };
  } catch {
    throw new ClientError(
      `the auth server at ${authServer} answered ${route} with ${response.status} and a body that is not JSON; is HERALD_AUTH_SERVER right?`,
    );
  }
}

/** Best effort: a missing opener must not stop the login, the link is printed anyway. */
function openBrowser(url: string): void {
  const [command, args] =
    process.platform === 'darwin' ? ['open', [url]] : process.platform === 'win32' ? ['cmd', ['/c', 'start', '""', url]] : ['xdg-open', [url]];
  try {
    const child = spawn(command, args as string[], { stdio: 'ignore', detached: true });
    child.on('error', () => {});
    child.unref();
  } catch {
    // No opener on this machine.
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function login(config: ClientConfig, out: Output, options: { authServer?: string; openBrowser: boolean }): Promise<void> {
  const authServer = (options.authServer || config.authServer).replace(/\/+$/, '');
  const started = await postJson<DeviceCode & { error?: string; error_description?: string; message?: string }>(authServer, '/device/code', {});
  if (started.status >= 300 || !started.body.device_code || !started.body.user_code || !started.body.verification_uri) {
    throw new ClientError(
      `the auth server could not start a login (${started.status}): ` +
        `${started.body.error_description ?? started.body.message ?? started.body.error ?? 'no device code in its answer'}`,
    );
  }
  const code = started.body;
  const link = code.verification_uri_complete ?? `${code.verification_uri}?code=${encodeURIComponent(code.user_code)}`;
  out.note(`To sign in, open ${out.errorStyle.bold(code.verification_uri)} and enter the code ${out.errorStyle.bold(code.user_code)}`);
  out.note(`(or open ${link})`);
  if (options.openBrowser) openBrowser(link);
  out.note('Waiting for you to authorize...');

  let interval = Math.max(1, code.interval ?? DEFAULT_INTERVAL_S);
  const deadline = Date.now() + (code.expires_in ?? DEFAULT_EXPIRY_S) * 1000;
  while (Date.now() < deadline) {
    await sleep(interval * 1000);
    const answer = await postJson<TokenAnswer>(authServer, '/device/token', { device_code: code.device_code });
    const { access_token: token, error } = answer.body;
    if (answer.status < 300 && token) {
      const apiUrl = (answer.body.api_url || config.apiUrl).replace(/\/+$/, '');
      const file = saveCredentials(config, {
        accessToken: token,
        apiUrl,
        organizationId: answer.body.organization_id,
        authServer,
        savedAt: new Date().toISOString(),
      });
      out.result({ loggedIn: true, apiUrl, organizationId: answer.body.organization_id ?? null, credentialsFile: file }, () =>
        [`${out.style.green('Signed in.')} API: ${apiUrl}`, `The token is stored in ${file}; it is used instead of HERALD_API_KEY until "herald logout".`].join(
          '\n',
        ),
      );
      return;
    }
    if (error === 'authorization_pending') continue;
    if (error === 'slow_down') {
      interval += 5;
      continue;
    }
    if (error === 'expired_token') throw new ClientError('The code expired before it was authorized. Run "herald login" again.');
    if (error === 'access_denied') throw new ClientError('The login was refused in the browser.');
    throw new ClientError(`the auth server refused the login (${answer.status}): ${answer.body.error_description ?? error ?? 'no token in its answer'}`);
  }
  throw new ClientError('The code expired before it was authorized. Run "herald login" again.');
}
