/**
 * The login `herald login` stores: an OAuth access token and the API URL it is
 * for, in the user's config folder, readable by the user only (0600).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { ClientConfig } from '../config.ts';

export interface StoredCredentials {
  accessToken: string;
  apiUrl: string;
  organizationId?: string;
  authServer?: string;
  savedAt?: string;
}

export function credentialsFile(config: ClientConfig): string {
  return path.join(config.configDir, 'credentials.json');
}

/** The stored login, or undefined when there is none (or it is unreadable: then the API key applies). */
export function loadCredentials(config: ClientConfig): StoredCredentials | undefined {
  let text: string;
  try {
    text = fs.readFileSync(credentialsFile(config), 'utf8');
  } catch {
    return undefined;
  }
  try {
    const data = JSON.parse(text) as Partial<StoredCredentials>;
    if (typeof data.accessToken !== 'string' || !data.accessToken) return undefined;
    return { ...data, accessToken: data.accessToken, apiUrl: typeof data.apiUrl === 'string' && data.apiUrl ? data.apiUrl : config.apiUrl };
  } catch {
    return undefined;
  }
}

export function saveCredentials(config: ClientConfig, credentials: StoredCredentials): string {
  const file = credentialsFile(config);
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  // Written aside with its final mode, then renamed: the token is never readable by others, not even briefly.
  const temporary = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temporary, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600 });
  fs.chmodSync(temporary, 0o600);
  fs.renameSync(temporary, file);
  return file;
}

/** Removes the stored login; false when there was none. */
export function deleteCredentials(config: ClientConfig): boolean {
  try {
    fs.unlinkSync(credentialsFile(config));
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
}
