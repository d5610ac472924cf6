/**
 * `herald serve`, `herald worker` or `herald start` as a child process beside a
 * test Herald, on the same store: the way a deployment runs them, so a crash,
 * a signal or a lost connection acts on a real process.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './herald.ts';

const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../bin/herald.js');

export interface HeraldProcess {
  child: ChildProcess;
  /** http://127.0.0.1:PORT for serve and start. */
  url: string;
  /** Everything it wrote so far: its log lines and any error output. */
  output(): string;
  /** Resolves once it says it runs; rejects if it exits first. */
  running: Promise<void>;
  alive(): boolean;
  /** Sends `signal` and resolves with the exit code once it has exited. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** `store`: where the data lives (a test Herald's `services.config`, or a folder of its own). */
export async function startHeraldProcess(
  store: { dataDir: string; databaseUrl?: string },
  command: 'serve' | 'worker' | 'start',
  env: Record<string, string> = {},
): Promise<HeraldProcess> {
  const config = store;
  const port = await freePort();
  const child = spawn(process.execPath, [BIN, command], {
    env: {
      PATH: process.env.PATH,
      HERALD_DATA_DIR: config.dataDir,
      ...(config.databaseUrl ? { HERALD_DATABASE_URL: config.databaseUrl } : {}),
      HERALD_PORT: String(port),
      HERALD_HOST: '127.0.0.1',
      HERALD_SECRET: 'test-secret-2f9c4e7a1b3d5f8e0a6c9b2d4f7e1a3c',
      HERALD_ALLOW_PRIVATE_HOSTS: '127.0.0.1',
      HERALD_LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // Everything it wrote: its log lines (stdout) and any error output (stderr).
  let output = '';
  const collect = (chunk: Buffer) => {
    output += chunk;
    if (process.env.HERALD_TEST_VERBOSE) process.stderr.write(`[${command} ${child.pid}] ${chunk}`);
  };
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const running = new Promise<void>((resolve, reject) => {
    let seen = '';
    child.stdout!.on('data', (chunk) => {
      seen += chunk;
      if (/is listening on|worker is running/.test(seen)) resolve();
    });
    child.once('exit', (code) => reject(new Error(`herald ${command} exited (${code}) before it ran: ${output}`)));
  });
  running.catch(() => {});
  const alive = () => child.exitCode === null && child.signalCode === null;
  return {
    child,
    url: `http://127.0.0.1:${port}`,
    output: () => output,
    running,
    alive,
    async stop(signal = 'SIGTERM') {
      if (alive()) child.kill(signal);
      return exited;
    },
  };
}
