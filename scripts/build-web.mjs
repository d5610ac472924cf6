#!/usr/bin/env node
// Builds the web application (web/) into dist/web with Vite; Herald serves it
// at /. npm runs it on install ("prepare"), and `herald start` runs it when the
// build is missing or older than the web sources.
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
let vite;
try {
  vite = await import('vite');
} catch {
  console.log('herald: the web application was not built (vite is not installed: run npm install without --omit=dev)');
  process.exit(0);
}
await vite.build({ configFile: path.join(root, 'web', 'vite.config.ts'), logLevel: process.env.HERALD_WEB_BUILD_LOG ?? 'warn' });
