/**
 * Media bytes for networks that take uploads in one request (multipart): the
 * size is checked against the network's limit before anything is read, so an
 * oversized file fails with the limit in the message instead of a network error.
 */
import type { MediaRef } from '../types.ts';
import { PublishError } from '../errors.ts';

function megabytes(bytes: number): string {
  return `${Math.round((bytes / 1024 / 1024) * 10) / 10} MB`;
}

/** Refuses media over `maxBytes` (the network's own limit for this kind of upload). */
export function checkMediaSize(media: MediaRef, maxBytes: number, network: string): void {
  if (media.size > maxBytes) {
    throw new PublishError('refused', `${network} accepts files up to ${megabytes(maxBytes)}; ${mediaFilename(media)} is ${megabytes(media.size)}`);
  }
}

/** Reads the whole file, refusing it when it is over `maxBytes`. */
export async function readMedia(media: MediaRef, maxBytes: number, network: string): Promise<Buffer> {
  checkMediaSize(media, maxBytes, network);
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of await media.open()) {
    total += chunk.length;
    // The stored size is what was checked; a file that grew since is refused all the same.
    if (total > maxBytes) throw new PublishError('refused', `${network} accepts files up to ${megabytes(maxBytes)}; ${mediaFilename(media)} is larger`);
    chunks.push(Buffer.from(chunk));
  }
  return Buffer.concat(chunks);
}

/** The file name Herald gave the media (the last part of its URL), for Content-Disposition. */
export function mediaFilename(media: MediaRef): string {
  try {
    const name = decodeURIComponent(new URL(media.url).pathname.split('/').pop() ?? '');
    if (name) return name;
  } catch {
    /* fall through to the id */
  }
  return `${media.id}.${media.mimeType.split('/')[1] ?? 'bin'}`;
}

/** The bytes as a Blob part for FormData, with the media's type. */
export async function mediaBlob(media: MediaRef, maxBytes: number, network: string): Promise<Blob> {
  return new Blob([new Uint8Array(await readMedia(media, maxBytes, network))], { type: media.mimeType });
}
