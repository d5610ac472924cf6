/**
 * Where uploaded files live. The disk store keeps them under the data folder; the
 * S3 store (s3-storage.ts) in any S3-compatible bucket. Keys are random, never
 * user-given names. Files are first written to `tempDir` on the local disk (the
 * type, size and metadata are checked there), then handed to the store.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';

/** A byte range, both ends included, as in an HTTP Range header. */
export interface ByteRange {
  start: number;
  end: number;
}

export interface StoredObject {
  size: number;
  contentType: string;
}

export interface MediaStorage {
  /** Moves a finished temporary file into the store under `key` (the temporary file is gone afterwards). */
  put(tempFile: string, key: string, contentType: string): Promise<void>;
  /** Streams the stored bytes, or a range of them. Rejects with code 'ENOENT' when the key is not stored. */
  open(key: string, range?: ByteRange): Promise<Readable>;
  /** Size and type of a stored object, or null when the key is not stored. */
  stat(key: string): Promise<StoredObject | null>;
  remove(key: string): Promise<void>;
  /** 'disk' files are served from `root` by the HTTP server; others through `open`. */
  readonly kind: 'disk' | 's3';
  /** The local media folder: the stored files (disk) or only temporary ones (S3). */
  readonly root: string;
  /** A folder for temporary files on the local disk, inside `root`. */
  readonly tempDir: string;
  close(): Promise<void>;
}

/** The Content-Type of a stored key, from the extension Herald gave it (never from a user's name). */
export const TYPES_BY_EXTENSION: Record<string, string> = {
  jpg: 'image/jpeg',
  png: 'image/png',
  gif: 'image/gif',
  webp: 'image/webp',
  avif: 'image/avif',
  bmp: 'image/bmp',
  tiff: 'image/tiff',
  mp4: 'video/mp4',
  mov: 'video/quicktime',
  webm: 'video/webm',
};

export function typeOfKey(key: string): string {
  return TYPES_BY_EXTENSION[path.extname(key).slice(1).toLowerCase()] ?? 'application/octet-stream';
}

/** Keys are made by Herald; this refuses anything else before it reaches a file system or bucket. */
export function checkKey(key: string): string {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*(\/[A-Za-z0-9][A-Za-z0-9._-]*)*$/.test(key) || key.includes('..')) {
    throw Object.assign(new Error(`not a storage key: ${JSON.stringify(key)}`), { code: 'ENOENT' });
  }
  return key;
}

export class DiskStorage implements MediaStorage {
  readonly kind = 'disk';
  readonly tempDir: string;

  constructor(readonly root: string) {
    this.tempDir = path.join(root, '.tmp');
    fs.mkdirSync(this.tempDir, { recursive: true });
  }

  private file(key: string): string {
    return path.join(this.root, checkKey(key));
  }

  async put(tempFile: string, key: string): Promise<void> {
    const target = this.file(key);
    await fs.promises.mkdir(path.dirname(target), { recursive: true });
    await fs.promises.rename(tempFile, target);
  }

  async open(key: string, range?: ByteRange): Promise<Readable> {
    const handle = await fs.promises.open(this.file(key), 'r');
    return handle.createReadStream(range ? { start: range.start, end: range.end } : {});
  }

  async stat(key: string): Promise<StoredObject | null> {
    try {
      const stats = await fs.promises.stat(this.file(key));
      return stats.isFile() ? { size: stats.size, contentType: typeOfKey(key) } : null;
    } catch {
      return null;
    }
  }

  async remove(key: string): Promise<void> {
    await fs.promises.rm(this.file(key), { force: true });
  }

  async close(): Promise<void> {}
}
