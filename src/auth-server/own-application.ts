/**
 * The auth server's own OAuth application at Herald, for when it runs on
 * Herald's store and none was given (HERALD_AUTH_CLIENT_ID and _SECRET):
 * registered once for the account the first person to sign up owns, its secret
 * kept sealed in the data folder, so that a restart uses the same application.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Store } from '../db/index.ts';
import { Accounts } from '../domain/accounts.ts';
import { OAuthServer } from '../domain/oauth.ts';
import type { SecretBox } from '../lib/secrets.ts';

const FILE = 'auth-server-app.json';
/** `herald login` sessions last 90 days, as the README's hand-registered example does. */
const TOKEN_LIFETIME_SECONDS = 90 * 24 * 60 * 60;

export async function ownApplication(
  store: Store,
  box: SecretBox,
  dataDir: string,
  callbackUrl: string,
): Promise<{ clientId: string; clientSecret: string; registered: boolean }> {
  const file = path.join(dataDir, FILE);
  const oauth = new OAuthServer(store.db);
  const accountId = await new Accounts(store.db, box, store.changes).ownerAccount();
  if (fs.existsSync(file)) {
    const kept = JSON.parse(fs.readFileSync(file, 'utf8')) as { clientId: string; secretSealed: string };
    const app = (await oauth.listApps(accountId)).find((a) => a.clientId === kept.clientId);
    // Still registered, for this address: use it. Deleted, or the address changed: register anew.
    if (app?.redirectUris.includes(callbackUrl)) return { clientId: kept.clientId, clientSecret: box.decrypt(kept.secretSealed), registered: false };
  }
  const { app, clientSecret } = await oauth.registerApp(accountId, {
    name: 'Herald auth server (herald login)',
    redirectUris: [callbackUrl],
    tokenLifetime: TOKEN_LIFETIME_SECONDS,
  });
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  fs.writeFileSync(file, JSON.stringify({ clientId: app.clientId, secretSealed: box.encrypt(clientSecret) }), { mode: 0o600 });
  return { clientId: app.clientId, clientSecret, registered: true };
}
