import type { FastifyReply } from 'fastify';

/**
 * Answers with text that is already JSON (built by the database or kept
 * serialised in a cache), so Fastify's serialiser does not run over it again.
 */
export function sendJsonText(reply: FastifyReply, text: string): FastifyReply {
  return reply.type('application/json; charset=utf-8').send(text as never);
}
