/** Runs a creating request under its Idempotency-Key, if the caller sent one. */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { mismatch } from '../domain/idempotency.ts';
import { sha256 } from '../lib/secrets.ts';
import type { Services } from '../app.ts';

export const REPLAY_HEADER = 'idempotent-replayed';

export function idempotencyKey(request: FastifyRequest): string | undefined {
  const raw = request.headers['idempotency-key'];
  return Array.isArray(raw) ? raw[0] : raw;
}

/** Fingerprint of a JSON request body as sent (before validation transformed it). */
export function jsonBodyHash(request: FastifyRequest): string {
  return sha256(JSON.stringify(request.rawJson ?? null));
}

/**
 * `hash` fingerprints the request body; pass null when it is known only after
 * the body was read (uploads), and give `finish` the hash then.
 */
export async function idempotent<T>(
  services: Services,
  request: FastifyRequest,
  reply: FastifyReply,
  route: string,
  hash: string | null,
  run: () => Promise<{ status: number; body: T; hash?: string }>,
  rehashForReplay?: () => Promise<string>,
): Promise<FastifyReply> {
  const key = idempotencyKey(request);
  if (key === undefined) {
    const { status, body } = await run();
    return reply.code(status).send(body);
  }
  const { accountId } = request.principal;
  const reservation = await services.idempotency.reserve(accountId, key, route, hash);
  if (reservation.kind === 'replay') {
    if (hash === null && rehashForReplay && (await rehashForReplay()) !== reservation.requestHash) throw mismatch();
    return reply.code(reservation.statusCode).header(REPLAY_HEADER, 'true').send(reservation.body);
  }
  try {
    const { status, body, hash: lateHash } = await run();
    await services.idempotency.complete(accountId, key, hash ?? lateHash ?? null, status, body);
    return reply.code(status).send(body);
  } catch (err) {
    await services.idempotency.release(accountId, key);
    throw err;
  }
}
