#!/usr/bin/env node
// Builds the web application (web/) into dist/web with Vite; Herald serves it
// at /. npm runs it on install ("prepare"), and `herald start` runs it when the
// build is missing or older than the web sources.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import zlib from 'node:zlib';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
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
