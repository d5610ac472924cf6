#!/usr/bin/env node
// Builds the SDK that `import { Herald } from 'herald/sdk'` loads: one ESM file
// bundled by esbuild (dist/sdk/index.js) and its type declarations, emitted by
// tsc from the same sources (dist/types/). npm runs it on install ("prepare").
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.join(root, 'dist');
const esbuild = await import('esbuild');

// Only the SDK's own output: dist/web is the web application's build.
for (const own of ['sdk', 'types']) fs.rmSync(path.join(dist, own), { recursive: true, force: true });
esbuild.buildSync({
  entryPoints: [path.join(root, 'src', 'sdk', 'index.ts')],
  outfile: path.join(dist, 'sdk', 'index.js'),
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  packages: 'external',
  logLevel: 'error',
});

let tsc;
try {
  tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
} catch {
  console.log('herald: SDK built without type declarations (typescript is not installed)');
  process.exit(0);
}
const result = spawnSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.sdk.json')], { stdio: 'inherit' });
// A type error elsewhere in the sources must not break `npm install` of the server;
// the SDK test type-checks a consumer against these declarations and catches it.
if (result.status !== 0) {
  console.error('herald: WARNING: the SDK type declarations could not be built (see above); the SDK itself is built');
  process.exit(0);
}

// The sources import each other as ./x.ts; declaration files for consumers say ./x.js.
function rewrite(dir) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) rewrite(full);
    else if (entry.name.endsWith('.d.ts')) {
      const text = fs.readFileSync(full, 'utf8');
      fs.writeFileSync(full, text.replace(/(from\s+|import\()(['"])(\.{1,2}\/[^'"]+)\.ts\2/g, '$1$2$3.js$2'));
    }
  }
}
rewrite(path.join(dist, 'types'));
