#!/usr/bin/env node
// Runs every test file with node's test runner (TypeScript through tsx) and ends
// with one line "N passed, N failed" that CI reads.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

function testFiles(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return testFiles(full);
    return entry.name.endsWith('.test.ts') ? [full] : [];
  });
}

const only = process.argv.slice(2);
const files = only.length > 0 ? only : testFiles('test').sort();
const child = spawn(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-concurrency=2', '--test-timeout=300000', '--test-reporter=spec', ...files],
  { stdio: ['ignore', 'pipe', 'inherit'] },
);
let passed = 0;
let failed = 0;
let buffer = '';
child.stdout.on('data', (chunk) => {
  process.stdout.write(chunk);
  buffer += chunk.toString();
  const lines = buffer.split('\n');
  buffer = lines.pop() ?? '';
  for (const line of lines) {
    const pass = /^ℹ pass (\d+)$/.exec(line.trim());
    const fail = /^ℹ fail (\d+)$/.exec(line.trim());
    if (pass) passed = Number(pass[1]);
    if (fail) failed = Number(fail[1]);
  }
});
child.on('close', (code) => {
  if (code !== 0 && failed === 0) failed = 1;
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(code ?? 1);
});
