/**
 * Runs the published `postiz` command-line client (a devDependency, unchanged) as
 * a child process against a test server, the way a user would: API key and URL
 * from the environment, a home folder of its own so no stored login interferes.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';

/** node_modules/postiz/dist/index.js, found the way Node resolves the package. */
export const POSTIZ_CLI = createRequire(import.meta.url).resolve('postiz');

const CLI_TIMEOUT_MS = 60_000;

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface PostizCli {
  /** Runs `postiz <args>` with POSTIZ_API_URL=apiUrl and POSTIZ_API_KEY=key. */
  run(args: string[], options: { apiUrl: string; key: string }): Promise<CliResult>;
  /** The empty home folder the client runs with (removed by cleanup). */
  home: string;
  cleanup(): void;
}

export function postizCli(): PostizCli {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'postiz-home-'));
  return {
    home,
    run(args, { apiUrl, key }) {
      // Only what the client needs: no POSTIZ_* variable leaks in from the test's own environment.
      const env = { PATH: process.env.PATH ?? '', HOME: home, POSTIZ_API_URL: apiUrl, POSTIZ_API_KEY: key };
      return new Promise((resolve, reject) => {
        // Asynchronous on purpose: the server under test runs in this very process.
        const child = spawn(process.execPath, [POSTIZ_CLI, ...args], { env, cwd: home, stdio: ['ignore', 'pipe', 'pipe'] });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (c) => (stdout += c));
        child.stderr.on('data', (c) => (stderr += c));
        const timer = setTimeout(() => child.kill('SIGKILL'), CLI_TIMEOUT_MS);
        child.on('error', reject);
        child.on('close', (code) => {
          clearTimeout(timer);
          resolve({ code, stdout, stderr });
        });
      });
    },
    cleanup() {
      fs.rmSync(home, { recursive: true, force: true });
    },
  };
}

/** The JSON the client prints after its one-line header ("✅ Post created successfully!" etc.). */
export function printedJson(result: CliResult): any {
  const lines = result.stdout.split('\n');
  const start = lines.findIndex((line) => line.startsWith('{') || line.startsWith('['));
  if (start < 0) throw new Error(`the client printed no JSON; stdout: ${result.stdout}\nstderr: ${result.stderr}`);
  return JSON.parse(lines.slice(start).join('\n'));
}

/** The server's error body the client repeats on stderr as "API Error (status): <body>". */
export function printedApiError(result: CliResult): { status: number; body: any } {
  const match = /API Error \((\d{3})\): (.*)$/m.exec(result.stderr);
  if (!match) throw new Error(`no "API Error (status): body" on stderr: ${result.stderr}`);
  return { status: Number(match[1]), body: JSON.parse(match[2]) };
}

/** For assertion messages: what the client printed. */
export function describeRun(result: CliResult): string {
  return `exit ${result.code}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`;
}
