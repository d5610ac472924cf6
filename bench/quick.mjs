#!/usr/bin/env node
// A quick comparison of this checkout with another commit (npm run bench:quick -- --against=REF):
// both are measured in turns, A B A B..., so a change in the machine's load falls on
// both alike, and the figures are their medians and the ratio this/that. See bench/README.md.
//
// Options: --against=REF (a commit, branch or tag; default HEAD, i.e. the uncommitted change)
//          --rounds=N (default 3)  --seconds=S (each load, default 3)  --connections=N (default 50)
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { abandon, benchDeployment, cpuMsOf, createKey, folders, memoryOf, sleep, spawnNode, startNodeOptions, stop, waitReady } from './lib/processes.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const options = Object.fromEntries(
  process.argv.slice(2).map((arg) => {
    const [name, value] = arg.replace(/^--/, '').split('=');
    return [name, value ?? true];
  }),
);
const AGAINST = String(options.against ?? 'HEAD');
const ROUNDS = Number(options.rounds ?? 3);
const SECONDS = Number(options.seconds ?? 3);
const CONNECTIONS = Number(options.connections ?? 50);
/** Idle memory is read this long after the server answered, as bench/run.mjs reads it. */
const IDLE_MS = 5_000;
const LISTED_POSTS = 200;

/**
 * A checkout of `ref` in a temporary folder, using this one's packages (the same
 * packages, or the comparison means little) but a node_modules/.cache of its own,
 * where bin/herald.js keeps the server bundle it builds from that checkout's src/.
 */
function checkout(ref) {
  const sha = execFileSync('git', ['rev-parse', '--verify', `${ref}^{commit}`], { cwd: ROOT, encoding: 'utf8' }).trim();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `herald-quick-${sha.slice(0, 8)}-`));
  folders.add(dir);
  execFileSync('sh', ['-c', `git -C "${ROOT}" archive ${sha} | tar -x -C "${dir}"`]);
  fs.mkdirSync(path.join(dir, 'node_modules'));
  for (const name of fs.readdirSync(path.join(ROOT, 'node_modules'))) {
    if (name !== '.cache') fs.symlinkSync(path.join(ROOT, 'node_modules', name), path.join(dir, 'node_modules', name));
  }
  return { label: `${ref} (${sha.slice(0, 8)})`, root: dir };
}

/** Builds a checkout's web application and server bundle before anything is timed (herald start would, on its first run). */
function prepare(tree) {
  execFileSync(process.execPath, ['scripts/build-web.mjs', '--if-stale'], { cwd: tree.root, stdio: 'ignore' });
  execFileSync(process.execPath, ['bin/herald.js', '--help'], { cwd: tree.root, stdio: 'ignore' });
}

/** One Herald of `tree` on a fresh embedded store; resolves to its figures. */
async function measure(tree) {
  const { env, url } = await benchDeployment('herald-quick-data-');
  const since = performance.now();
  const child = spawnNode(tree.root, [...startNodeOptions(tree.root), 'bin/herald.js', 'start'], env);
  try {
    const readyMs = await waitReady(child, `${url}/api/health`, since);
    await sleep(IDLE_MS);
    const idleMb = memoryOf(child.pid).rssMb;
    const key = await createKey(tree.root, env);
    const headers = { authorization: key, 'content-type': 'application/json' };
    const channel = await (
      await fetch(`${url}/api/public/v1/integrations`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ identifier: 'webhook', name: 'Quick', credentials: { url: 'https://hooks.example.com/quick' } }),
      })
    ).json();
    const entry = (n) => ({ integration: { id: channel.id }, value: [{ content: `Quick bench post ${n}`, image: [] }], settings: { __type: 'webhook' } });
    // Seeded 50 at a time (the most one POST /posts takes).
    for (let n = 0; n < LISTED_POSTS; n += 50) {
      const posts = Array.from({ length: 50 }, (_, i) => entry(n + i));
      const seeded = await fetch(`${url}/api/public/v1/posts`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ type: 'draft', date: '2030-01-15T09:00:00.000Z', shortLink: false, tags: [], posts }),
      });
      if (!seeded.ok) throw new Error(`seeding answered ${seeded.status}: ${await seeded.text()}`);
    }
    const create = JSON.stringify({ type: 'schedule', date: '2031-06-01T09:00:00.000Z', shortLink: false, tags: [], posts: [entry(0)] });
    const list = `${url}/api/public/v1/posts?startDate=2030-01-01T00:00:00.000Z&endDate=2030-01-31T23:59:59.999Z`;
    return {
      readyMs,
      idleMb,
      create: await load(child.pid, { url: `${url}/api/public/v1/posts`, method: 'POST', headers, body: create }),
      list: await load(child.pid, { url: list, headers }),
    };
  } finally {
    await stop(child);
  }
}

/** Requests per second and the server's CPU per request over SECONDS; every answer must be 2xx. */
async function load(pid, request) {
  await autocannon({ ...request, connections: CONNECTIONS, duration: 1 });
  const cpuBefore = cpuMsOf(pid);
  const result = await autocannon({ ...request, connections: CONNECTIONS, duration: SECONDS });
  if (result.non2xx > 0) throw new Error(`${request.method ?? 'GET'} ${request.url}: ${result.non2xx} answers were not 2xx`);
  return { perSecond: result.requests.total / SECONDS, cpuUs: ((cpuMsOf(pid) - cpuBefore) * 1000) / Math.max(1, result.requests.total) };
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length % 2 ? sorted[(sorted.length - 1) / 2] : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2;
};

async function main() {
  const trees = [{ label: 'this checkout', root: ROOT }, checkout(AGAINST)];
  for (const tree of trees) prepare(tree);
  const runs = trees.map(() => []);
  for (let round = 0; round < ROUNDS; round++) {
    // Turns alternate which goes first, so neither always gets the warmer machine.
    const order = round % 2 === 0 ? [0, 1] : [1, 0];
    for (const i of order) {
      runs[i].push(await measure(trees[i]));
      console.log(`round ${round + 1}/${ROUNDS}: ${trees[i].label} measured`);
    }
  }
  const figures = [
    ['herald start, ready (ms)', (r) => r.readyMs, 'lower'],
    ['idle memory 5 s after ready (MB)', (r) => r.idleMb, 'lower'],
    ['POST /posts (req/s)', (r) => r.create.perSecond, 'higher'],
    ['POST /posts, server CPU (µs/request)', (r) => r.create.cpuUs, 'lower'],
    [`GET /posts, ${LISTED_POSTS} posts (req/s)`, (r) => r.list.perSecond, 'higher'],
    [`GET /posts, server CPU (µs/request)`, (r) => r.list.cpuUs, 'lower'],
  ];
  console.log(`\n${ROUNDS} rounds, ${SECONDS} s per load, ${CONNECTIONS} connections, embedded store; medians`);
  console.log(`${'measure'.padEnd(40)} ${'this checkout'.padStart(14)} ${trees[1].label.padStart(22)}   this/that`);
  for (const [name, pick, better] of figures) {
    const [mine, theirs] = runs.map((r) => median(r.map(pick)));
    console.log(`${name.padEnd(40)} ${mine.toFixed(0).padStart(14)} ${theirs.toFixed(0).padStart(22)}   ${(mine / theirs).toFixed(2)} (${better} is better)`);
  }
}

process.on('SIGINT', () => {
  abandon();
  process.exit(130);
});
try {
  await main();
} finally {
  abandon();
}
