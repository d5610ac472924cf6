/**
 * The client side of the `herald` command: talks to a running Herald through
 * its public API (with the SDK), as HERALD_API_KEY / HERALD_API_URL or a stored
 * login say. Exit codes: 0 success, 1 the request failed, 2 wrong usage.
 */
import { loadClientConfig, type ClientConfig } from '../config.ts';
import { HeraldApiError, HeraldConnectionError } from '../sdk/errors.ts';
import { parse, UsageError, type Command } from './command.ts';
import { accountCommands } from './commands/account.ts';
import { apiCommands } from './commands/api.ts';
import { channelCommands } from './commands/channels.ts';
import { postCommands } from './commands/posts.ts';
import { uploadCommands } from './commands/upload.ts';
import { webhookCommands } from './commands/webhooks.ts';
import { Output } from './output.ts';
import { ClientError } from './session.ts';

const COMMANDS: Command[] = [...accountCommands, ...channelCommands, ...uploadCommands, ...postCommands, ...webhookCommands, ...apiCommands];

/** First words that belong to the client (the rest of `herald` runs or administers the server). */
export const CLIENT_COMMANDS = new Set(COMMANDS.map((c) => c.name.split(' ')[0]));

/** Every client command by its full name ("posts create"). */
export const CLIENT_COMMAND_NAMES = COMMANDS.map((c) => c.name);

export const CLIENT_USAGE = `Client (talks to a running Herald through its API; "herald <command> --help" for each):
${COMMANDS.map((c) => `  ${c.name.padEnd(22)}${c.summary}`).join('\n')}

Client settings: HERALD_API_KEY, HERALD_API_URL (default http://localhost:5000/api,
including the /api prefix), HERALD_AUTH_SERVER (default http://localhost:3111).
A stored "herald login" wins over HERALD_API_KEY. Add --json for scripts.`;

/** "posts create ..." → the command and its arguments; a group name alone lists its commands. */
function find(argv: string[]): { command?: Command; rest: string[]; group?: Command[] } {
  const [first, second] = argv;
  const two = COMMANDS.find((c) => c.name === `${first} ${second}`);
  if (two) return { command: two, rest: argv.slice(2) };
  const one = COMMANDS.find((c) => c.name === first);
  if (one) return { command: one, rest: argv.slice(1) };
  return { rest: argv, group: COMMANDS.filter((c) => c.name.startsWith(`${first} `)) };
}

function groupHelp(name: string, group: Command[]): string {
  return (
    `Usage: herald ${name} <command>\n\n${group.map((c) => `  ${c.name.padEnd(22)}${c.summary}`).join('\n')}\n\n` +
    `Run "herald ${name} <command> --help" for options and examples.`
  );
}

function describeFailure(err: unknown, out: Output): { message: string; code: number } {
  const style = out.errorStyle;
  if (err instanceof HeraldApiError) {
    const lines = [`${style.red('herald:')} ${err.message} (HTTP ${err.status})`];
    for (const field of err.errors) lines.push(`  - ${field.path}: ${field.message}`);
    if (err.hint) lines.push(`hint: ${err.hint}`);
    if (err.status === 401) lines.push('hint: check HERALD_API_KEY (or run "herald login"); "herald whoami" shows which credential is used');
    return { message: lines.join('\n'), code: 1 };
  }
  if (err instanceof HeraldConnectionError) {
    return { message: `${style.red('herald:')} ${err.message}\nhint: set HERALD_API_URL to your server's API, e.g. http://localhost:5000/api`, code: 1 };
  }
  if (err instanceof UsageError) return { message: `${style.red('herald:')} ${err.message}`, code: err.exitCode };
  if (err instanceof ClientError) return { message: `${style.red('herald:')} ${err.message}`, code: err.exitCode };
  return { message: `${style.red('herald:')} ${(err as Error)?.message ?? String(err)}`, code: 1 };
}

/** Runs one client command; resolves to the exit code. */
export async function runClient(argv: string[]): Promise<number> {
  const json = argv.includes('--json');
  let config: ClientConfig;
  try {
    config = loadClientConfig();
  } catch (err) {
    process.stderr.write(`herald: configuration error: ${(err as Error).message}\n`);
    return 2;
  }
  const out = new Output({ json, noColor: config.noColor });
  const { command, rest, group } = find(argv);
  if (!command) {
    if (group && group.length > 0) {
      const message = groupHelp(argv[0], group);
      if (argv[1] === '--help' || argv[1] === '-h') {
        out.line(message);
        return 0;
      }
      out.error(argv.length === 1 ? message : `herald: unknown command "${argv.slice(0, 2).join(' ')}"\n\n${message}`);
      return 2;
    }
    out.error(`herald: unknown command "${argv[0]}"\n\n${CLIENT_USAGE}`);
    return 2;
  }
  try {
    const parsed = parse(command, rest);
    if (parsed.values.help) {
      out.line(command.help);
      return 0;
    }
    await command.run({ ...parsed, config, out });
    return 0;
  } catch (err) {
    const { message, code } = describeFailure(err, out);
    out.error(code === 2 ? `${message}\nRun "herald ${command.name} --help" for usage and examples.` : message);
    return code;
  }
}
