/** Signing in and out, and who the client acts as. */
import type { Command } from '../command.ts';
import { flag, str } from '../command.ts';
import { deleteCredentials } from '../credentials.ts';
import { login } from '../login.ts';
import { clientFor, requireSession } from '../session.ts';

const loginCommand: Command = {
  name: 'login',
  summary: 'sign in through the browser (OAuth device flow); the token wins over HERALD_API_KEY',
  help: `Usage: herald login [--auth-server URL] [--no-browser]

Starts a device login on Herald's auth server (HERALD_AUTH_SERVER, default
http://localhost:3111), prints a code and a link, opens the browser when it
can, and waits until you authorize. The token is stored in
$XDG_CONFIG_HOME/herald/credentials.json (~/.config/herald/...), readable by
you only, and is used instead of HERALD_API_KEY until "herald logout".

Options:
  --auth-server URL   the auth server (default: HERALD_AUTH_SERVER)
  --no-browser        only print the link
  --json              print the result as JSON

Examples:
  herald login
  HERALD_AUTH_SERVER=https://auth.example.com herald login --no-browser`,
  options: { 'auth-server': { type: 'string' }, 'no-browser': { type: 'boolean' } },
  async run(invocation) {
    const openBrowser = !flag(invocation, 'no-browser') && Boolean(process.stdout.isTTY);
    await login(invocation.config, invocation.out, { authServer: str(invocation, 'auth-server'), openBrowser });
  },
};

const logoutCommand: Command = {
  name: 'logout',
  summary: 'forget the stored login (HERALD_API_KEY applies again)',
  help: `Usage: herald logout

Removes the token "herald login" stored. HERALD_API_KEY, if set, is used again.

Example:
  herald logout`,
  async run({ config, out }) {
    const removed = deleteCredentials(config);
    out.result({ loggedOut: removed }, () => (removed ? 'Signed out: the stored login is removed.' : 'There was no stored login.'));
  },
};

function whoami(name: string): Command {
  return {
    name,
    summary: name === 'whoami' ? 'which credential and API the client uses, and whether they work' : 'the same as whoami',
    help: `Usage: herald ${name}

Shows the credential in use (the stored login wins over HERALD_API_KEY), the
API URL, and checks both against the server. Exits with 1 when they do not work.

Example:
  herald ${name}
  herald ${name} --json`,
    async run({ config, out }) {
      const session = requireSession(config);
      const client = clientFor(session);
      await client.isConnected();
      const channels = await client.integrations();
      const hint = `${session.token.slice(0, 6)}…`;
      out.result(
        {
          source: session.source,
          origin: session.origin,
          apiUrl: session.apiUrl,
          organizationId: session.organizationId ?? null,
          connected: true,
          channels: channels.length,
        },
        () =>
          [
            `Credential:  ${session.source === 'login' ? `stored login (${session.origin})` : `API key ${hint} from HERALD_API_KEY`}`,
            `API:         ${session.apiUrl}`,
            ...(session.organizationId ? [`Account:     ${session.organizationId}`] : []),
            `Status:      ${out.style.green('connected')}, ${channels.length} channel${channels.length === 1 ? '' : 's'}`,
          ].join('\n'),
      );
    },
  };
}

export const accountCommands = [loginCommand, logoutCommand, whoami('whoami'), whoami('status')];
