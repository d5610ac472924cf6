/**
 * Checks a signed request the way a receiver does, with the Standard Webhooks
 * reference library (not Herald's own signing code): the secret's key decoding,
 * the signed content and the timestamp window are the library's.
 */
import type http from 'node:http';
import { Webhook } from 'standardwebhooks';

export function verifiedByStandardWebhooks(secret: string, headers: http.IncomingHttpHeaders, body: string): boolean {
  const only = (name: string) => String(headers[name] ?? '');
  try {
    new Webhook(secret).verify(body, {
      'webhook-id': only('webhook-id'),
      'webhook-timestamp': only('webhook-timestamp'),
      'webhook-signature': only('webhook-signature'),
    });
    return true;
  } catch {
    return false;
  }
}
