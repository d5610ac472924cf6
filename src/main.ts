/**
 * The `herald` command: run the service (start, serve, worker), migrate the
 * database, and manage API keys without a web UI.
 */
import { moveStore } from './admin/move-store.ts';
import { serveMetrics } from './api/metrics.ts';
import { parseArgs } from 'node:util';
import { loadConfig, type Config } from './config.ts';
import { createServices, startWorkers } from './app.ts';
import type { Services } from './services.ts';
import { buildServer } from './server.ts';
import { ensureDatabase, migrate, openStore } from './db/index.ts';
import { ApiError } from './domain/errors.ts';
import { CLIENT_COMMANDS, CLIENT_USAGE, runClient } from './cli/index.ts';
import { APPS_USAGE, appsCommand } from './admin/apps.ts';
import { backup, restore } from './admin/backup.ts';
import { lockDataFolder } from './lib/data-lock.ts';
import { secretFile } from './lib/secrets.ts';
import { timerDelay } from './lib/timers.ts';
import { runAuthServer } from './auth-server/main.ts';
import { RESET_TTL_MS } from './domain/password-resets.ts';
import { webLinks } from './mail/mail.ts';

const KEYS_USAGE = `API keys of this Herald's account (which the first person to sign up owns):
  keys create [--name NAME]   create a key and print it
  keys list                   list keys (never their values)
  keys reveal <id>            print a key's value
  keys rotate <id>            replace a key's value; the old one stops working at once
  keys revoke <id>            revoke a key
  (--json prints JSON; the store used is the one "npm start" uses, named on stderr)`;

const PEOPLE_USAGE = `People of this Herald, from its terminal (for a Herald that sends no mail):
  people reset-password [EMAIL]   print a single-use link (valid 1 hour) that sets a new password;
                                  without EMAIL, the owner's. Using it signs that person out everywhere else.`;

const AUTH_SERVER_USAGE = `Device-flow auth server (port HERALD_AUTH_PORT, 3111; registers its own application on Herald's store, see README):
  auth-server                 run it`;

const MOVE_STORE_HELP = `Usage: herald move-store --to postgres://USER@HOST:5432/DATABASE

Copies the embedded store (HERALD_DATA_DIR) into an empty PostgreSQL database,
creating it where the user may, and checks every table's rows and checksum on
both sides. Stop every Herald on the data folder first; the source is only read.
Then start Herald with HERALD_DATABASE_URL set and the same HERALD_DATA_DIR (its
media stay there) and the same secret: the store's tokens are sealed with
HERALD_SECRET if it was set, otherwise with HERALD_DATA_DIR/secret.key (use
HERALD_SECRET="$(cat HERALD_DATA_DIR/secret.key)" elsewhere). A Herald given
another secret refuses to start. A HERALD_SECRET that does not open this store
is refused before anything is moved.`;

async function moveStoreCommand(config: Config, args: string[]): Promise<void> {
  const at = args.indexOf('--to');
  const target = at >= 0 ? args[at + 1] : args.find((a) => a.startsWith('--to='))?.slice('--to='.length);
  if (!target) fail(MOVE_STORE_HELP);
  const moved = await moveStore(config, target, (line) => console.error(`herald: ${line}`));
  const width = Math.max(...moved.map((t) => t.table.length));
  for (const t of moved) console.log(`${t.table.padEnd(width)}  ${String(t.rows).padStart(8)} rows  checksum ${t.checksum}  same on both sides`);
  const where = new URL(target);
  where.password = where.password ? '***' : '';
  // The secret that sealed the tokens must come along: a new one opens none of them (Herald then refuses to start).
  const secret = config.secret
    ? 'the same HERALD_SECRET as now (it sealed the channel tokens)'
    : `HERALD_SECRET unset (the tokens are sealed with ${secretFile(config.dataDir)}), or, on other machines, HERALD_SECRET="$(cat ${secretFile(config.dataDir)})"`;
  console.log(
    `Moved ${moved.reduce((n, t) => n + t.rows, 0)} rows in ${moved.length} tables to ${where.toString()}; ${config.dataDir} is unchanged.\n` +
      `Start Herald with HERALD_DATABASE_URL set to that database, HERALD_DATA_DIR=${config.dataDir} (media stay there) and ${secret}.`,
  );
}

/** What "herald <command> --help" prints. */
const COMMAND_HELP: Record<string, string> = {
  start: 'herald start: the API server and the publishing engine in one process (what npm start runs).',
  serve: 'herald serve: the API server only; run publishing engines with "herald worker".',
  worker: 'herald worker: a publishing engine only; any number share one PostgreSQL database.',
  migrate: 'herald migrate: bring the database schema up to date (every start does it too).',
  backup:
    'herald backup FILE: a consistent copy of the embedded store (the database, the media folder and the secret that seals tokens) ' +
    'as one .tar.gz, taken while Herald runs. Keep it private: it holds the secret.',
  restore: 'herald restore FILE: put a backup back into an empty data folder (HERALD_DATA_DIR) that no Herald uses.',
  'move-store': MOVE_STORE_HELP,
  keys: KEYS_USAGE,
  apps: APPS_USAGE,
  people: PEOPLE_USAGE,
  'auth-server': AUTH_SERVER_USAGE,
};

const USAGE = `Usage: herald <command>   (herald <command> --help for one command)

Service:
  start                 API server and publishing engine in one process (what npm start runs)
  serve                 API server only (run engines with "herald worker")
  worker                publishing engine only
  migrate               bring the database schema up to date
  backup FILE           copy the embedded store and its media into FILE (.tar.gz), while it runs
  restore FILE          put a backup back into an empty data folder
  move-store --to URL   copy the embedded store into an empty PostgreSQL database

${KEYS_USAGE}

${PEOPLE_USAGE}

${AUTH_SERVER_USAGE}

${APPS_USAGE}

Settings come from the environment: HERALD_PORT (5000), HERALD_DATA_DIR (./data),
HERALD_DATABASE_URL (postgres://..., default: embedded SQLite), HERALD_SECRET, ...
See README.md for the full list.`;

/** Beyond HERALD_SHUTDOWN_SECONDS, time to write what is left and close the store before a stop is forced. */
const SHUTDOWN_SLACK_MS = 5_000;

function fail(message: string): never {
  console.error(message);
  process.exit(1);
}

/** On SIGINT or SIGTERM: `close`, and exit. A second signal, or a close that outlasts `hardLimitMs`, exits at once. */
function onShutdown(close: () => Promise<void>, hardLimitMs: number): void {
  let closing = false;
  const handler = () => {
    if (closing) process.exit(1);
    closing = true;
    setTimeout(() => {
      console.error(`herald: still stopping after ${Math.round(hardLimitMs / 1000)} s; exiting now`);
      process.exit(1);
    }, timerDelay(hardLimitMs)).unref();
    close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
}

async function runService(config: Config, withServer: boolean, withEngine: boolean): Promise<void> {
  const started = Date.now();
  const services = await createServices(config);
  // A secret that opens nothing the store sealed would look healthy while every post fails: say so now instead.
  const mismatch = await services.secretMismatch();
  if (mismatch) {
    await services.close();
    fail(`Herald does not start: ${mismatch}`);
  }
  const workers = startWorkers(services, { engine: withEngine ? {} : false, webhooks: withEngine ? {} : false });
  const server = withServer ? await buildServer(services) : undefined;
  if (server) await server.listen({ port: config.port, host: config.host });
  const metricsServer = config.metricsPort ? await serveMetrics(services.metrics, config.metricsHost, config.metricsPort) : undefined;
  // The engine's timers do not hold the process open (so tests and shutdowns end
  // cleanly); a worker without a server stays up until it is told to stop.
  const keepAlive = server ? undefined : setInterval(() => {}, 60 * 60_000);
  onShutdown(async () => {
    clearInterval(keepAlive);
    // No new requests and no new claims; publishes already sent get HERALD_SHUTDOWN_SECONDS to finish.
    metricsServer?.close();
    await Promise.all([server?.close(), workers.stop(config.shutdownMs)]);
    await services.close();
  }, config.shutdownMs + SHUTDOWN_SLACK_MS);
  const lines = [`Herald ${withServer ? 'is listening on ' + config.publicUrl : 'worker is running'} (${Date.now() - started} ms)`];
  lines.push(`  data:        ${services.store.description}`);
  if (server) {
    lines.push(`  open:        ${config.publicUrl}/   (the web application; the first person to sign up owns this Herald)`);
    lines.push(`  API:         ${config.publicUrl}/api/public/v1   (clients: HERALD_API_URL=${config.publicUrl}/api)`);
    lines.push(`  API docs:    ${config.publicUrl}/api/docs`);
    lines.push(`  API key:     npx herald keys create --name my-key`);
  }
  lines.push(
    `  mail:        ${config.mail ? `through ${new URL(config.mail.smtpUrl).host}${workers.mailer ? '' : ' (sent by "herald worker")'}` : 'off (no HERALD_SMTP_URL): links are shown to copy'}`,
  );
  lines.push(`  publishing:  ${workers.engine ? 'this process publishes due posts' : 'off here (run "herald worker")'}`);
  if (metricsServer) lines.push(`  metrics:     http://${config.metricsHost}:${config.metricsPort}/metrics`);
  else if (server && config.metricsToken) lines.push(`  metrics:     ${config.publicUrl}/api/metrics   (Authorization: Bearer HERALD_METRICS_TOKEN)`);
  console.log(lines.join('\n'));
}

async function withServices<T>(config: Config, run: (services: Services) => Promise<T>): Promise<T> {
  const services = await createServices(config);
  // A key or application sealed with another secret than the store's would open for this secret alone, and hide the mismatch.
  const mismatch = await services.secretMismatch();
  if (mismatch) {
    await services.close();
    fail(`herald: ${mismatch}`);
  }
  // On stderr, so --json output stays JSON: which store a key or application went to.
  console.error(`herald: using ${services.store.description}`);
  try {
    return await run(services);
  } finally {
    await services.close();
  }
}

async function keys(config: Config, args: string[]): Promise<void> {
  const { values, positionals } = parseArgs({ args, options: { name: { type: 'string' }, json: { type: 'boolean' } }, allowPositionals: true });
  const [action, id] = positionals;
  await withServices(config, async ({ accounts }) => {
    const accountId = await accounts.ownerAccount();
    const print = (value: unknown, text: string) => console.log(values.json ? JSON.stringify(value, null, 2) : text);
    switch (action) {
      case 'create': {
        const { key, summary } = await accounts.createKey(accountId, values.name ?? 'default');
        print(
          { ...summary, key },
          `Created API key "${summary.name}" (id ${summary.id}):\n\n  ${key}\n\n` +
            `Use it as "Authorization: ${key.slice(0, 6)}..." or HERALD_API_KEY. Reveal it again with: npx herald keys reveal ${summary.id}\n` +
            `It belongs to this Herald's account; the first person to sign up at ${config.publicUrl}/signup owns it.`,
        );
        return;
      }
      case 'list': {
        const list = await accounts.listKeys(accountId);
        print(
          list,
          list.length === 0
            ? 'No API keys yet: npx herald keys create --name my-key'
            : list.map((k) => `${k.id}  ${k.hint}  ${k.name}${k.revoked ? '  (revoked)' : ''}  created ${k.createdAt}`).join('\n'),
        );
        return;
      }
      case 'reveal':
      case 'rotate':
      case 'revoke': {
        if (!id) fail(`Usage: herald keys ${action} <id>   (ids: herald keys list)`);
        if (action === 'reveal') {
          const key = await accounts.revealKey(accountId, id);
          print({ id, key }, key);
        } else if (action === 'rotate') {
          const { key, summary } = await accounts.rotateKey(accountId, id);
          print({ ...summary, key }, `Rotated key ${id}; the old value no longer works. New value:\n\n  ${key}`);
        } else {
          await accounts.revokeKey(accountId, id);
          print({ id, revoked: true }, `Revoked key ${id}.`);
        }
        return;
      }
      default:
        fail(USAGE);
    }
  });
}

/**
 * A reset link rather than a password typed here: nothing secret passes through
 * the shell's history, the process list or the terminal's scrollback for longer
 * than the hour the link lives, and the person chooses their password in the
 * browser under the same rules as everywhere else.
 */
async function peopleCommand(config: Config, args: string[]): Promise<void> {
  const [action, email] = args;
  if (action !== 'reset-password') fail(PEOPLE_USAGE);
  await withServices(config, async ({ store, passwordResets, accounts }) => {
    const person = email
      ? await passwordResets.person(email)
      : await store.db
          .selectFrom('users')
          .selectAll()
          .where('account_id', '=', await accounts.ownerAccount())
          .where('role', '=', 'owner')
          .executeTakeFirst();
    if (!person)
      fail(email ? `herald: nobody here has the address ${email}` : 'herald: nobody has signed up yet: open the web application to create the owner');
    const token = await passwordResets.create(person.id);
    console.log(
      `A single-use link to set a new password for ${person.email} (${person.role}), valid ${RESET_TTL_MS / 60_000} minutes:\n\n  ${webLinks(config.publicUrl).reset(token)}\n\n` +
        'Open it in a browser; other sessions of this person end once it is used. Keep it to yourself until then.',
    );
  });
}

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  if (command && COMMAND_HELP[command] && rest.some((a) => a === '--help' || a === '-h')) {
    console.log(COMMAND_HELP[command]);
    return;
  }
  // Client commands talk to a running server through its API and need none of the server's settings.
  if (command && CLIENT_COMMANDS.has(command)) {
    process.exitCode = await runClient(argv);
    return;
  }
  // Everything Herald writes (the database, uploads, the secret) is for its own user only: 0600 files, 0700 folders.
  process.umask(0o077);
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    fail(`Configuration error: ${(err as Error).message}`);
  }
  switch (command) {
    case 'start': {
      // On the embedded store: one all-in-one process per data folder (add more with serve and worker).
      const lock = config.databaseUrl ? undefined : lockDataFolder(config.dataDir);
      if (lock && !lock.held) {
        fail(
          `Another Herald (pid ${lock.owner}) already runs on the data folder ${config.dataDir}. Stop it first, ` +
            'or give this one its own HERALD_DATA_DIR; to add capacity beside it, run "herald serve" or "herald worker".',
        );
      }
      return runService(config, true, config.runWorker);
    }
    case 'serve':
      return runService(config, true, false);
    case 'worker':
      return runService(config, false, true);
    case 'migrate': {
      if (config.databaseUrl && (await ensureDatabase(config.databaseUrl)))
        console.log(`Created the database ${new URL(config.databaseUrl).pathname.slice(1)}.`);
      const store = openStore(config);
      const applied = await migrate(store);
      await store.close();
      console.log(applied.length ? `Applied: ${applied.join(', ')}` : 'The database is up to date.');
      return;
    }
    case 'backup':
    case 'restore': {
      const [file] = rest;
      if (!file) fail(COMMAND_HELP[command]);
      if (command === 'backup') {
        const { files, bytes } = await backup(config, file);
        console.log(
          `Backed up ${files} files (${Math.round(bytes / 1024)} KB) of ${config.dataDir} to ${file}. It holds the secret that seals tokens: keep it private.`,
        );
      } else {
        const { files } = await restore(config, file);
        console.log(`Restored ${files} files into ${config.dataDir}. Start Herald on it (HERALD_DATA_DIR=${config.dataDir}).`);
      }
      return;
    }
    case 'move-store':
      return moveStoreCommand(config, rest);
    case 'keys':
      return keys(config, rest);
    case 'people':
      return peopleCommand(config, rest);
    case 'apps':
      return withServices(config, (services) => appsCommand(services, rest));
    case 'auth-server':
      return runAuthServer(config, (close) => onShutdown(close, config.shutdownMs + SHUTDOWN_SLACK_MS));
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      console.log(`${USAGE}\n\n${CLIENT_USAGE}`);
      return;
    default:
      fail(`Unknown command "${command}".\n\n${USAGE}\n\n${CLIENT_USAGE}`);
  }
}

main(process.argv.slice(2)).catch((err) => {
  fail(err instanceof ApiError ? err.message : `herald: ${(err as Error).message}`);
});
