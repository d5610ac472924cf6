#!/usr/bin/env node
// Entry point of the `herald` command. It runs a bundle of src/ that esbuild
// builds on the first run and again whenever a source file is newer than the
// bundle (about 0.2 s). A bundle starts faster and uses less memory than
// compiling the TypeScript on the fly.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const sources = path.join(root, 'src');
const bundle = path.join(root, 'node_modules', '.cache', 'herald', 'herald.mjs');

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
    return fs.statSync(bundle).mtimeMs >= newestChange(sources);
  } catch {
    return false;
  }
}

if (!bundleIsCurrent()) {
  const esbuild = await import('esbuild');
  const result = esbuild.buildSync({
    entryPoints: [path.join(sources, 'main.ts')],
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
  // Written aside and renamed, so a process starting meanwhile never reads half a file.
  const temporary = `${bundle}.${process.pid}.tmp`;
  fs.writeFileSync(temporary, result.outputFiles[0].contents);
  fs.renameSync(temporary, bundle);
}

process.setSourceMapsEnabled(true);
await import(pathToFileURL(bundle).href);
