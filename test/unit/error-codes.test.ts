import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { ERROR_CODES, errorCodeTable } from '../../src/domain/error-codes.ts';

const root = path.resolve(import.meta.dirname, '../..');

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

describe('error-code catalogue', () => {
  it('is the table the README shows', () => {
    const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8');
    assert.ok(readme.includes(errorCodeTable()), 'README.md has the table errorCodeTable() makes; paste it from there');
  });

  it('lists only codes the server can answer with', () => {
    // The type check keeps every thrown code in the catalogue; this keeps the catalogue free of codes nothing throws.
    const sources = sourceFiles(path.join(root, 'src'))
      .filter((file) => !file.endsWith('error-codes.ts'))
      .map((file) => fs.readFileSync(file, 'utf8'))
      .join('\n');
    const unused = Object.keys(ERROR_CODES).filter((code) => !sources.includes(`'${code}'`));
    assert.deepEqual(unused, []);
  });
});
