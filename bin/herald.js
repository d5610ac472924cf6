#!/usr/bin/env node
// Entry point of the `herald` command. It runs a bundle of src/ that esbuild
// builds on the first run and again whenever a source file is newer than the
// bundle (about 0.2 s). A bundle starts faster and uses less memory than
// compiling the TypeScript on the fly.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const sources = path.join(root, 'src');
const bundle = path.join(root, 'node_modules', '.cache', 'herald', 'herald.mjs');
const clientBundle = path.join(root, 'node_modules', '.cache', 'herald', 'client.mjs');
// Feed documents are read in a worker thread, from a bundle of their own beside the server's.
const feedWorkerBundle = path.join(root, 'node_modules', '.cache', 'herald', 'feed-parse-worker.mjs');

function newestChange(dir) {
  let newest = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestChange(full) : fs.statSync(full).mtimeMs);
  }
  return newest;
}

function bundleIsCurrent() {
  try {
    return Math.min(...[bundle, clientBundle, feedWorkerBundle].map((file) => fs.statSync(file).mtimeMs)) >= newestChange(sources);
  } catch {
    return false;
  }
}

if (!bundleIsCurrent()) {
  const esbuild = await import('esbuild');
  const result = esbuild.buildSync({
    // The client commands get a bundle of their own: they start without loading the server's modules.
    entryPoints: {
      herald: path.join(sources, 'main.ts'),
      client: path.join(sources, 'cli', 'index.ts'),
      'feed-parse-worker': path.join(sources, 'domain', 'feeds', 'feed-parse-worker.ts'),
    },
    outdir: path.dirname(bundle),
    outExtension: { '.js': '.mjs' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    sourcemap: 'inline',
    write: false,
    logLevel: 'error',
  });
  fs.mkdirSync(path.dirname(bundle), { recursive: true });
  for (const output of result.outputFiles) {
    // Written aside and renamed, so a process starting meanwhile never reads half a file.
    const temporary = `${output.path}.${process.pid}.tmp`;
    fs.writeFileSync(temporary, output.contents);
    fs.renameSync(temporary, output.path);
  }
}

// The web application: built by npm install; rebuilt here when its sources (or the
// server modules it shares) changed since, so `npm start` always serves the current one.
process.env.HERALD_WEB_DIR ??= path.join(root, 'dist', 'web');
if (process.argv[2] === 'start' && fs.existsSync(path.join(root, 'web'))) {
  spawnSync(process.execPath, [path.join(root, 'scripts', 'build-web.mjs'), '--if-stale'], { stdio: 'inherit' });
}

process.setSourceMapsEnabled(true);
const client = await import(pathToFileURL(clientBundle).href);
if (client.CLIENT_COMMANDS.has(process.argv[2])) {
  process.exitCode = await client.runClient(process.argv.slice(2));
} else {
  await import(pathToFileURL(bundle).href);
}
