/**
 * Secrets at rest: SHA-256 for lookups of random tokens, AES-256-GCM (with a key
 * id) for values that must be read back (revealable API keys, network tokens,
 * webhook secrets and URLs), keys derived from HERALD_SECRET with HKDF.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export interface SecretBox {
  encrypt(plain: string): string;
  decrypt(sealed: string): string;
  /** A keyed hash for finding a sealed value again (equal values, equal hashes) without storing it in the clear. */
  lookupKey(value: string, purpose: string): string;
}

export function sha256(value: string): string {
  return crypto.createHash('sha256').update(value).digest('hex');
}

/** A random token: `prefix` followed by 32 random bytes in base64url. */
export function randomToken(prefix = ''): string {
  return prefix + crypto.randomBytes(32).toString('base64url');
}

/** Where the embedded store's generated secret lives (HERALD_SECRET, when set, is used instead). */
export function secretFile(dataDir: string): string {
  return path.join(dataDir, 'secret.key');
}

/** HERALD_SECRET, or the data folder's generated secret; undefined when neither exists (nothing is generated). */
export function existingSecret(configured: string | undefined, dataDir: string): string | undefined {
  if (configured) return configured;
  try {
    return fs.readFileSync(secretFile(dataDir), 'utf8').trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    return undefined;
  }
}

/** Loads HERALD_SECRET, or the secret generated into the data folder on first start. */
export function resolveSecret(configured: string | undefined, dataDir: string): string {
  const existing = existingSecret(configured, dataDir);
  if (existing) return existing;
  const file = secretFile(dataDir);
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

/** What HERALD_SECRET must be at least: the key of everything sealed at rest. */
export const SECRET_RULE = 'at least 32 characters with at least 12 different ones (e.g. the output of "openssl rand -base64 32")';

/** Undefined when `secret` is strong enough, else what is wrong with it. */
export function weakSecret(secret: string): string | undefined {
  if (secret.length < 32 || new Set(secret).size < 12) return `HERALD_SECRET is too weak: it must be ${SECRET_RULE}`;
  return undefined;
}

/**
 * A sealed value this process's secret cannot open: sealed under another
 * HERALD_SECRET (or another data folder's secret.key), or damaged. Its message
 * names key ids only, never the secret.
 */
export class UnsealError extends Error {}

/** A 32-byte key for one purpose, derived from the secret with HKDF-SHA256 (RFC 5869). */
function derive(secret: string, purpose: string): Buffer {
  return Buffer.from(crypto.hkdfSync('sha256', secret, 'herald', purpose, 32));
}

interface Sealer {
  key: Buffer;
  keyId: string;
}

function sealer(key: Buffer): Sealer {
  return { key, keyId: crypto.createHash('sha256').update(key).digest('hex').slice(0, 8) };
}

/**
 * Sealed format: `v2.<keyId>.<iv>.<tag>.<ciphertext>`, parts in base64url, with a
 * key derived by HKDF. `v1` values (an older Herald's key, one SHA-256 of the
 * secret) still open; they are sealed anew as v2 whenever they are written again.
 */
export function createSecretBox(secret: string): SecretBox {
  const sealers = { v2: sealer(derive(secret, 'secret box')), v1: sealer(crypto.createHash('sha256').update(`herald:${secret}`).digest()) };
  return {
    encrypt(plain) {
      const { key, keyId } = sealers.v2;
      const iv = crypto.randomBytes(12);
      const cipher = crypto.createCipheriv('aes-256-gcm', key, iv);
      const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return ['v2', keyId, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), body.toString('base64url')].join('.');
    },
    decrypt(sealed) {
      const [version, kid, iv, tag, body] = sealed.split('.');
      const used = version === 'v1' || version === 'v2' ? sealers[version] : undefined;
      if (!used || !body) throw new UnsealError('not a sealed secret');
      if (kid !== used.keyId) throw new UnsealError(`secret was sealed with key ${kid}, but HERALD_SECRET is key ${used.keyId}`);
      const decipher = crypto.createDecipheriv('aes-256-gcm', used.key, Buffer.from(iv, 'base64url'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      try {
        return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
      } catch {
        throw new UnsealError(`secret sealed with key ${kid} is damaged: it does not open`);
      }
    },
    lookupKey(value, purpose) {
      return crypto
        .createHmac('sha256', derive(secret, `lookup:${purpose}`))
        .update(value)
        .digest('base64url');
    },
  };
}
