import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { createSecretBox, resolveSecret } from '../../src/lib/secrets.ts';
import { backoffMs } from '../../src/scheduler/engine.ts';

describe('secret box', () => {
  it('round-trips and never stores the plain text', () => {
    const box = createSecretBox('one');
    const sealed = box.encrypt('token-123');
    assert.ok(!sealed.includes('token-123'));
    assert.equal(box.decrypt(sealed), 'token-123');
    assert.notEqual(box.encrypt('token-123'), sealed, 'a fresh IV every time');
  });

  it('refuses to open with another secret, naming the key ids', () => {
    const sealed = createSecretBox('one').encrypt('x');
    assert.throws(() => createSecretBox('two').decrypt(sealed), /sealed with key/);
  });

  it('detects tampering', () => {
    const box = createSecretBox('one');
    const parts = box.encrypt('value').split('.');
    parts[4] = Buffer.from('other').toString('base64url');
    assert.throws(() => box.decrypt(parts.join('.')));
  });

  it('generates the embedded secret once, with mode 0600', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-secret-'));
    const first = resolveSecret(undefined, dir);
    assert.equal(resolveSecret(undefined, dir), first);
    assert.equal(fs.statSync(path.join(dir, 'secret.key')).mode & 0o777, 0o600);
    assert.equal(resolveSecret('configured', dir), 'configured');
    fs.rmSync(dir, { recursive: true });
  });
});

describe('retry backoff', () => {
  it('grows exponentially with jitter and is capped', () => {
    assert.equal(backoffMs(1, () => 0), 1_000);
    assert.equal(backoffMs(1, () => 1), 2_000);
    assert.equal(backoffMs(3, () => 1), 8_000);
    assert.equal(backoffMs(30, () => 1), 300_000);
  });
});
