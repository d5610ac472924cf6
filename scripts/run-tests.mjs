#!/usr/bin/env node
// Runs the test files (TypeScript through tsx, node's test runner), the longest
// first, as many processes at once as keep the machine's cores busy. Loading
// tsx and the application costs a process about three seconds of CPU, so the
// shorter files share a process, a few of one folder in turn (see BATCHES);
// the longest keep their own:
// most files spend their time waiting on local servers' timers, so another
// starts whenever the cores were idle for a good part of the last moment, up to
// HERALD_TEST_PARALLEL at once (6) and never fewer than two. Each file has a
// time limit: a file that hangs fails with its name instead of holding the run.
// Ends with one line "N passed, N failed, N skipped" that CI reads.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** Longest a test file may run (the slowest, the multi-process drains, take a few minutes on a loaded machine). */
const FILE_TIMEOUT_MS = Number(process.env.HERALD_TEST_FILE_TIMEOUT_S || 600) * 1000;
const MAX_PARALLEL = Number(process.env.HERALD_TEST_PARALLEL || 6);
const MIN_PARALLEL = Math.min(2, MAX_PARALLEL);
/** Another file starts when the cores were busy less than this share of the last look. */
const BUSY_BELOW = 0.9;
const LOOK_MS = 1_000;
/** The longest files (a minute or more each) start first, so none is left running alone at the end. */
const SLOW_FIRST = [
  'test/engine/workers.test.ts',
  'test/web/web-app.test.ts',
  'test/engine/engine.test.ts',
  'test/cli/client.test.ts',
  'test/cli/keys.test.ts',
  'test/resilience/graceful-stop.test.ts',
  'test/api/feeds.test.ts',
  'test/resilience/sealed-secret.test.ts',
  'test/networks/instagram.test.ts',
  'test/api/bad-input.test.ts',
  'test/web/approvals-page.test.ts',
  'test/networks/tiktok.test.ts',
];

/**
 * Files that keep a process of their own besides the longest: top-level hooks
 * of a shared process would run only when its last file ends.
 */
const ALONE = [...SLOW_FIRST, 'test/networks/wordpress-real.test.ts', 'test/media/s3.test.ts'];
/**
 * How many files of a folder share a process, in the order the shared ones
 * start: the network suites first (each waits on its fake network's processing
 * times for half a minute), the unit tests (a second each) all in one.
 */
const BATCHES = [
  ['test/networks', 3],
  ['test/engine', 2],
  ['test/resilience', 2],
  ['test/web', 3],
  ['test/cli', 2],
  ['test/accounts', 3],
  ['test/api', 4],
  ['test/media', 4],
  ['test/sdk', 4],
  ['test/compat', 4],
  ['test/unit', Number.POSITIVE_INFINITY],
];

function testFiles(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return testFiles(full);
    return entry.name.endsWith('.test.ts') ? [full] : [];
  });
}

/**
 * Counts from one file's spec output: node's own pass/fail/skip lines, and, for
 * each suite skipped because PostgreSQL is not reachable, the tests its SQLite
 * twin ran (the same suite, the same tests).
 */
function tally(output) {
  const counts = { passed: 0, failed: 0, skipped: 0, postgresSkipped: 0 };
  const suites = new Set();
  const testsPerSuite = new Map();
  const skippedPostgres = [];
  let top;
  for (const line of output.split('\n')) {
    // A cancelled test (its file ended or its suite failed before it finished) did not pass: it counts as failed.
    const summary = /^ℹ (pass|fail|cancelled|skipped) (\d+)$/.exec(line.trim());
    if (summary) counts[{ pass: 'passed', fail: 'failed', cancelled: 'failed', skipped: 'skipped' }[summary[1]]] += Number(summary[2]);
    const start = /^(\s*)▶ (.+)$/.exec(line);
    if (start) {
      suites.add(start[2]);
      if (start[1] === '') top = start[2];
      continue;
    }
    const skippedSuite = /^﹣ (.+) \(postgres\) \([\d.]+ms\) # PostgreSQL/.exec(line);
    if (skippedSuite) skippedPostgres.push(skippedSuite[1]);
    const done = /^(\s*)[✔✖] (.+?) \([\d.]+ms\)/.exec(line);
    if (!done) continue;
    if (suites.has(done[2])) {
      if (done[1] === '') top = undefined;
    } else if (top) {
      testsPerSuite.set(top, (testsPerSuite.get(top) ?? 0) + 1);
    }
  }
  for (const name of skippedPostgres) counts.postgresSkipped += testsPerSuite.get(`${name} (sqlite)`) ?? 0;
  return counts;
}

/** Runs one file, or several in one process (scripts/test-batch.mjs imports them in turn). */
function runGroup(group) {
  const started = Date.now();
  const name = group.join(' + ');
  return new Promise((resolve) => {
    // Run directly rather than under --test, which would start a second process per file.
    const entry = group.length === 1 ? group : ['scripts/test-batch.mjs', ...group];
    const child = spawn(process.execPath, ['--import', 'tsx', '--test-reporter=spec', ...entry], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    let errors = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (errors += chunk));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, FILE_TIMEOUT_MS * group.length);
    child.on('close', (code) => {
      clearTimeout(timer);
      const counts = tally(output);
      let note = '';
      if (timedOut) {
        counts.failed += 1;
        note = `✖ ${name}: still running after ${(FILE_TIMEOUT_MS * group.length) / 1000} s; stopped (set HERALD_TEST_FILE_TIMEOUT_S to allow longer)\n`;
      } else if (code !== 0 && counts.failed === 0) {
        counts.failed = 1;
        note = `✖ ${name}: exited with code ${code} without a failing test (see its output above)\n`;
      }
      // The wall-clock time shows which files to make faster when the suite grows.
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      resolve({ file: name, output: `# ${name} (${seconds} s)\n${output}${errors}${note}`, counts });
    });
  });
}

/** The queue: the longest files alone, first; then the others, a few of a folder per process. */
function groups(files) {
  const slash = (file) => file.split(path.sep).join('/');
  const rank = (file) => {
    const at = SLOW_FIRST.indexOf(slash(file));
    return at === -1 ? SLOW_FIRST.length : at;
  };
  const alone = files.filter((file) => ALONE.includes(slash(file))).sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
  const shared = files.filter((file) => !ALONE.includes(slash(file))).sort();
  const queue = alone.map((file) => [file]);
  for (const [folder, size] of BATCHES) {
    const inFolder = shared.filter((file) => path.dirname(slash(file)) === folder);
    for (let at = 0; at < inFolder.length; at += size) queue.push(inFolder.slice(at, at + size));
  }
  // A file in a folder not listed above still runs, on its own.
  const batched = new Set(queue.flat());
  for (const file of shared) if (!batched.has(file)) queue.push([file]);
  return queue;
}

const only = process.argv.slice(2);
const queue = only.length > 0 ? only.map((file) => [file]) : groups(testFiles('test'));
const total = { passed: 0, failed: 0, skipped: 0, postgresSkipped: 0 };
const failedFiles = [];
/** The share of the last look the cores spent working. */
function cpuMeter() {
  const read = () =>
    os.cpus().reduce(
      (sum, cpu) => {
        const { idle, ...rest } = cpu.times;
        return { idle: sum.idle + idle, all: sum.all + idle + Object.values(rest).reduce((a, b) => a + b, 0) };
      },
      { idle: 0, all: 0 },
    );
  let last = read();
  return () => {
    const now = read();
    const all = now.all - last.all;
    const busy = all > 0 ? 1 - (now.idle - last.idle) / all : 1;
    last = now;
    return busy;
  };
}

/** Runs the queue: a file starts while fewer than the minimum run, or the cores have room and the maximum is not reached. */
async function runAll(queue) {
  const busy = cpuMeter();
  const running = new Set();
  let next = 0;
  const start = () => {
    const group = queue[next++];
    const run = runGroup(group).then((result) => {
      process.stdout.write(result.output);
      for (const key of Object.keys(total)) total[key] += result.counts[key];
      if (result.counts.failed > 0) failedFiles.push(result);
      running.delete(run);
    });
    running.add(run);
  };
  while (next < queue.length || running.size > 0) {
    while (next < queue.length && running.size < MIN_PARALLEL) start();
    // A look of a full second: a file that just started is still loading, and only a whole look says whether the cores have room.
    await new Promise((resolve) => setTimeout(resolve, LOOK_MS));
    if (next < queue.length && running.size < MAX_PARALLEL && busy() < BUSY_BELOW) start();
  }
}
await runAll(queue);

/**
 * What went wrong in a failing file, printed again at the end, where a CI log that
 * keeps only its tail still shows it: node's own "failing tests" part, or the
 * file's last lines when it ended without one (a crash, a time limit).
 */
function failureReport({ file, output }) {
  const lines = output.split('\n');
  const from = lines.findIndex((line) => line.startsWith('✖ failing tests:'));
  const report = from === -1 ? lines.slice(-30) : lines.slice(from + 1);
  const shown = report.slice(0, FAILURE_LINES);
  if (report.length > shown.length) shown.push(`  ... ${report.length - shown.length} more lines in the output above`);
  return `# ${file}\n${shown.join('\n').trim()}`;
}
const FAILURE_LINES = 80;

if (failedFiles.length > 0) {
  console.log(`\nFailures:\n${failedFiles.map(failureReport).join('\n\n')}`);
  console.log(`\nFiles with failures:\n${failedFiles.map((r) => `  ${r.file}`).join('\n')}`);
}
if (total.postgresSkipped > 0)
  console.log(`PostgreSQL was not reachable: at least ${total.postgresSkipped} PostgreSQL tests were skipped (set HERALD_TEST_DATABASE_URL to run them)`);
console.log(`${total.passed} passed, ${total.failed} failed, ${total.skipped + total.postgresSkipped} skipped`);
process.exit(total.failed > 0 ? 1 : 0);
