import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { createSecretBox, resolveSecret } from '../../src/lib/secrets.ts';
import { loadConfig } from '../../src/config.ts';
import { backoffMs } from '../../src/scheduler/engine.ts';

describe('secret box', () => {
  it('round-trips and never stores the plain text', () => {
    const box = createSecretBox('one');
    const sealed = box.encrypt('token-123');
    assert.ok(!sealed.includes('token-123'), "!sealed.includes('token-123')");
    assert.equal(box.decrypt(sealed), 'token-123');
    assert.notEqual(box.encrypt('token-123'), sealed, 'a fresh IV every time');
  });

  it('refuses to open with another secret, naming the key ids', () => {
    const sealed = createSecretBox('one').encrypt('x');
    assert.throws(() => createSecretBox('two').decrypt(sealed), /sealed with key/);
  });

  it('seals with an HKDF-derived key (v2), and still opens what an older Herald sealed (v1: one SHA-256 of the secret)', () => {
    const secret = 'a-secret-of-forty-characters-0123456789';
    const box = createSecretBox(secret);
    assert.match(box.encrypt('x'), /^v2\./);
    // The v1 format, written out here from its definition, not with Herald's code.
    const key = crypto.createHash('sha256').update(`herald:${secret}`).digest();
    const keyId = crypto.createHash('sha256').update(key).digest('hex').slice(0, 8);
    const iv = crypto.randomBytes(12);
    const cipher = crypto.createCipheriv('aes-256-gcm', key, iv);
    const body = Buffer.concat([cipher.update('stored by an older Herald', 'utf8'), cipher.final()]);
    const v1 = ['v1', keyId, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), body.toString('base64url')].join('.');
    assert.equal(box.decrypt(v1), 'stored by an older Herald');
    // The new key is not that SHA-256: a v2 value does not open with it.
    const [, , v2iv, v2tag, v2body] = box.encrypt('new').split('.');
    const legacy = crypto.createDecipheriv('aes-256-gcm', key, Buffer.from(v2iv, 'base64url'));
    legacy.setAuthTag(Buffer.from(v2tag, 'base64url'));
    assert.throws(() => Buffer.concat([legacy.update(Buffer.from(v2body, 'base64url')), legacy.final()]));
    // HKDF-SHA256 with Herald's salt and purpose, computed here independently.
    const hkdf = Buffer.from(crypto.hkdfSync('sha256', secret, 'herald', 'secret box', 32));
    const opened = crypto.createDecipheriv('aes-256-gcm', hkdf, Buffer.from(v2iv, 'base64url'));
    opened.setAuthTag(Buffer.from(v2tag, 'base64url'));
    assert.equal(Buffer.concat([opened.update(Buffer.from(v2body, 'base64url')), opened.final()]).toString(), 'new');
  });

  it('lookup keys: equal values give equal keys; another purpose or secret gives another', () => {
    const box = createSecretBox('one-secret-of-forty-characters-012345678');
    assert.equal(box.lookupKey('https://hook.example/a', 'webhook-url'), box.lookupKey('https://hook.example/a', 'webhook-url'));
    assert.notEqual(box.lookupKey('https://hook.example/a', 'webhook-url'), box.lookupKey('https://hook.example/b', 'webhook-url'));
    assert.notEqual(box.lookupKey('https://hook.example/a', 'webhook-url'), box.lookupKey('https://hook.example/a', 'other'));
    assert.notEqual(
      box.lookupKey('https://hook.example/a', 'webhook-url'),
      createSecretBox('another-secret-of-forty-characters-0123').lookupKey('https://hook.example/a', 'webhook-url'),
    );
  });

  it('a weak HERALD_SECRET is refused at start, saying what is required', () => {
    for (const weak of ['secret', 'test-secret', 'a'.repeat(64), 'abababababababababababababababab']) {
      assert.throws(() => loadConfig({ HERALD_SECRET: weak }), /HERALD_SECRET is too weak: it must be at least 32 characters/, weak);
    }
    assert.equal(loadConfig({ HERALD_SECRET: 'K3v9x0Qm1Zr8TjW2pLs7Yd4Nc6Hb5Ea+' }).secret, 'K3v9x0Qm1Zr8TjW2pLs7Yd4Nc6Hb5Ea+');
    assert.equal(loadConfig({}).secret, undefined, 'unset: generated into the data folder');
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
    assert.equal(
      backoffMs(1, () => 0),
      1_000,
    );
    assert.equal(
      backoffMs(1, () => 1),
      2_000,
    );
    assert.equal(
      backoffMs(3, () => 1),
      8_000,
    );
    assert.equal(
      backoffMs(30, () => 1),
      300_000,
    );
  });
});
