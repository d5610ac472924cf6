/** `herald auth-server`: the device-flow auth server as its own process. */
import type { Config } from '../config.ts';
import { loadAuthServerConfig } from '../config.ts';
import { startAuthServer } from './server.ts';

export async function runAuthServer(config: Config, onShutdown: (close: () => Promise<void>) => void): Promise<void> {
  const settings = loadAuthServerConfig();
  const server = await startAuthServer(settings, config);
  onShutdown(() => server.close());
  console.log(
    [
      `Herald auth server is listening on ${settings.publicUrl}`,
      `  Herald API:   ${settings.apiUrl}  (consent page ${settings.authorizeUrl})`,
      server.application.registered
        ? `  application:  registered its own at Herald (client ${server.application.clientId}), kept for the next start`
        : `  callback:     ${settings.publicUrl}/device/callback  (must be a redirect URI of client ${server.application.clientId})`,
      `  clients:      HERALD_AUTH_SERVER=${settings.publicUrl} herald login   or   postiz auth:login --auth-server ${settings.publicUrl}`,
    ].join('\n'),
  );
}
