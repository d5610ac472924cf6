import { Readable } from 'node:stream';
import { z } from 'zod';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ApiError, invalidField } from '../../domain/errors.ts';
import { mediaView, uploadFingerprint } from '../../domain/media.ts';
import { OutboundRefused } from '../../lib/outbound.ts';
import { idempotent, jsonBodyHash } from '../idempotent.ts';
import type { Services } from '../../app.ts';
import { errorBody as errorSchema, mediaObject } from './schemas.ts';

const tags = ['media'];
const errors = { 400: errorSchema, 401: errorSchema, 413: errorSchema, 415: errorSchema };
const FETCH_TIMEOUT_MS = 60_000;

export function mediaRoutes(services: Services): FastifyPluginAsyncZod {
  const { media, config, outbound } = services;
  return async (app) => {
    app.post('/upload', {
      schema: {
        tags,
        summary: 'Upload a file (multipart/form-data, one part named "file")',
        description: 'The type is read from the bytes, not from the name. Accepts an Idempotency-Key header.',
        consumes: ['multipart/form-data'],
        response: { 201: mediaObject, ...errors },
      },
      handler: async (request, reply) => {
        if (!request.isMultipart()) {
          throw new ApiError(415, 'not_multipart', 'body: send multipart/form-data with one file part named "file"', [{ path: 'body', message: 'must be multipart/form-data' }]);
        }
        const part = await request
          .file({ limits: { fileSize: Math.max(config.maxImageBytes, config.maxVideoBytes) + 1, files: 1, fields: 20, parts: 21 } })
          .catch((err: unknown) => Promise.reject(asMultipartError(err)));
        if (!part) throw invalidField('file', 'is required: a multipart part named "file"');
        if (part.fieldname !== 'file') throw invalidField(part.fieldname, 'unexpected part; the file part must be named "file"');
        try {
          return await idempotent(
            services,
            request,
            reply,
            'POST /upload',
            null,
            async () => {
              const stored = await media.store(request.principal.accountId, part.file, part.filename);
              return { status: 201, body: mediaView(stored.media), hash: stored.contentHash };
            },
            () => uploadFingerprint(part.file, part.filename),
          );
        } catch (err) {
          // The part's own stream failed: the body is malformed or cut short, the client's fault.
          throw part.file.errored ? asMultipartError(err) : err;
        }
      },
    });

    app.post('/upload-from-url', {
      schema: {
        tags,
        summary: 'Upload a file fetched from a public http(s) URL',
        description: 'Private, loopback and link-local targets are refused, also after redirects and DNS. Accepts an Idempotency-Key header.',
        body: z.object({ url: z.string().min(1).max(2048) }),
        response: { 201: mediaObject, ...errors },
      },
      handler: async (request, reply) => {
        const hash = jsonBodyHash(request);
        return idempotent(services, request, reply, 'POST /upload-from-url', hash, async () => {
          const { url } = request.body;
          let response;
          try {
            response = await outbound.fetch(url, { signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) });
          } catch (err) {
            if (err instanceof OutboundRefused) throw invalidField('url', err.reason, 'url_refused');
            const timedOut = (err as Error).name === 'TimeoutError';
            throw invalidField('url', timedOut ? 'the server did not answer in time' : 'could not be fetched', timedOut ? 'url_timeout' : 'url_unreachable');
          }
          if (!response.ok || !response.body) {
            await response.body?.cancel();
            throw invalidField('url', `the server answered ${response.status}`, 'url_unreachable');
          }
          const name = decodeURIComponent(new URL(response.url || url).pathname.split('/').pop() ?? '');
          const stored = await media.store(request.principal.accountId, Readable.fromWeb(response.body as never), name);
          return { status: 201, body: mediaView(stored.media) };
        });
      },
    });
  };
}

/** Parser errors carry no status; they mean the multipart body is malformed (no boundary, cut short...). */
function asMultipartError(err: unknown): unknown {
  if (err instanceof ApiError || typeof (err as { statusCode?: unknown }).statusCode === 'number') return err;
  return new ApiError(400, 'invalid_multipart', `body: is not valid multipart/form-data (${(err as Error).message})`, [
    { path: 'body', message: 'must be complete multipart/form-data with a boundary' },
  ]);
}
