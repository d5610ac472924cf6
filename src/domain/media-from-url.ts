/**
 * A file fetched from a URL someone gave Herald into the account's media
 * library: POST /upload-from-url, the MCP tool upload_media_from_url, the media
 * URLs of a CSV import and the images of feed items. The fetch goes through the
 * outbound guard (private addresses refused, also after redirects and DNS)
 * under one deadline; the library's own checks (type read from the bytes, size
 * caps, damage) apply as to an upload. Every refusal names the field `url`.
 */
import { Readable } from 'node:stream';
import type { Config } from '../config.ts';
import type { MediaRow } from '../db/schema.ts';
import { deadline } from '../lib/deadline.ts';
import { OutboundRefused, type OutboundGuard } from '../lib/outbound.ts';
import { ApiError, invalidField } from './errors.ts';
import { describeBytes, type Media, type MediaKind } from './media.ts';

export interface MediaFromUrlDeps {
  media: Media;
  outbound: OutboundGuard;
  config: Pick<Config, 'fetchTimeoutMs'>;
}

export interface FromUrlOptions {
  /** Only these kinds are taken (a feed item's image: images); any other type is refused before it is kept. */
  kinds?: readonly MediaKind[];
  /** Sent with the request (what is asked for, and who asks). */
  headers?: Record<string, string>;
}

/** Fetches the file at `url` into the account's library; an ApiError naming `url` when it cannot. */
export async function storeFromUrl(deps: MediaFromUrlDeps, accountId: string, url: string, options: FromUrlOptions = {}): Promise<MediaRow> {
  const largest = deps.media.largestBytes(options.kinds);
  // One deadline for the whole fetch: connecting, redirects and every byte of the body.
  const limit = deadline(deps.config.fetchTimeoutMs);
  try {
    let response;
    try {
      response = await deps.outbound.fetch(url, { signal: limit.signal, headers: options.headers });
    } catch (err) {
      throw fetchFailure(err, limit.signal);
    }
    if (!response.ok || !response.body) {
      await response.body?.cancel().catch(() => {});
      throw invalidField('url', `the server answered ${response.status}`, 'url_unreachable');
    }
    const declared = Number(response.headers.get('content-length'));
    if (declared > largest) {
      await response.body.cancel().catch(() => {});
      throw new ApiError('file_too_large', `url: the file is ${describeBytes(declared)}, larger than the ${describeBytes(largest)} allowed`, [
        { path: 'url', message: `must point to a file of at most ${largest} bytes` },
      ]);
    }
    const body = Readable.fromWeb(response.body as never);
    try {
      const stored = await deps.media.store(accountId, body, fileNameOf(response.url || url), {
        declaredBytes: Number.isFinite(declared) ? declared : undefined,
        fingerprint: false,
        kinds: options.kinds,
      });
      return stored.media;
    } catch (err) {
      // Our own refusals (type, size, damage) stand; a failure of the download itself is the URL's.
      if (err instanceof ApiError) throw aboutUrl(err);
      if (body.errored || limit.signal.aborted) throw fetchFailure(err, limit.signal);
      throw err;
    }
  } finally {
    limit.clear();
  }
}

/** Why a fetch was refused, without the field name: for a note that is not an API answer (a feed item's). */
export function refusalReason(err: unknown): string {
  return err instanceof ApiError ? err.message.replace(/^url: /, '') : (err as Error).message;
}

/** The last path segment, as a display name; a malformed escape keeps the raw text. */
function fileNameOf(url: string): string {
  const last = new URL(url).pathname.split('/').pop() ?? '';
  try {
    return decodeURIComponent(last);
  } catch {
    return last;
  }
}

/** A refusal of the fetched file names the field the user sent: `url`. */
function aboutUrl(err: ApiError): ApiError {
  const errors = err.errors.map((e) => (e.path === 'file' ? { path: 'url', message: `(the file it points to) ${e.message}` } : e));
  return new ApiError(err.code, err.message.replace(/^file: /, 'url: the file it points to: '), errors, err.headers);
}

/** The user's answer for a fetch that did not complete. */
function fetchFailure(err: unknown, signal: AbortSignal): ApiError {
  if (err instanceof OutboundRefused) return invalidField('url', err.reason, 'url_refused');
  const cause = (err as { cause?: unknown }).cause;
  if (cause instanceof OutboundRefused) return invalidField('url', cause.reason, 'url_refused');
  if (signal.aborted || (err as Error).name === 'TimeoutError' || (cause as { code?: string })?.code === 'UND_ERR_CONNECT_TIMEOUT') {
    return invalidField('url', 'the server did not send the file in time', 'url_timeout');
  }
  return invalidField('url', 'could not be fetched (connection failed or broke off)', 'url_unreachable');
}
