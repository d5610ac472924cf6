/**
 * Secrets at rest: SHA-256 for lookups, AES-256-GCM (with a key id) for values
 * that must be read back (revealable API keys, network tokens, webhook secrets).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export interface SecretBox {
  encrypt(plain: string): string;
  decrypt(sealed: string): string;
}

export function sha256(value: string): string {
  return crypto.createHash('sha256').update(value).digest('hex');
}

/** A random token: `prefix` followed by 32 random bytes in base64url. */
export function randomToken(prefix = ''): string {
  return prefix + crypto.randomBytes(32).toString('base64url');
}

/** Loads HERALD_SECRET, or the secret generated into the data folder on first start. */
export function resolveSecret(configured: string | undefined, dataDir: string): string {
  if (configured) return configured;
  const file = path.join(dataDir, 'secret.key');
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  fs.mkdirSync(dataDir, { recursive: true });
  const generated = crypto.randomBytes(32).toString('base64url');
  try {
    fs.writeFileSync(file, generated + '\n', { mode: 0o600, flag: 'wx' });
    return generated;
  } catch (err) {
    // Another process created it first: use theirs.
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return fs.readFileSync(file, 'utf8').trim();
    throw err;
  }
}

/** Sealed format: `v1.<keyId>.<iv>.<tag>.<ciphertext>`, parts in base64url. */
export function createSecretBox(secret: string): SecretBox {
  const key = crypto.createHash('sha256').update(`herald:${secret}`).digest();
  const keyId = crypto.createHash('sha256').update(key).digest('hex').slice(0, 8);
  return {
    encrypt(plain) {
      const iv = crypto.randomBytes(12);
      const cipher = crypto.createCipheriv('aes-256-gcm', key, iv);
      const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return ['v1', keyId, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), body.toString('base64url')].join('.');
    },
    decrypt(sealed) {
      const [version, kid, iv, tag, body] = sealed.split('.');
      if (version !== 'v1' || !body) throw new Error('not a sealed secret');
      if (kid !== keyId) throw new Error(`secret was sealed with key ${kid}, but HERALD_SECRET is key ${keyId}`);
      const decipher = crypto.createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
    },
  };
}
