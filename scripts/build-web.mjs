#!/usr/bin/env node
// Builds the web application (web/) into dist/web with Vite; Herald serves it
// at /. npm runs it on install ("prepare"). With --if-stale (`herald start`, the
// browser tests) it builds only when the build is missing or older than what it
// is made from.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import zlib from 'node:zlib';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The server modules the web application imports besides web/ itself. */
const SHARED_SOURCES = ['src/providers/content-rules.ts', 'src/providers/text-counting.ts', 'src/providers/networks/x/text-length.ts'];

function newestChange(target) {
  const stat = fs.statSync(target);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(0, ...fs.readdirSync(target).map((name) => newestChange(path.join(target, name))));
}

if (process.argv.includes('--if-stale')) {
  let built = 0;
  try {
    built = fs.statSync(path.join(root, 'dist', 'web', 'index.html')).mtimeMs;
  } catch {
    // Not built yet.
  }
  if (built >= Math.max(...['web', ...SHARED_SOURCES].map((p) => newestChange(path.join(root, p))))) process.exit(0);
  console.log('herald: building the web application…');
}

let vite;
try {
  vite = await import('vite');
} catch {
  console.log('herald: the web application was not built (vite is not installed: run npm install without --omit=dev)');
  process.exit(0);
}
await vite.build({ configFile: path.join(root, 'web', 'vite.config.ts'), logLevel: process.env.HERALD_WEB_BUILD_LOG ?? 'warn' });

// Compressed once here, so the server sends each asset as brotli or gzip without compressing per request.
const assets = path.join(root, 'dist', 'web', 'assets');
for (const name of fs.readdirSync(assets)) {
  if (!/\.(js|css|svg)$/.test(name)) continue;
  const bytes = fs.readFileSync(path.join(assets, name));
  fs.writeFileSync(path.join(assets, `${name}.br`), zlib.brotliCompressSync(bytes, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11 } }));
  fs.writeFileSync(path.join(assets, `${name}.gz`), zlib.gzipSync(bytes, { level: 9 }));
}
