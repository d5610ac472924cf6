import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ApiError, invalidField } from '../../domain/errors.ts';
import { describeBytes, mediaView, uploadFingerprint } from '../../domain/media.ts';
import { storeFromUrl } from '../../domain/media-from-url.ts';
import { idempotencyKey, idempotent, jsonBodyHash } from '../idempotent.ts';
import type { Services } from '../../services.ts';
import { publicRoutes } from '../../contract/routes/public.ts';
import { serve } from '../serve.ts';

const { routes } = publicRoutes;
const tags = ['media'];
/** After refusing an upload, how long the client may take to read the answer before the connection is dropped. */
const CUT_OFF_GRACE_MS = 2_000;

export function mediaRoutes(services: Services): FastifyPluginAsyncZod {
  const { media, config } = services;
  const largest = Math.max(config.maxImageBytes, config.maxVideoBytes);
  return async (app) => {
    serve(app, routes.upload, {
      tags,
      summary: 'Upload a file (multipart/form-data, one part named "file")',
      description:
        `The type is read from the bytes, not from the name: JPEG, PNG, GIF, WebP, AVIF, BMP, TIFF (at most ${describeBytes(config.maxImageBytes)}), ` +
        `MP4, MOV, WebM (at most ${describeBytes(config.maxVideoBytes)}). Accepts an Idempotency-Key header.`,
      consumes: ['multipart/form-data'],
      handler: async (request, reply) => {
        try {
          return await receiveUpload(request, reply);
        } catch (err) {
          // The rest of a refused body (a 1 GB file over the cap) is not read: the connection ends.
          if (!request.raw.complete) cutOff(request, reply);
          throw err;
        }
      },
    });

    async function receiveUpload(request: FastifyRequest, reply: FastifyReply) {
      if (!request.isMultipart()) {
        throw new ApiError('not_multipart', 'body: send multipart/form-data with one file part named "file"', [
          { path: 'body', message: 'must be multipart/form-data' },
        ]);
      }
      const declared = Number(request.headers['content-length']);
      if (declared > largest + 64 * 1024) {
        throw new ApiError('file_too_large', `file: larger than the ${describeBytes(largest)} allowed`, [
          { path: 'file', message: `must be at most ${largest} bytes` },
        ]);
      }
      const part = await request
        .file({ limits: { fileSize: largest + 1, files: 1, fields: 20, parts: 21 } })
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
            const stored = await media.store(request.principal.accountId, part.file, part.filename, { fingerprint: idempotencyKey(request) !== undefined });
            return { status: 201, body: mediaView(stored.media), hash: stored.contentHash };
          },
          () => uploadFingerprint(part.file, part.filename),
        );
      } catch (err) {
        // The part's own stream failed: the body is malformed or cut short, the client's fault.
        throw part.file.errored ? asMultipartError(err) : err;
      }
    }

    serve(app, routes.uploadFromUrl, {
      tags,
      summary: 'Upload a file fetched from a public http(s) URL',
      description:
        'Private, loopback, link-local, CGNAT, multicast and metadata addresses are refused, also after redirects and DNS. ' +
        'The same types and size caps as /upload apply. Accepts an Idempotency-Key header.',
      handler: async (request, reply) => {
        const hash = jsonBodyHash(request);
        return idempotent(services, request, reply, 'POST /upload-from-url', hash, async () => ({
          status: 201,
          body: mediaView(await storeFromUrl(services, request.principal.accountId, request.body.url)),
        }));
      },
    });

    serve(app, routes.media, {
      tags,
      summary: 'The media library: files uploaded by this account, newest first (page counts from 0)',
      handler: async (request) => {
        const found = await media.page(request.principal.accountId, request.query.page, request.query.limit, request.query.tag);
        return { ...found, media: found.media.map(mediaView) };
      },
    });

    serve(app, routes.deleteMedia, {
      tags,
      summary: 'Delete a file, its thumbnail and converted copies; refused (409) while a scheduled post or a series still to come uses it',
      handler: async (request) => {
        const removed = await media.remove(request.principal.accountId, request.params.id);
        return { id: removed.id, deleted: true as const };
      },
    });
  };
}

/**
 * Answers, then closes the connection instead of reading the rest of the body.
 * The socket is half-closed first so the client can read the answer; it is
 * dropped after a grace period if the client keeps sending.
 */
export function cutOff(request: FastifyRequest, reply: FastifyReply): void {
  reply.header('connection', 'close');
  const socket = request.raw.socket;
  reply.raw.once('finish', () => {
    request.raw.unpipe();
    request.raw.pause();
    setTimeout(() => socket.destroy(), CUT_OFF_GRACE_MS).unref();
  });
}

/** Parser errors carry no status; they mean the multipart body is malformed (no boundary, cut short...). */
function asMultipartError(err: unknown): unknown {
  if (err instanceof ApiError || typeof (err as { statusCode?: unknown }).statusCode === 'number') return err;
  return new ApiError('invalid_multipart', `body: is not valid multipart/form-data (${(err as Error).message})`, [
    { path: 'body', message: 'must be complete multipart/form-data with a boundary' },
  ]);
}
