// Runs several test files in one process (see scripts/run-tests.mjs): each is
// imported in turn, and node's test runner runs their tests one file after
// another, with one summary for them all.
import path from 'node:path';
import { pathToFileURL } from 'node:url';

for (const file of process.argv.slice(2)) await import(pathToFileURL(path.resolve(file)).href);
