/** The Idempotency-Key header of creating requests: the domain's rules (src/domain/idempotency.ts) spoken in HTTP. */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { type Answer, fingerprint } from '../domain/idempotency.ts';
import type { Services } from '../services.ts';

export const REPLAY_HEADER = 'idempotent-replayed';

export function idempotencyKey(request: FastifyRequest): string | undefined {
  const raw = request.headers['idempotency-key'];
  return Array.isArray(raw) ? raw[0] : raw;
}

/** Fingerprint of a JSON request body as sent (before validation transformed it). */
export function jsonBodyHash(request: FastifyRequest): string {
  return fingerprint(request.rawJson);
}

/**
 * Runs a creating request under its Idempotency-Key, if the caller sent one; a
 * replayed answer carries the Idempotent-Replayed header. `hash` fingerprints the
 * request body; pass null when it is known only after the body was read
 * (uploads), have `run` return it then, and give `rehashForReplay`.
 */
export async function idempotent<T>(
  services: Services,
  request: FastifyRequest,
  reply: FastifyReply,
  route: string,
  hash: string | null,
  run: () => Promise<Answer<T>>,
  rehashForReplay?: () => Promise<string>,
): Promise<FastifyReply> {
  const answer = await services.idempotency.once(request.principal.accountId, idempotencyKey(request), route, hash, run, rehashForReplay);
  if (answer.replayed) reply.header(REPLAY_HEADER, 'true');
  return reply.code(answer.status).send(answer.body);
}
