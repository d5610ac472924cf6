/**
 * Serves stored media at the upload URL: the right Content-Type (from the
 * extension Herald gave the key), `X-Content-Type-Options: nosniff`, a year of
 * caching (keys are never reused) and byte ranges, which video players and the
 * networks that fetch media rely on. The same route serves the disk store and a
 * bucket without a public address (streamed through Herald).
 */
import crypto from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.ts';
import { sendError } from './errors.ts';
import { ApiError } from '../domain/errors.ts';
import { IMMUTABLE_CACHE } from '../media/s3-storage.ts';
import { checkKey, typeOfKey, type ByteRange, type MediaStorage } from '../media/storage.ts';

export async function registerUploads(app: FastifyInstance, config: Config, storage: MediaStorage): Promise<void> {
  // A bucket with its own public address (HERALD_S3_PUBLIC_URL) serves the files itself.
  if (storage.kind !== 'disk' && !config.uploadUrl.startsWith(config.publicUrl)) return;
  const prefix = new URL(config.uploadUrl).pathname.replace(/\/?$/, '/');
  app.route({
    method: ['GET', 'HEAD'],
    url: `${prefix}*`,
    schema: { hide: true },
    handler: async (request, reply) => {
      const key = (request.params as { '*': string })['*'];
      const missing = () => sendError(reply, new ApiError('not_found', 'This file does not exist'));
      try {
        checkKey(key);
      } catch {
        return missing();
      }
      const stat = await storage.stat(key);
      if (!stat) return missing();
      // Keys are never reused for other bytes, so the key is a strong validator.
      const etag = `"${crypto.createHash('sha256').update(key).digest('base64url').slice(0, 22)}"`;
      reply.header('x-content-type-options', 'nosniff').header('cache-control', IMMUTABLE_CACHE).header('accept-ranges', 'bytes').header('etag', etag);
      if (request.headers['if-none-match']?.split(',').some((tag) => tag.trim() === etag)) return reply.code(304).send();
      const range = parseRange(request.headers.range, stat.size);
      if (range === 'unsatisfiable') {
        return sendError(
          reply,
          new ApiError('range_not_satisfiable', `headers.range: outside the file's ${stat.size} bytes`, [], { 'content-range': `bytes */${stat.size}` }),
        );
      }
      reply.header('content-type', typeOfKey(key));
      if (range) reply.code(206).header('content-range', `bytes ${range.start}-${range.end}/${stat.size}`);
      const length = range ? range.end - range.start + 1 : stat.size;
      reply.header('content-length', length);
      if (request.method === 'HEAD' || length === 0) return reply.send();
      return reply.send(await storage.open(key, range ?? undefined));
    },
  });
}

/**
 * One range of `bytes=a-b`, `bytes=a-` or `bytes=-n`. Several ranges, or a header
 * that is not understood, get the whole file (as RFC 9110 allows).
 */
export function parseRange(header: string | undefined, size: number): ByteRange | 'unsatisfiable' | null {
  const match = header ? /^bytes=(\d*)-(\d*)$/.exec(header.trim()) : null;
  if (!match || (match[1] === '' && match[2] === '')) return null;
  let start: number;
  let end: number;
  if (match[1] === '') {
    const suffix = Number(match[2]);
    if (suffix === 0) return 'unsatisfiable';
    start = Math.max(0, size - suffix);
    end = size - 1;
  } else {
    start = Number(match[1]);
    end = match[2] === '' ? size - 1 : Math.min(Number(match[2]), size - 1);
    if (match[2] !== '' && Number(match[2]) < start) return null;
  }
  if (start >= size) return 'unsatisfiable';
  return { start, end };
}
