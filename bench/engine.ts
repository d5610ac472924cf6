#!/usr/bin/env -S node --import tsx
// Benchmark of the publishing engine (npm run bench:engine). See bench/README.md.
//
// A local network (a webhook receiver answering after 20 ms) takes the posts.
// Drain: N posts due at the same instant, published by `herald worker` processes
// (SQLite with 1 worker; PostgreSQL with 1 and 3), against a baseline that sends
// the same N requests straight to the receiver at the same concurrency, with no
// database, in the same run. Lateness: posts spread evenly over a minute, measured
// as the time the receiver got each one minus its due time.
//
// Options: --posts=N (10000)  --spread=N (600)  --spread-seconds=S (60)
//          --runs=N (3)  --stores=sqlite,postgres  --no-spread  --no-write  --profile=DIR
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { loadConfig } from '../src/config.ts';
import { createServices } from '../src/app.ts';
import type { Services } from '../src/services.ts';
import { newId } from '../src/lib/ids.ts';
import type { PostRow } from '../src/db/schema.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const README = path.join(ROOT, 'bench', 'README.md');
const ADMIN_URL = process.env.HERALD_BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const options = Object.fromEntries(
  process.argv
    .slice(2)
    .map((a) => a.replace(/^--/, '').split('='))
    .map(([k, v]) => [k, v ?? 'true']),
);
const POSTS = Number(options.posts ?? 10_000);
const SPREAD = Number(options.spread ?? 600);
const SPREAD_SECONDS = Number(options['spread-seconds'] ?? 60);
const STORES = String(options.stores ?? 'sqlite,postgres').split(',');
const LATENCY_MS = 20;
const RUNS = Number(options.runs ?? 3);
const CONCURRENCY = Number(options.concurrency ?? 64);
const TARGETS = { drainPerSecondSqlite: 1000, latenessP99Ms: 1000 };

// ---------------------------------------------------------------------------
// The network: answers each delivery after LATENCY_MS and notes when it came.

interface Receiver {
  url: string;
  arrivals: Map<string, number>;
  duplicates: number;
  close(): Promise<void>;
}

async function startReceiver(): Promise<Receiver> {
  const arrivals = new Map<string, number>();
  const receiver = { url: '', arrivals, duplicates: 0, close: async () => {} } as Receiver;
  const server = http.createServer((req, res) => {
    const id = String(req.headers['webhook-id'] ?? newId());
    if (arrivals.has(id)) receiver.duplicates++;
    else arrivals.set(id, Date.now());
    req.resume();
    req.on('end', () =>
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ id }));
      }, LATENCY_MS),
    );
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  receiver.close = () =>
    new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return receiver;
}

// ---------------------------------------------------------------------------
// Stores

interface BenchStore {
  env: Record<string, string>;
  drop(): Promise<void>;
}

async function makeStore(kind: string): Promise<BenchStore> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-bench-engine-'));
  const env: Record<string, string> = {
    HERALD_DATA_DIR: dataDir,
    HERALD_SECRET: 'bench-secret-5d8f2a9c7e1b4f6a3d0c8e2b',
    HERALD_ALLOW_PRIVATE_HOSTS: '127.0.0.1',
    HERALD_LOG_LEVEL: 'warn',
  };
  if (kind === 'sqlite') return { env, drop: async () => fs.rmSync(dataDir, { recursive: true, force: true }) };
  const name = `herald_bench_engine_${process.pid}_${Date.now()}`;
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  env.HERALD_DATABASE_URL = url.toString();
  return {
    env,
    drop: async () => {
      const c = new pg.Client({ connectionString: ADMIN_URL });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Queues posts straight into the store (the API's own speed is measured by bench/run.mjs). */
async function seed(services: Services, receiverUrl: string, dueTimes: number[]): Promise<string[]> {
  const accountId = await services.accounts.create('bench');
  const { channel } = await services.channels.addWithCredentials(accountId, { identifier: 'webhook', credentials: { url: receiverUrl } });
  const now = Date.now();
  const rows: PostRow[] = dueTimes.map((at, i) => {
    const id = newId();
    return {
      id,
      account_id: accountId,
      channel_id: channel.id,
      group_id: id,
      root_id: null,
      parent_id: null,
      thread_index: 0,
      content: `bench post ${i}`,
      media: '[]',
      settings: '{"__type":"webhook"}',
      tags: '[]',
      state: 'QUEUE',
      publish_at: at,
      delay_minutes: 0,
      release_id: null,
      release_url: null,
      error: null,
      warning: null,
      creation_method: 'bench',
      version: 1,
      lease_owner: null,
      lease_until: null,
      attempts: 0,
      created_at: now,
      updated_at: now,
      deleted_at: null,
    };
  });
  for (let i = 0; i < rows.length; i += 500)
    await services.store.db
      .insertInto('posts')
      .values(rows.slice(i, i + 500))
      .execute();
  return rows.map((r) => r.id);
}

function startWorker(env: Record<string, string>): ChildProcess {
  // --profile=DIR runs the workers under node --cpu-prof.
  const profile = options.profile ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(options.profile)}`] : [];
  const child = spawn(process.execPath, [...profile, path.join(ROOT, 'bin', 'herald.js'), 'worker'], {
    env: { PATH: process.env.PATH, ...env, HERALD_WORKER_CONCURRENCY: String(CONCURRENCY) },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  return child;
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

async function waitFor(check: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}

// ---------------------------------------------------------------------------
// Scenarios

/** The same N requests straight to the receiver at the workers' total concurrency: the ceiling. */
async function baseline(receiver: Receiver, n: number, concurrency: number): Promise<number> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const body = JSON.stringify({ type: 'post.publish', post: { content: 'x' } });
  let next = 0;
  const started = Date.now();
  const one = (i: number) =>
    new Promise<void>((resolve, reject) => {
      const req = http.request(
        receiver.url,
        { method: 'POST', agent, headers: { 'content-type': 'application/json', 'webhook-id': `baseline-${i}-${started}` } },
        (res) => {
          res.resume();
          res.on('end', resolve);
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) await one(next++);
    }),
  );
  agent.destroy();
  return n / ((Date.now() - started) / 1000);
}

interface DrainResult {
  store: string;
  workers: number;
  posts: number;
  perSecond: number;
  baselinePerSecond: number;
  duplicates: number;
  /** posts/s of every run, when the drain was repeated. */
  runs?: number[];
}

async function drain(kind: string, workers: number, receiver: Receiver): Promise<DrainResult> {
  const store = await makeStore(kind);
  const services = await createServices(loadConfig({ ...store.env, HERALD_WORKER: 'off' }));
  try {
    const ids = await seed(
      services,
      receiver.url,
      Array.from({ length: POSTS }, () => Date.now()),
    );
    const before = receiver.duplicates;
    // Counting arrivals (not scanning the ids) keeps the bench's own CPU use out of the measurement.
    const arrivedBefore = receiver.arrivals.size;
    const children = Array.from({ length: workers }, () => startWorker(store.env));
    await waitFor(() => receiver.arrivals.size - arrivedBefore >= POSTS, 300_000);
    const times = ids.map((id) => receiver.arrivals.get(id)!);
    const first = Math.min(...times);
    const last = Math.max(...times);
    await Promise.all(children.map(stop));
    const baselinePerSecond = await baseline(receiver, POSTS, CONCURRENCY * workers);
    return {
      store: kind,
      workers,
      posts: POSTS,
      perSecond: POSTS / Math.max(0.001, (last - first) / 1000),
      baselinePerSecond,
      duplicates: receiver.duplicates - before,
    };
  } finally {
    await services.close();
    await store.drop();
  }
}

interface LatenessResult {
  store: string;
  posts: number;
  p50: number;
  p99: number;
  max: number;
}

async function lateness(kind: string, receiver: Receiver): Promise<LatenessResult> {
  const store = await makeStore(kind);
  const services = await createServices(loadConfig({ ...store.env, HERALD_WORKER: 'off' }));
  const worker = startWorker(store.env);
  try {
    // The worker is up before the first post is due (its start is not what is measured).
    const start = Date.now() + 5_000;
    const due = Array.from({ length: SPREAD }, (_, i) => start + Math.round((i * SPREAD_SECONDS * 1000) / SPREAD));
    const ids = await seed(services, receiver.url, due);
    const arrivedBefore = receiver.arrivals.size - ids.filter((id) => receiver.arrivals.has(id)).length;
    await waitFor(() => receiver.arrivals.size - arrivedBefore >= SPREAD, (SPREAD_SECONDS + 60) * 1000);
    const late = ids.map((id, i) => receiver.arrivals.get(id)! - due[i]).sort((a, b) => a - b);
    const pick = (q: number) => late[Math.min(late.length - 1, Math.floor(q * late.length))];
    return { store: kind, posts: SPREAD, p50: pick(0.5), p99: pick(0.99), max: late[late.length - 1] };
  } finally {
    await stop(worker);
    await services.close();
    await store.drop();
  }
}

// ---------------------------------------------------------------------------

const receiver = await startReceiver();
const drains: DrainResult[] = [];
const spreads: LatenessResult[] = [];
for (const kind of STORES) {
  for (const workers of kind === 'sqlite' ? [1] : [1, 3]) {
    // Each drain runs RUNS times (a fresh store each time); the median run is reported, all are listed.
    const runs: DrainResult[] = [];
    for (let i = 0; i < RUNS; i++) {
      const r = await drain(kind, workers, receiver);
      runs.push(r);
      console.log(
        `drain ${kind} ${workers} worker(s), run ${i + 1}: ${r.perSecond.toFixed(0)} posts/s ` +
          `(baseline ${r.baselinePerSecond.toFixed(0)}/s, ${((100 * r.perSecond) / r.baselinePerSecond).toFixed(0)} %), duplicates ${r.duplicates}`,
      );
    }
    const sorted = [...runs].sort((a, b) => a.perSecond - b.perSecond);
    drains.push({ ...sorted[Math.floor(sorted.length / 2)], runs: runs.map((r) => r.perSecond), duplicates: runs.reduce((n, r) => n + r.duplicates, 0) });
  }
  if (options['no-spread'] !== 'true') {
    const l = await lateness(kind, receiver);
    spreads.push(l);
    console.log(`lateness ${kind}: p50 ${l.p50} ms, p99 ${l.p99} ms, max ${l.max} ms over ${l.posts} posts`);
  }
}
await receiver.close();

const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
const sqliteDrain = drains.find((d) => d.store === 'sqlite');
const drainVerdict = sqliteDrain ? (sqliteDrain.perSecond >= TARGETS.drainPerSecondSqlite ? 'met' : 'missed') : 'not run';
const latenessVerdict = spreads.length ? (spreads.every((s) => s.p99 <= TARGETS.latenessP99Ms) ? 'met' : 'missed') : 'not run';
const lines = [
  `Measured ${new Date().toISOString().slice(0, 10)} on ${os.cpus().length} × ${cpu}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, ` +
    `Node ${process.version}; network answering after ${LATENCY_MS} ms; ${CONCURRENCY} posts in flight per worker.`,
  '',
  `| drain (median of ${RUNS} runs) | posts | posts/s | every run | baseline posts/s | ratio | duplicates |`,
  '|---|---|---|---|---|---|---|',
  ...drains.map(
    (d) =>
      `| ${d.store}, ${d.workers} worker${d.workers > 1 ? 's' : ''} | ${d.posts} | ${d.perSecond.toFixed(0)} | ` +
      `${(d.runs ?? [d.perSecond]).map((r) => r.toFixed(0)).join(', ')} | ${d.baselinePerSecond.toFixed(0)} | ` +
      `${((100 * d.perSecond) / d.baselinePerSecond).toFixed(0)} % | ${d.duplicates} |`,
  ),
  '',
  '| spread load | posts over | lateness p50 | p99 | max |',
  '|---|---|---|---|---|',
  ...spreads.map((s) => `| ${s.store}, 1 worker | ${s.posts} in ${SPREAD_SECONDS} s | ${s.p50} ms | ${s.p99} ms | ${s.max} ms |`),
  '',
  `Targets: drain ≥ ${TARGETS.drainPerSecondSqlite} posts/s on SQLite (${drainVerdict}); lateness p99 ≤ ${TARGETS.latenessP99Ms} ms (${latenessVerdict}).`,
];
console.log(lines.join('\n'));
if (options['no-write'] !== 'true') {
  const text = fs.readFileSync(README, 'utf8');
  const begin = '<!-- engine-results:begin -->';
  const end = '<!-- engine-results:end -->';
  if (text.includes(begin)) fs.writeFileSync(README, text.replace(new RegExp(`${begin}[\\s\\S]*${end}`), `${begin}\n${lines.join('\n')}\n${end}`));
  else console.log(`(bench/README.md has no ${begin} marker; figures not written)`);
}
