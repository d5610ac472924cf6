#!/usr/bin/env node
// Upload benchmark (npm run bench:upload). See bench/README.md, "Upload of a 200 MB video".
//
// Uploads a 200 MB video to a Herald started as `node bin/herald.js serve` (SQLite,
// disk storage) and compares it, in the same run, with `cp` of the same file
// into the same file system, and (for reference) with a bare Node HTTP server
// that writes the same request body to a file, or discards it
// (bench/upload-baseline-server.mjs). Measures the server's peak resident memory during
// each upload (VmHWM, reset before each run) against its memory just before.
//
// Options: --runs=N (default 3)  --size-mb=N (default 200)  --no-write (do not touch README.md)
//          --profile=DIR (run Herald under node --cpu-prof, the profile in DIR)
import { execFile, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { freePort } from './lib/processes.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const README = path.join(ROOT, 'bench', 'README.md');
const options = Object.fromEntries(
  process.argv.slice(2).map((arg) => {
    const [name, value] = arg.replace(/^--/, '').split('=');
    return [name, value ?? true];
  }),
);
const RUNS = Number(options.runs ?? 3);
const SIZE = Number(options['size-mb'] ?? 200) * 1024 * 1024;
const TARGETS = { rssGrowthMb: 64, throughputRatio: 0.7 };
const run = promisify(execFile);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-upload-bench-'));
let server;
let baselineServer;
const cleanup = () => {
  server?.kill('SIGKILL');
  baselineServer?.kill('SIGKILL');
  fs.rmSync(work, { recursive: true, force: true });
};
process.on('SIGINT', () => {
  cleanup();
  process.exit(130);
});

/** An MP4 "ftyp" box (so the bytes say video/mp4) followed by random bytes, written in 1 MB pieces. */
function makeVideo(file) {
  const fd = fs.openSync(file, 'w');
  const piece = Buffer.alloc(1024 * 1024);
  for (let written = 0; written < SIZE; written += piece.length) {
    crypto.randomFillSync(piece);
    if (written === 0) Buffer.from('00000020667479706973736f6d0000020069736f6d69736f32617663316d703431', 'hex').copy(piece);
    fs.writeSync(fd, piece, 0, Math.min(piece.length, SIZE - written));
  }
  fs.closeSync(fd);
}

function memoryKb(pid) {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)[1]);
  return { rss: kb('VmRSS'), peak: kb('VmHWM') };
}

/** Resets the peak (VmHWM) to the current RSS; returns false where the kernel does not allow it. */
function resetPeak(pid) {
  try {
    fs.writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/** Sends the same bytes as `upload` to the bare baseline server. */
function sendRaw(url, file) {
  return new Promise((resolve, reject) => {
    const request = http.request(url, { method: 'POST', headers: { 'content-length': SIZE } }, (response) => {
      response.resume();
      response.on('end', resolve);
    });
    request.on('error', reject);
    fs.createReadStream(file, { highWaterMark: 1024 * 1024 }).pipe(request);
  });
}

/** Starts the baseline server and resolves with its URL. */
function startBaseline(folder) {
  const child = spawn(process.execPath, [path.join(ROOT, 'bench', 'upload-baseline-server.mjs'), folder], { stdio: ['ignore', 'pipe', 'inherit'] });
  baselineServer = child;
  return new Promise((resolve) => child.stdout.once('data', (port) => resolve({ child, url: `http://127.0.0.1:${String(port).trim()}/` })));
}

/** Streams the file as multipart part "file"; resolves with the media object. */
function upload(url, key, file) {
  const boundary = `bench-${crypto.randomUUID()}`;
  const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="video.mp4"\r\nContent-Type: video/mp4\r\n\r\n`);
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  return new Promise((resolve, reject) => {
    const request = http.request(`${url}/api/public/v1/upload`, {
      method: 'POST',
      headers: { authorization: key, 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': head.length + SIZE + tail.length },
    });
    request.on('response', (response) => {
      let text = '';
      response.on('data', (chunk) => (text += chunk));
      response.on('end', () =>
        response.statusCode === 201 ? resolve(JSON.parse(text)) : reject(new Error(`upload answered ${response.statusCode}: ${text}`)),
      );
    });
    request.on('error', reject);
    request.write(head);
    const source = fs.createReadStream(file, { highWaterMark: 1024 * 1024 });
    source.pipe(request, { end: false });
    source.on('end', () => request.end(tail));
    source.on('error', reject);
  });
}

async function main() {
  const video = path.join(work, 'video.mp4');
  makeVideo(video);
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const env = {
    ...process.env,
    HERALD_PORT: String(port),
    HERALD_HOST: '127.0.0.1',
    HERALD_PUBLIC_URL: url,
    HERALD_DATA_DIR: path.join(work, 'data'),
    HERALD_LOG_LEVEL: 'warn',
    HERALD_REQUESTS_PER_MINUTE: '1000000',
  };
  delete env.HERALD_DATABASE_URL;
  const { stdout } = await run(process.execPath, ['bin/herald.js', 'keys', 'create', '--name', 'bench', '--json'], { cwd: ROOT, env });
  const key = JSON.parse(stdout).key;
  const profile = typeof options.profile === 'string' ? ['--cpu-prof', '--cpu-prof-dir', path.resolve(options.profile)] : [];
  server = spawn(process.execPath, [...profile, 'bin/herald.js', 'serve'], { cwd: ROOT, env, stdio: ['ignore', 'inherit', 'inherit'] });
  for (let i = 0; ; i++) {
    if (server.exitCode !== null) throw new Error('herald exited early');
    if (i > 300) throw new Error('herald did not start');
    const ok = await fetch(`${url}/api/health`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    await sleep(100);
  }
  // One small upload first, so the upload path (and ffprobe, when installed) is warm.
  await upload(url, key, video).then((m) => fetch(`${url}/api/public/v1/media/${m.id}`, { method: 'DELETE', headers: { authorization: key } }));
  await sleep(1000);

  const baseline = await startBaseline(path.join(work, 'data'));
  const cpSeconds = [];
  const bareSeconds = [];
  const discardSeconds = [];
  const uploadSeconds = [];
  const growthMb = [];
  let peakReset = true;
  for (let i = 0; i < RUNS; i++) {
    const copy = path.join(work, 'data', `copy-${i}.mp4`);
    let t = performance.now();
    await run('cp', [video, copy]);
    cpSeconds.push((performance.now() - t) / 1000);
    fs.rmSync(copy);

    await sleep(300);
    t = performance.now();
    await sendRaw(baseline.url, video);
    bareSeconds.push((performance.now() - t) / 1000);

    await sleep(300);
    t = performance.now();
    await sendRaw(`${baseline.url}discard`, video);
    discardSeconds.push((performance.now() - t) / 1000);

    await sleep(500);
    const before = memoryKb(server.pid).rss;
    peakReset = resetPeak(server.pid) && peakReset;
    let sampledPeak = before;
    const sampler = setInterval(() => (sampledPeak = Math.max(sampledPeak, memoryKb(server.pid).rss)), 20);
    t = performance.now();
    const media = await upload(url, key, video);
    uploadSeconds.push((performance.now() - t) / 1000);
    clearInterval(sampler);
    const peak = peakReset ? memoryKb(server.pid).peak : sampledPeak;
    growthMb.push((Math.max(peak, sampledPeak) - before) / 1024);
    if (media.size !== SIZE) throw new Error(`stored ${media.size} bytes, sent ${SIZE}`);
    await fetch(`${url}/api/public/v1/media/${media.id}`, { method: 'DELETE', headers: { authorization: key } });
  }
  server.kill('SIGTERM');
  baseline.child.kill('SIGTERM');
  await new Promise((resolve) => server.once('exit', resolve));

  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const mb = SIZE / 1024 / 1024;
  const cpRate = mb / median(cpSeconds);
  const uploadRate = mb / median(uploadSeconds);
  const bareRate = mb / median(bareSeconds);
  const discardRate = mb / median(discardSeconds);
  const ratio = uploadRate / cpRate;
  const worstGrowth = Math.max(...growthMb);
  const cpus = os.cpus();
  const when = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const fmt = (n, d = 0) => n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });
  const ffprobe = await run('ffprobe', ['-version']).then(
    () => true,
    () => false,
  );
  const lines = [
    `Run of ${when} on ${cpus.length} × ${cpus[0].model.trim()}, ${fmt(os.totalmem() / 1024 ** 3, 1)} GiB RAM, ` +
      `Linux ${os.release()}, Node ${process.version}; ${fmt(mb)} MB file in ${os.tmpdir()} (the data folder is on the same file system), ` +
      `${RUNS} runs, medians. ` +
      (ffprobe
        ? 'ffprobe is installed: each upload also runs it on the stored file (for dimensions and duration).'
        : 'ffprobe is not installed: uploads are stored without reading dimensions or duration.') +
      ` Load average (1 min) at the end ${fmt(os.loadavg()[0], 2)}.`,
    '',
    '| Figure | Value | Target | |',
    '|---|---:|---|---|',
    `| \`cp\` of the file (runs: ${cpSeconds.map((s) => fmt(s, 2)).join(', ')} s) | ${fmt(cpRate)} MB/s | | |`,
    `| bare Node HTTP server writing the body to a file (reference; runs: ${bareSeconds.map((s) => fmt(s, 2)).join(', ')} s) | ${fmt(bareRate)} MB/s | | |`,
    `| bare Node HTTP server discarding the body: the transport's ceiling (reference; runs: ${discardSeconds.map((s) => fmt(s, 2)).join(', ')} s) | ` +
      `${fmt(discardRate)} MB/s, ${fmt((discardRate / cpRate) * 100)} % of \`cp\` | | |`,
    `| \`POST /upload\`, request start to answer (runs: ${uploadSeconds.map((s) => fmt(s, 2)).join(', ')} s) | ${fmt(uploadRate)} MB/s | | |`,
    `| upload throughput / \`cp\` throughput | ${fmt(ratio * 100)} % | ≥ ${TARGETS.throughputRatio * 100} % | ` +
      `${ratio >= TARGETS.throughputRatio ? 'met' : '**missed**'} |`,
    `| upload throughput / bare Node server throughput (reference) | ${fmt((uploadRate / bareRate) * 100)} % | | |`,
    `| server peak RSS growth during an upload, worst run (runs: ${growthMb.map((g) => fmt(g, 1)).join(', ')} MB; ` +
      `${peakReset ? 'VmHWM reset before each run' : 'sampled every 20 ms'}) | ${fmt(worstGrowth, 1)} MB | < ${TARGETS.rssGrowthMb} MB | ` +
      `${worstGrowth < TARGETS.rssGrowthMb ? 'met' : '**missed**'} |`,
  ];
  console.log(lines.join('\n'));
  if (!options['no-write']) {
    const readme = fs.readFileSync(README, 'utf8');
    const start = '<!-- upload-results:start -->';
    const end = '<!-- upload-results:end -->';
    if (readme.includes(start)) {
      fs.writeFileSync(README, readme.slice(0, readme.indexOf(start) + start.length) + '\n' + lines.join('\n') + '\n' + readme.slice(readme.indexOf(end)));
    }
  }
}

main()
  .catch((err) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(cleanup);
