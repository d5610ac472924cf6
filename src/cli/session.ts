/**
 * Which credential the client uses: a stored login wins over HERALD_API_KEY,
 * and the API URL goes with it.
 */
import type { ClientConfig } from '../config.ts';
import { Herald } from '../sdk/index.ts';
import { credentialsFile, loadCredentials } from './credentials.ts';

export interface Session {
  source: 'login' | 'api-key';
  token: string;
  apiUrl: string;
  /** Where the credential comes from, for people: a file or a variable. */
  origin: string;
  organizationId?: string;
}

/** A failure the user fixes by configuring the client; printed without a stack. */
export class ClientError extends Error {
  readonly exitCode: number;
  constructor(message: string, exitCode = 1) {
    super(message);
    this.exitCode = exitCode;
  }
}

export function currentSession(config: ClientConfig): Session | undefined {
  const stored = loadCredentials(config);
  if (stored) {
    return { source: 'login', token: stored.accessToken, apiUrl: stored.apiUrl, origin: credentialsFile(config), organizationId: stored.organizationId };
  }
  if (config.apiKey) return { source: 'api-key', token: config.apiKey, apiUrl: config.apiUrl, origin: 'HERALD_API_KEY' };
  return undefined;
}

export function requireSession(config: ClientConfig): Session {
  const session = currentSession(config);
  if (!session) {
    throw new ClientError('Not signed in. Set HERALD_API_KEY (create a key on the server with "npx herald keys create") or run "herald login".');
  }
  return session;
}

export type Client = Herald<{ throwOnError: true }>;

export function clientFor(session: Session): Client {
  return new Herald(session.token, session.apiUrl, { throwOnError: true, headers: { 'user-agent': 'herald-cli' } });
}
