/**
 * `herald apps ...`: register and manage OAuth applications of the owner
 * account without the web UI, e.g. the device-flow auth server's own client.
 */
import { parseArgs } from 'node:util';
import type { Services } from '../services.ts';
import { MAX_TOKEN_TTL_SECONDS } from '../domain/oauth.ts';

export const APPS_USAGE = `OAuth applications of the owner account:
  apps create --name NAME --redirect-uri URI [--redirect-uri URI2] [--token-lifetime SECONDS]
                              register an application; prints its client id and secret (once)
  apps list                   list applications
  apps rotate-secret <id>     new client secret; the old one stops working at once
  apps delete <id>            delete an application and revoke its tokens`;

export async function appsCommand(services: Services, args: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args,
    options: { name: { type: 'string' }, 'redirect-uri': { type: 'string', multiple: true }, 'token-lifetime': { type: 'string' }, json: { type: 'boolean' } },
    allowPositionals: true,
  });
  const [action, id] = positionals;
  const print = (value: unknown, text: string) => console.log(values.json ? JSON.stringify(value, null, 2) : text);
  const accountId = await services.accounts.ownerAccount();
  switch (action) {
    case 'create': {
      const lifetime = values['token-lifetime'] === undefined ? undefined : Number(values['token-lifetime']);
      if (!values.name || !values['redirect-uri']?.length) throw new Error(`--name and --redirect-uri are required\n\n${APPS_USAGE}`);
      if (lifetime !== undefined && !(Number.isInteger(lifetime) && lifetime >= 60 && lifetime <= MAX_TOKEN_TTL_SECONDS)) {
        throw new Error(`--token-lifetime must be a whole number of seconds from 60 to ${MAX_TOKEN_TTL_SECONDS}`);
      }
      const { app, clientSecret } = await services.oauth.registerApp(accountId, {
        name: values.name,
        redirectUris: values['redirect-uri'],
        tokenLifetime: lifetime,
      });
      print(
        { ...app, clientSecret },
        `Registered "${app.name}".\n\n  client id:     ${app.clientId}\n  client secret: ${clientSecret}\n\n` +
          `The secret is shown only now (new one: herald apps rotate-secret ${app.clientId}).`,
      );
      return;
    }
    case 'list': {
      const apps = await services.oauth.listApps(accountId);
      print(
        apps,
        apps.length === 0
          ? 'No applications yet.'
          : apps.map((a) => `${a.clientId}  ${a.name}  ${a.redirectUris.join(' ')}  tokens live ${a.tokenLifetime} s`).join('\n'),
      );
      return;
    }
    case 'rotate-secret': {
      if (!id) throw new Error('Usage: herald apps rotate-secret <id>');
      const { app, clientSecret } = await services.oauth.rotateSecret(accountId, id);
      print({ ...app, clientSecret }, `New client secret of "${app.name}" (the old one no longer works):\n\n  ${clientSecret}`);
      return;
    }
    case 'delete': {
      if (!id) throw new Error('Usage: herald apps delete <id>');
      await services.oauth.deleteApp(accountId, id);
      print({ clientId: id, deleted: true }, `Deleted application ${id}; its tokens are revoked.`);
      return;
    }
    default:
      throw new Error(APPS_USAGE);
  }
}
