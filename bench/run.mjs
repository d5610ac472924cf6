#!/usr/bin/env node
// Performance benchmark of Herald's public API (npm run bench). See bench/README.md.
//
// One run measures, on SQLite and on PostgreSQL, three API cases against a bare
// Fastify baseline measured in the same run, plus the start-up time and idle
// memory of `herald start`. It prints a table and writes the figures into
// bench/README.md (between the results markers).
//
// Options: --duration=SECONDS (default 10)  --connections=N (default 50)
//          --stores=sqlite,postgres  --no-start (skip `herald start` time and memory)
//          --no-write (do not touch README.md)
//          --profile=DIR (run the Herald servers under node --cpu-prof, profiles in DIR)
//          --cases=integrations,posts,postsUncached,create (a subset, with its baseline, e.g. to profile one case; implies --no-write)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import pg from 'pg';
import {
  abandon,
  benchDeployment,
  cpuMsOf,
  createKey,
  folders,
  freePort,
  memoryOf,
  sleep,
  spawnNode,
  startNodeOptions,
  stop,
  waitReady,
} from './lib/processes.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const README = path.join(ROOT, 'bench', 'README.md');
const ADMIN_URL = process.env.HERALD_BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';

const options = Object.fromEntries(
  process.argv.slice(2).map((arg) => {
    const [name, value] = arg.replace(/^--/, '').split('=');
    return [name, value ?? true];
  }),
);
const DURATION = Number(options.duration ?? 10);
const WARMUP = 2;
const SETTLE_AFTER_WARMUP_MS = 1_500;
const CONNECTIONS = Number(options.connections ?? 50);
let STORES = String(options.stores ?? 'sqlite,postgres').split(',');
const SELECTED_CASES = String(options.cases ?? 'integrations,posts,postsUncached,create').split(',');
const PROFILE_DIR = typeof options.profile === 'string' ? path.resolve(options.profile) : undefined;

const CHANNELS = 5;
const LISTED_POSTS = 1000;
const POSTS_PER_SEED_CALL = 50;
const RANGE = { start: '2030-01-01T00:00:00.000Z', end: '2030-01-31T23:59:59.999Z' };
const LABELS = {
  integrations: 'GET /integrations',
  posts: `GET /posts (${LISTED_POSTS} posts)`,
  postsText: `GET /posts (${LISTED_POSTS} posts), ready text`,
  postsUncached: `GET /posts (${LISTED_POSTS} posts), a new range each time`,
  create: 'POST /posts',
};

const READY_RUNS = 3;
const IDLE_MS = 5_000;
const SETTLED_MS = 30_000;

const TARGETS = {
  getRatio: 0.5,
  createPerSecondSqlite: 1500,
  idleRssMb: 150,
  readyMs: 2000,
};

// ---------------------------------------------------------------------------
// A Herald under test: its own data folder and, for PostgreSQL, its own database

async function adminQuery(sql) {
  const client = new pg.Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

async function postgresReachable() {
  try {
    await adminQuery('SELECT 1');
    return true;
  } catch {
    return false;
  }
}

async function newDeployment(store) {
  const { dataDir, env, url: base } = await benchDeployment('herald-bench-');
  let database;
  if (store === 'postgres') {
    database = `herald_bench_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
    await adminQuery(`CREATE DATABASE ${database}`);
    const url = new URL(ADMIN_URL);
    url.pathname = `/${database}`;
    env.HERALD_DATABASE_URL = url.toString();
  }
  return {
    store,
    env,
    url: base,
    async remove() {
      fs.rmSync(dataDir, { recursive: true, force: true });
      folders.delete(dataDir);
      if (database) await adminQuery(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    },
  };
}

/** Starts `herald <command>` as `npm start` does and times it until the first HTTP answer. */
async function startHerald(deployment, command) {
  const profile = PROFILE_DIR ? ['--cpu-prof', '--cpu-prof-dir', PROFILE_DIR, `--cpu-prof-name=${deployment.store}-${command}-${Date.now()}.cpuprofile`] : [];
  const nodeArgs = [...startNodeOptions(ROOT), ...profile];
  const since = performance.now();
  const child = spawnNode(ROOT, [...nodeArgs, 'bin/herald.js', command], deployment.env);
  const readyMs = await waitReady(child, `${deployment.url}/api/health`, since);
  return { child, readyMs };
}

async function call(deployment, key, method, route, body) {
  const response = await fetch(`${deployment.url}/api/public/v1${route}`, {
    method,
    headers: { authorization: key, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const parsed = await response.json();
  if (!response.ok) throw new Error(`${method} ${route} answered ${response.status}: ${JSON.stringify(parsed)}`);
  return parsed;
}

// ---------------------------------------------------------------------------
// The data and requests of the cases

const postsQuery = `/posts?startDate=${encodeURIComponent(RANGE.start)}&endDate=${encodeURIComponent(RANGE.end)}`;

/**
 * The same 1,000 posts, but each request ends its range a millisecond earlier than
 * the one before (the posts lie weeks before the end): no answer can come from a
 * cache of lists, so this measures reading them from the store.
 */
function uncachedPostsRequest(path) {
  let n = 0;
  return (request) => ({
    ...request,
    path: path.replace(encodeURIComponent(RANGE.end), encodeURIComponent(new Date(Date.parse(RANGE.end) - (n++ % 86_400_000)).toISOString())),
  });
}

function postEntry(channelId, n) {
  return {
    integration: { id: channelId },
    value: [{ content: `Benchmark post ${n}: release notes for version 1.${n} are out, read them at https://example.com/releases/1-${n}`, image: [] }],
    settings: { __type: 'webhook' },
  };
}

/** The body of the POST /posts case: one scheduled post on one channel, outside the listed range. */
function createBody(channelId) {
  return { type: 'schedule', date: '2031-06-01T09:00:00.000Z', shortLink: false, tags: [], posts: [postEntry(channelId, 0)] };
}

/** Adds the webhook channels and the posts listed by the GET /posts case. */
async function seed(deployment, key) {
  const channels = [];
  for (let i = 0; i < CHANNELS; i++) {
    const channel = await call(deployment, key, 'POST', '/integrations', {
      identifier: 'webhook',
      name: `Bench hook ${i + 1}`,
      credentials: { url: `https://hooks.example.com/bench/${i + 1}` },
    });
    channels.push(channel.id);
  }
  const start = Date.parse(RANGE.start);
  for (let call_ = 0, n = 0; n < LISTED_POSTS; call_++) {
    const entries = [];
    for (let i = 0; i < POSTS_PER_SEED_CALL && n < LISTED_POSTS; i++, n++) entries.push(postEntry(channels[n % CHANNELS], n));
    // Drafts and scheduled posts, spread over the range (one date per call).
    const type = call_ % 2 === 0 ? 'schedule' : 'draft';
    const date = new Date(start + call_ * 3_600_000 * 24 + 9 * 3_600_000).toISOString();
    await call(deployment, key, 'POST', '/posts', { type, date, shortLink: false, tags: [], posts: entries });
  }
  const listed = await call(deployment, key, 'GET', postsQuery);
  if (listed.posts.length !== LISTED_POSTS) throw new Error(`GET /posts lists ${listed.posts.length} posts, expected ${LISTED_POSTS}`);
  return {
    channels,
    payloads: {
      integrations: await call(deployment, key, 'GET', '/integrations'),
      posts: listed,
      created: await call(deployment, key, 'POST', '/posts', createBody(channels[0])),
    },
  };
}

/**
 * One autocannon run: a short warm-up, then the measured run. Every answer must be
 * 2xx. Also reports the server's CPU time per request, which other load on the
 * machine disturbs far less than requests per second.
 */
async function load(label, serverPid, { url, method = 'GET', headers = {}, body, setupRequest }) {
  const run = (duration) =>
    autocannon({ url, method, headers, body, connections: CONNECTIONS, duration, ...(setupRequest && { requests: [{ setupRequest }] }) });
  await run(WARMUP);
  // Let the server finish the requests the warm-up left in flight before measuring.
  await sleep(SETTLE_AFTER_WARMUP_MS);
  const cpuBefore = cpuMsOf(serverPid);
  const result = await run(DURATION);
  const cpuMs = cpuMsOf(serverPid) - cpuBefore;
  // A non-2xx answer means the case measures the wrong thing (e.g. a limit still on): stop.
  if (result.non2xx > 0) throw new Error(`${label}: ${result.non2xx} answers were not 2xx`);
  // Requests still unanswered after autocannon's 10 s timeout (autocannon counts them
  // among its errors) are reported with the figures.
  const failed = result.errors;
  const perSecond = result.requests.total / (result.duration || DURATION);
  const cpuUs = result.requests.total > 0 ? (cpuMs * 1000) / result.requests.total : NaN;
  console.log(
    `  ${label.padEnd(44)} ${perSecond.toFixed(0).padStart(7)} req/s   p50 ${result.latency.p50} ms   p99 ${result.latency.p99} ms   ` +
      `server CPU ${cpuUs.toFixed(0)} µs/request${failed ? `   ${result.timeouts} timed out, ${failed - result.timeouts} other errors` : ''}`,
  );
  return { perSecond, cpuUs, failed, timeouts: result.timeouts, p50: result.latency.p50, p99: result.latency.p99, total: result.requests.total };
}

/**
 * The baseline a case is compared with, doing the same work: Herald's cached list
 * is sent as ready text, so against a baseline that sends ready text; the list
 * read anew (a new range each time) against a baseline that serialises it.
 */
const BASELINE_OF = { integrations: 'integrations', posts: 'postsText', postsUncached: 'posts', create: 'create' };
const baselineOf = (name) => BASELINE_OF[name];

function caseRequests(base, key, channelId) {
  const auth = { authorization: key };
  return {
    integrations: { url: `${base}/integrations`, headers: auth },
    posts: { url: `${base}${postsQuery}`, headers: auth },
    // Only the baseline has it: the same list, sent as the bytes Herald answered.
    postsText: { url: `${base}/posts-text` },
    postsUncached: { url: `${base}${postsQuery}`, headers: auth, setupRequest: uncachedPostsRequest(`${new URL(base).pathname}${postsQuery}`) },
    create: { url: `${base}/posts`, method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify(createBody(channelId)) },
  };
}

// ---------------------------------------------------------------------------
// Phases

/** Runs `herald <command>` on a fresh store for `use`, then stops it and removes the store. */
async function withHerald(store, command, use) {
  const deployment = await newDeployment(store);
  let child;
  try {
    const started = await startHerald(deployment, command);
    child = started.child;
    return await use({ deployment, ...started });
  } finally {
    if (child) await stop(child);
    await deployment.remove();
  }
}

/**
 * `herald start`: the time from spawn to the first HTTP answer (READY_RUNS times, on
 * an empty store each time, so migrations run), then its memory after a few seconds
 * idle (the target) and once V8 has had time to give back start-up garbage.
 */
async function measureStart(store) {
  const readyRuns = [];
  for (let i = 0; i < READY_RUNS; i++) readyRuns.push(await withHerald(store, 'start', async ({ readyMs }) => readyMs));
  const readyMs = [...readyRuns].sort((a, b) => a - b)[Math.floor(READY_RUNS / 2)];
  return withHerald(store, 'start', async ({ child }) => {
    await sleep(IDLE_MS);
    const idle = memoryOf(child.pid);
    await sleep(SETTLED_MS - IDLE_MS);
    const settled = memoryOf(child.pid);
    console.log(
      `  herald start (${store}): ready in ${readyRuns.map((ms) => ms.toFixed(0)).join(', ')} ms; ` +
        `RSS ${idle.rssMb.toFixed(1)} MB after ${IDLE_MS / 1000} s idle, ${settled.rssMb.toFixed(1)} MB after ${SETTLED_MS / 1000} s`,
    );
    return { store, readyMs, readyRuns, rssMb: idle.rssMb, settledMb: settled.rssMb };
  });
}

/** The three API cases on one store, with `herald serve`. */
async function measureHerald(store) {
  return withHerald(store, 'serve', async ({ deployment, child }) => {
    const key = await createKey(ROOT, deployment.env);
    const { channels, payloads } = await seed(deployment, key);
    const requests = caseRequests(`${deployment.url}/api/public/v1`, key, channels[0]);
    const results = {};
    for (const name of SELECTED_CASES) results[name] = await load(`${store}: ${LABELS[name]}`, child.pid, requests[name]);
    const afterLoad = memoryOf(child.pid);
    console.log(`  ${store}: RSS after the load ${afterLoad.rssMb.toFixed(1)} MB (peak ${afterLoad.peakMb.toFixed(1)} MB)`);
    return { store, results, payloads, afterLoad, sizes: payloadSizes(payloads), createBodyBytes: Buffer.byteLength(requests.create.body) };
  });
}

function payloadSizes(payloads) {
  return Object.fromEntries(Object.entries(payloads).map(([name, value]) => [name, Buffer.byteLength(JSON.stringify(value))]));
}

async function measureBaseline(payloads, channelId) {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-bench-baseline-'));
  folders.add(folder);
  const file = path.join(folder, 'payloads.json');
  fs.writeFileSync(file, JSON.stringify(payloads));
  const port = await freePort();
  const child = spawnNode(ROOT, ['bench/baseline-server.mjs', file], { PORT: String(port) });
  try {
    const base = `http://127.0.0.1:${port}`;
    await waitReady(child, `${base}/integrations`, performance.now());
    const requests = caseRequests(base, 'unused', channelId);
    const results = {};
    for (const name of new Set(SELECTED_CASES.map(baselineOf))) {
      results[name] = await load(`baseline: ${LABELS[name]}`, child.pid, requests[name]);
    }
    return results;
  } finally {
    await stop(child);
    fs.rmSync(folder, { recursive: true, force: true });
    folders.delete(folder);
  }
}

// ---------------------------------------------------------------------------
// Report

function machine() {
  const cpus = os.cpus();
  return {
    date: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    cpu: `${cpus.length} × ${cpus[0]?.model.trim()}`,
    memoryGiB: (os.totalmem() / 2 ** 30).toFixed(1),
    os: `${os.type()} ${os.release()}`,
    node: process.version,
    loadStart: os.loadavg()[0].toFixed(2),
  };
}

const fmt = (n, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
const verdict = (ok) => (ok ? 'met' : '**missed**');

const CASES = [
  ['integrations', `GET /integrations (${CHANNELS} channels)`],
  ['posts', `GET /posts (${LISTED_POSTS} posts) from Herald's list cache, against a baseline sending the same ready text`],
  ['postsUncached', `GET /posts (${LISTED_POSTS} posts), a new range on every request (never from memory), against a baseline serialising the list`],
  ['create', 'POST /posts (schedule, 1 channel)'],
];

/** The target of a case on a store, and whether the figures meet it; undefined when the issue sets none. */
function targetOf(name, store, herald, baseline) {
  if (name === 'create') {
    if (store !== 'sqlite') return undefined;
    return { text: `≥ ${fmt(TARGETS.createPerSecondSqlite)} req/s`, ok: herald.perSecond >= TARGETS.createPerSecondSqlite };
  }
  return { text: `≥ ${TARGETS.getRatio * 100} % of baseline req/s`, ok: herald.perSecond / baseline.perSecond >= TARGETS.getRatio };
}

function report({ info, starts, herald, baseline }) {
  const lines = [];
  lines.push(`Run of ${info.date} on ${info.cpu}, ${info.memoryGiB} GiB RAM, ${info.os}, Node ${info.node}.`);
  lines.push(
    `${CONNECTIONS} connections, ${DURATION} s per case after a ${WARMUP} s warm-up; autocannon in the bench process. ` +
      `Load average of the machine (1 min) at the start ${info.loadStart}, at the end ${info.loadEnd}.`,
  );
  lines.push('');
  lines.push(
    '| Case | Store | Herald req/s | Baseline req/s | Herald / baseline | Herald p50 / p99 ms | Server CPU per request, Herald / baseline | Target | |',
  );
  lines.push('|---|---|---:|---:|---:|---:|---:|---|---|');
  for (const run of herald) {
    for (const [name, label] of CASES) {
      const h = run.results[name];
      const b = baseline[baselineOf(name)];
      const target = targetOf(name, run.store, h, b);
      const failed = h.failed ? ` (${h.timeouts} timed out${h.failed > h.timeouts ? `, ${h.failed - h.timeouts} other errors` : ''})` : '';
      lines.push(
        `| ${label} | ${run.store} | ${fmt(h.perSecond)}${failed} | ${fmt(b.perSecond)} | ` +
          `${fmt((h.perSecond / b.perSecond) * 100)} % | ${h.p50} / ${h.p99} | ` +
          `${fmt(h.cpuUs)} / ${fmt(b.cpuUs)} µs | ${target?.text ?? '–'} | ${target ? verdict(target.ok) : ''} |`,
      );
    }
  }
  if (starts.length > 0) {
    lines.push('');
    lines.push(`| \`herald start\` | Store | Figure | Target | |`);
    lines.push('|---|---|---:|---|---|');
  }
  for (const s of starts) {
    lines.push(
      `| ready (spawn to first HTTP answer), median of ${READY_RUNS} (${s.readyRuns.map((ms) => fmt(ms)).join(', ')}) | ${s.store} | ` +
        `${fmt(s.readyMs)} ms | ≤ ${fmt(TARGETS.readyMs)} ms | ${verdict(s.readyMs <= TARGETS.readyMs)} |`,
    );
    lines.push(
      `| RSS ${IDLE_MS / 1000} s after ready | ${s.store} | ${fmt(s.rssMb, 1)} MB | ≤ ${TARGETS.idleRssMb} MB | ${verdict(s.rssMb <= TARGETS.idleRssMb)} |`,
    );
    lines.push(`| RSS ${SETTLED_MS / 1000} s after ready (for reference) | ${s.store} | ${fmt(s.settledMb, 1)} MB | | |`);
  }
  lines.push('');
  const sizes = herald.map(
    (r) =>
      `${r.store}: /integrations ${fmt(r.sizes.integrations)} B, /posts ${fmt(r.sizes.posts)} B, ` +
      `POST answer ${fmt(r.sizes.created)} B (request body ${fmt(r.createBodyBytes)} B)`,
  );
  lines.push(`Payload sizes (JSON bytes Herald answered; the baseline serves the ${herald[0].store} ones): ${sizes.join('; ')}.`);
  lines.push(`Herald RSS after the load (serve): ${herald.map((r) => `${r.store} ${fmt(r.afterLoad.rssMb, 1)} MB`).join(', ')}.`);
  return lines.join('\n');
}

function writeReadme(text) {
  const start = '<!-- results:start -->';
  const end = '<!-- results:end -->';
  const current = fs.existsSync(README) ? fs.readFileSync(README, 'utf8') : `# Benchmark\n\n${start}\n${end}\n`;
  const from = current.indexOf(start);
  const to = current.indexOf(end);
  if (from < 0 || to < from) throw new Error(`${README} has no ${start} ... ${end} section`);
  fs.writeFileSync(README, `${current.slice(0, from + start.length)}\n${text}\n${current.slice(to)}`);
}

// ---------------------------------------------------------------------------

async function main() {
  const began = performance.now();
  const info = machine();
  console.log(`Herald benchmark, ${info.date}: ${info.cpu}, ${info.memoryGiB} GiB, Node ${info.node}`);
  if (PROFILE_DIR) fs.mkdirSync(PROFILE_DIR, { recursive: true });

  if (STORES.includes('postgres') && !(await postgresReachable())) {
    if (options.stores) throw new Error(`PostgreSQL is not reachable at ${ADMIN_URL} (set HERALD_BENCH_DATABASE_URL)`);
    console.log(`PostgreSQL is not reachable at ${ADMIN_URL} (set HERALD_BENCH_DATABASE_URL): measuring SQLite only.`);
    STORES = STORES.filter((store) => store !== 'postgres');
  }
  const starts = [];
  if (!options['no-start']) {
    console.log('Start-up and idle memory of `herald start`:');
    for (const store of STORES) starts.push(await measureStart(store));
  }

  console.log(`Load: ${CONNECTIONS} connections, ${DURATION} s per case:`);
  const herald = [];
  let baseline;
  for (const store of STORES) {
    herald.push(await measureHerald(store));
    // The baseline runs once, with the payloads of the first store.
    baseline ??= await measureBaseline(herald[0].payloads, herald[0].payloads.created[0].integration);
  }
  if (options.cases) return; // a subset: the lines above are the result, no report

  info.loadEnd = os.loadavg()[0].toFixed(2);
  const text = report({ info, starts, herald, baseline });
  console.log(`\n${text}\n`);
  if (!options['no-write']) {
    writeReadme(text);
    console.log(`Figures written to ${path.relative(process.cwd(), README)}`);
  }
  console.log(`Total bench time ${fmt((performance.now() - began) / 1000)} s`);
}

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    abandon();
    process.exit(1);
  });
}

main().catch((err) => {
  console.error(err);
  abandon();
  process.exit(1);
});
