/**
 * The MCP tools' idempotency_key argument: the same store and rules as the public
 * API's Idempotency-Key header (src/domain/idempotency.ts). A repeat with the same
 * arguments answers the first result again, marked `replayed`, and creates nothing.
 */
import { z } from 'zod';
import { fingerprint, KEY_MAX_LENGTH, KEY_PATTERN } from '../../domain/idempotency.ts';
import type { Services } from '../../services.ts';

export const idempotencyKeyArgument = z
  .string()
  .min(1)
  .max(KEY_MAX_LENGTH)
  .regex(KEY_PATTERN, 'must be 1 to 255 visible ASCII characters (no spaces)')
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
  // A tool answers no HTTP status of its own: 200 is stored as the status of every call.
  const answer = await services.idempotency.once(accountId, key, operation, fingerprint(args), async () => ({ status: 200, body: await run() }));
  return answer.replayed ? { ...answer.body, replayed: true } : answer.body;
}
