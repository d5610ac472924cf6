/**
 * Signatures as the Standard Webhooks specification defines them, so receivers
 * can verify with any of its libraries: headers webhook-id, webhook-timestamp and
 * webhook-signature = "v1,<base64 HMAC-SHA256 of id.timestamp.body>".
 */
import crypto from 'node:crypto';

export function newWebhookSecret(): string {
  return 'whsec_' + crypto.randomBytes(24).toString('base64');
}

function keyOf(secret: string): Buffer {
  return Buffer.from(secret.startsWith('whsec_') ? secret.slice(6) : secret, 'base64');
}

export function signatureHeaders(secret: string, id: string, body: string, now = Date.now()): Record<string, string> {
  const timestamp = Math.floor(now / 1000).toString();
  const mac = crypto.createHmac('sha256', keyOf(secret)).update(`${id}.${timestamp}.${body}`).digest('base64');
  return { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': `v1,${mac}` };
}

/** Verifies headers produced by signatureHeaders (used by tests and documented for receivers). */
export function verifySignature(secret: string, headers: Record<string, string | undefined>, body: string): boolean {
  const { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': signature } = headers;
  if (!id || !timestamp || !signature) return false;
  const expected = crypto.createHmac('sha256', keyOf(secret)).update(`${id}.${timestamp}.${body}`).digest();
  return signature.split(' ').some((part) => {
    const [version, value] = part.split(',');
    if (version !== 'v1' || !value) return false;
    const given = Buffer.from(value, 'base64');
    return given.length === expected.length && crypto.timingSafeEqual(given, expected);
  });
}
