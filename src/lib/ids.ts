import crypto from 'node:crypto';

/** Opaque, URL-safe, unguessable identifier (ids are never sequential, so they leak nothing). */
export function newId(): string {
  return crypto.randomUUID();
}

const alphabet = 'abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789';

/** A short code from an alphabet without look-alike characters. */
export function shortCode(length = 8): string {
  const bytes = crypto.randomBytes(length);
  let out = '';
  for (const b of bytes) out += alphabet[b % alphabet.length];
  return out;
}
