/**
 * The MCP tools' idempotency_key argument: the same store and rules as the public
 * API's Idempotency-Key header (src/domain/idempotency.ts). A repeat with the same
 * arguments answers the first result again, marked `replayed`, and creates nothing.
 */
import { z } from 'zod';
import { sha256 } from '../../lib/secrets.ts';
import type { Services } from '../../app.ts';

export const idempotencyKeyArgument = z
  .string()
  .min(1)
  .max(255)
  .regex(/^[\x21-\x7e]+$/, 'must be 1 to 255 visible ASCII characters (no spaces)')
  .optional()
  .describe(
    'Optional. A key of your choosing (e.g. a UUID) that makes the call safe to repeat: sent again with the same key and the same arguments ' +
      'within 24 hours, the call creates nothing new and answers the first result again (with "replayed": true).',
  );

/** Runs `run` once per key: the first call's result is stored; a repeat gets it back, a repeat with other arguments is refused. */
export async function underIdempotencyKey(
  services: Services,
  accountId: string,
  key: string | undefined,
  operation: string,
  args: unknown,
  run: () => Promise<Record<string, unknown>>,
): Promise<Record<string, unknown>> {
  if (key === undefined) return run();
  const hash = sha256(JSON.stringify(args));
  const reservation = await services.idempotency.reserve(accountId, key, operation, hash);
  if (reservation.kind === 'replay') return { ...(reservation.body as Record<string, unknown>), replayed: true };
  try {
    const result = await run();
    await services.idempotency.complete(accountId, key, hash, 200, result);
    return result;
  } catch (err) {
    await services.idempotency.release(accountId, key);
    throw err;
  }
}
