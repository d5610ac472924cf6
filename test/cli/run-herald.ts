/**
 * Runs the real `bin/herald.js` as a child process, the way a user does: only
 * the settings given here (no HERALD_* of the test's own environment), and a
 * home folder of its own, so no stored login of this machine interferes.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const ROOT = path.resolve(import.meta.dirname, '../..');
export const BIN = path.join(ROOT, 'bin', 'herald.js');

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A user's home folder: empty, removed by cleanup(). */
export function emptyHome(): { home: string; configDir: string; cleanup(): void } {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-home-'));
  return { home, configDir: path.join(home, '.config', 'herald'), cleanup: () => fs.rmSync(home, { recursive: true, force: true }) };
}

export function runHerald(args: string[], env: Record<string, string>, cwd = os.tmpdir()): Promise<Run> {
  const base = { PATH: process.env.PATH ?? '', TZ: 'UTC' };
  return new Promise((resolve, reject) => {
    // Asynchronous on purpose: the server under test runs in this very process.
    const child = spawn(process.execPath, [BIN, ...args], { cwd, env: { ...base, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

export function describeRun(run: Run): string {
  return `exit ${run.code}\nstdout: ${run.stdout}\nstderr: ${run.stderr}`;
}

/** The JSON a --json run printed; fails with what the run printed when it did not succeed. */
export function printed(run: Run): any {
  if (run.code !== 0) throw new Error(`herald failed: ${describeRun(run)}`);
  return JSON.parse(run.stdout);
}
