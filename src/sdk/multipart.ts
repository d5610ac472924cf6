/**
 * A multipart/form-data body with one part named "file", streamed from a path, a
 * buffer, a Blob or a stream, so a large video never sits whole in memory and
 * the caller can follow the bytes as they leave.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';

/** What `upload` accepts: a file path, bytes, a Blob, or a Node or web stream. */
export type UploadSource = string | Uint8Array | ArrayBuffer | Blob | NodeJS.ReadableStream | ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>;

export type ProgressListener = (sentBytes: number, totalBytes: number | undefined) => void;

interface OpenedSource {
  chunks: AsyncIterable<Uint8Array>;
  size?: number;
  filename: string;
}

async function open(file: UploadSource, filename?: string): Promise<OpenedSource> {
  if (typeof file === 'string') {
    const stat = await fs.promises.stat(file);
    if (!stat.isFile()) throw new Error(`${file} is not a file`);
    return { chunks: fs.createReadStream(file), size: stat.size, filename: filename ?? path.basename(file) };
  }
  if (file instanceof Uint8Array || file instanceof ArrayBuffer) {
    const bytes = file instanceof ArrayBuffer ? new Uint8Array(file) : file;
    return { chunks: [bytes] as unknown as AsyncIterable<Uint8Array>, size: bytes.byteLength, filename: filename ?? 'upload' };
  }
  if (typeof Blob !== 'undefined' && file instanceof Blob) {
    const named = (file as Blob & { name?: string }).name;
    return { chunks: Readable.fromWeb(file.stream() as never) as AsyncIterable<Uint8Array>, size: file.size, filename: filename ?? (named || 'upload') };
  }
  const streamPath = (file as { path?: unknown }).path;
  const fromStream = typeof streamPath === 'string' ? path.basename(streamPath) : undefined;
  const chunks = (typeof (file as ReadableStream).getReader === 'function' ? Readable.fromWeb(file as never) : file) as AsyncIterable<Uint8Array>;
  return { chunks, filename: filename ?? fromStream ?? 'upload' };
}

/** Quotes a file name for Content-Disposition; the server reads the type from the bytes, so the name is only a label. */
function quoted(name: string): string {
  return `"${name.replace(/[\r\n"\\]/g, '_')}"`;
}

export interface MultipartBody {
  contentType: string;
  body: AsyncIterable<Uint8Array>;
  filename: string;
}

export async function fileForm(file: UploadSource, filename: string | undefined, onProgress?: ProgressListener): Promise<MultipartBody> {
  const source = await open(file, filename);
  const boundary = `----herald${randomBytes(12).toString('hex')}`;
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename=${quoted(source.filename)}\r\nContent-Type: application/octet-stream\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  async function* body(): AsyncGenerator<Uint8Array> {
    yield head;
    let sent = 0;
    onProgress?.(0, source.size);
    for await (const chunk of source.chunks) {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      sent += bytes.byteLength;
      yield bytes;
      onProgress?.(sent, source.size);
    }
    yield tail;
  }
  return { contentType: `multipart/form-data; boundary=${boundary}`, body: body(), filename: source.filename };
}
