// Processes of a bench run: Herald servers started as `npm start` starts them,
// timed until they answer, measured from /proc, and removed with their data
// folders however the run ends. Shared by bench/run.mjs and bench/quick.mjs.
import { spawn, execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const CLOCK_TICKS = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export async function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

/**
 * A Herald of its own for a bench: a fresh data folder (removed with the run), a free
 * port, quiet logs, and limits still counted on every request but never reached.
 */
export async function benchDeployment(prefix) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  folders.add(dataDir);
  const port = await freePort();
  const unlimited = '1000000000';
  const env = {
    HERALD_PORT: String(port),
    HERALD_HOST: '127.0.0.1',
    HERALD_PUBLIC_URL: `http://127.0.0.1:${port}`,
    HERALD_DATA_DIR: dataDir,
    HERALD_LOG_LEVEL: 'warn',
    HERALD_REQUESTS_PER_MINUTE: unlimited,
    HERALD_POSTS_PER_HOUR: unlimited,
  };
  return { dataDir, env, url: `http://127.0.0.1:${port}` };
}

/** Servers and data folders of this run, removed if the run is interrupted. */
const running = new Set();
export const folders = new Set();

export function abandon() {
  for (const child of running) child.kill('SIGKILL');
  for (const folder of folders) fs.rmSync(folder, { recursive: true, force: true });
}

/** Spawns a node process in `cwd`; keeps its output so a failure can show it. */
export function spawnNode(cwd, args, env) {
  const child = spawn(process.execPath, args, { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  child.on('exit', () => running.delete(child));
  child.output = '';
  child.stdout.on('data', (chunk) => (child.output += chunk));
  child.stderr.on('data', (chunk) => (child.output += chunk));
  child.exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  return child;
}

export async function stop(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timeout = sleep(10_000).then(() => 'timeout');
  if ((await Promise.race([child.exited, timeout])) === 'timeout') {
    child.kill('SIGKILL');
    await child.exited;
  }
}

/** Polls `url` until it answers 2xx; returns the ms since `since`. */
export async function waitReady(child, url, since, limitMs = 30_000) {
  while (performance.now() - since < limitMs) {
    if (child.exitCode !== null) throw new Error(`process exited early (code ${child.exitCode}):\n${child.output}`);
    try {
      const response = await fetch(url);
      await response.arrayBuffer();
      if (response.ok) return performance.now() - since;
    } catch {
      // not listening yet
    }
    await sleep(10);
  }
  throw new Error(`${url} did not answer within ${limitMs} ms:\n${child.output}`);
}

/** Resident memory of a process in MB (VmRSS, and the peak VmHWM). */
export function memoryOf(pid) {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)[1]);
  return { rssMb: kb('VmRSS') / 1024, peakMb: kb('VmHWM') / 1024 };
}

/** CPU time (user + system) a process has used so far, in ms. */
export function cpuMsOf(pid) {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
}

/** The node options of `npm start` in the checkout at `root`, so every Herald here runs as it runs there. */
export function startNodeOptions(root) {
  const start = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).scripts.start;
  const match = /^node((?:\s+--\S+)*)\s+bin\/herald\.js start$/.exec(start);
  if (!match) throw new Error(`bench: cannot read the node options of the start script "${start}"`);
  return match[1].trim().split(/\s+/).filter(Boolean);
}

/** A new API key of the Herald whose environment is `env`, made by its own `herald keys create`. */
export async function createKey(root, env) {
  const { stdout } = await promisify(execFile)(process.execPath, ['bin/herald.js', 'keys', 'create', '--name', 'bench', '--json'], {
    cwd: root,
    env: { ...process.env, ...env },
  });
  return JSON.parse(stdout).key;
}
