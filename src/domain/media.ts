/**
 * Uploaded media: streamed to a temporary file while the type is read from the
 * first bytes and the size cap is enforced, then moved into storage under a
 * random name. Nothing is kept when anything fails.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Transform, type Readable, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fileTypeFromBuffer } from 'file-type';
import type { Kysely } from 'kysely';
import type { Database, MediaRow } from '../db/schema.ts';
import { newId } from '../lib/ids.ts';
import type { MediaStorage } from '../media/storage.ts';
import { ApiError } from './errors.ts';
import type { MediaLookup } from './posts.ts';

const ACCEPTED: Record<string, 'image' | 'video'> = {
  'image/jpeg': 'image',
  'image/png': 'image',
  'image/gif': 'image',
  'image/webp': 'image',
  'image/avif': 'image',
  'image/bmp': 'image',
  'image/tiff': 'image',
  'video/mp4': 'video',
  'video/quicktime': 'video',
  'video/webm': 'video',
};
const SNIFF_BYTES = 4100;
/** URLs looked up per query (SQLite and PostgreSQL cap the parameters of one statement). */
const LOOKUP_SLICE = 500;

export interface StoredUpload {
  media: MediaRow;
  /** SHA-256 of the bytes and name, for Idempotency-Key comparison. */
  contentHash: string;
}

export function mediaView(row: MediaRow) {
  return {
    id: row.id,
    name: row.name,
    originalName: row.original_name,
    path: row.url,
    thumbnail: row.thumbnail_url,
    alt: row.alt,
    mimeType: row.mime_type,
    size: row.size,
    width: row.width,
    height: row.height,
    duration: row.duration,
  };
}

/** Reads the type from the first bytes, then holds the stream to that type's size cap. */
class SniffAndCap extends Transform {
  private head: Buffer[] = [];
  private headLength = 0;
  private cap: number;
  /** Bytes seen so far. */
  seen = 0;
  mime?: string;
  readonly hash = crypto.createHash('sha256');

  constructor(private readonly caps: { image: number; video: number }) {
    super();
    this.cap = Math.max(caps.image, caps.video);
  }

  private async decide(): Promise<void> {
    const head = Buffer.concat(this.head);
    const type = await fileTypeFromBuffer(head);
    const kind = type && ACCEPTED[type.mime];
    if (!type || !kind) {
      throw new ApiError(415, 'unsupported_media_type', `file: ${type ? `type ${type.mime} is` : 'this content is'} not accepted; upload JPEG, PNG, GIF, WebP, AVIF, BMP, TIFF, MP4, MOV or WebM`, [
        { path: 'file', message: 'unsupported file type (detected from its bytes)' },
      ]);
    }
    this.mime = type.mime;
    this.cap = this.caps[kind];
    this.checkCap();
    this.push(head);
    this.head = [];
  }

  private checkCap(): void {
    if (this.seen > this.cap) {
      throw new ApiError(413, 'file_too_large', `file: larger than the ${Math.round(this.cap / 1024 / 1024)} MB allowed for this type`, [
        { path: 'file', message: `must be at most ${this.cap} bytes` },
      ]);
    }
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.seen += chunk.length;
    this.hash.update(chunk);
    if (this.mime) {
      try {
        this.checkCap();
      } catch (err) {
        return done(err as Error);
      }
      return done(null, chunk);
    }
    this.head.push(chunk);
    this.headLength += chunk.length;
    if (this.headLength < SNIFF_BYTES) return done();
    this.decide().then(() => done(), done);
  }

  override _flush(done: (err?: Error | null) => void): void {
    if (this.mime) return done();
    if (this.headLength === 0) {
      return done(new ApiError(400, 'empty_file', 'file: is empty', [{ path: 'file', message: 'must not be empty' }]));
    }
    this.decide().then(() => done(), done);
  }
}

const EXTENSIONS: Record<string, string> = {
  'image/jpeg': 'jpg', 'image/png': 'png', 'image/gif': 'gif', 'image/webp': 'webp', 'image/avif': 'avif',
  'image/bmp': 'bmp', 'image/tiff': 'tiff', 'video/mp4': 'mp4', 'video/quicktime': 'mov', 'video/webm': 'webm',
};

/** A display name that is safe to show: no folders, control characters or NULs. */
export function cleanName(name: string | undefined): string {
  const base = (name ?? '').split(/[\\/]/).pop() ?? '';
  const cleaned = base.replace(/[\u0000-\u001f\u007f]/g, '').trim().slice(0, 255);
  return cleaned || 'upload';
}

/** An upload's fingerprint for Idempotency-Key: its bytes (already in `hash`) and its cleaned name. */
function fingerprint(hash: crypto.Hash, originalName: string | undefined): string {
  return hash.update(`\0${cleanName(originalName)}`).digest('hex');
}

/** The fingerprint `store` computes, without storing anything (for a repeated Idempotency-Key). */
export async function uploadFingerprint(stream: Readable, originalName: string | undefined): Promise<string> {
  const hash = crypto.createHash('sha256');
  for await (const chunk of stream) hash.update(chunk as Buffer);
  return fingerprint(hash, originalName);
}

export class Media implements MediaLookup {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly storage: MediaStorage,
    private readonly options: { uploadUrl: string; maxImageBytes: number; maxVideoBytes: number },
  ) {}

  async store(accountId: string, source: Readable, originalName: string | undefined): Promise<StoredUpload> {
    const id = newId();
    const temp = path.join(this.storage.tempDir, id);
    const sniff = new SniffAndCap({ image: this.options.maxImageBytes, video: this.options.maxVideoBytes });
    try {
      await pipeline(source, sniff, fs.createWriteStream(temp, { mode: 0o640 }));
      const mime = sniff.mime!;
      const now = new Date();
      const name = `${id}.${EXTENSIONS[mime]}`;
      const key = `${now.getUTCFullYear()}/${String(now.getUTCMonth() + 1).padStart(2, '0')}/${name}`;
      await this.storage.put(temp, key);
      const row: MediaRow = {
        id,
        account_id: accountId,
        name,
        original_name: cleanName(originalName),
        storage_key: key,
        url: `${this.options.uploadUrl}/${key}`,
        mime_type: mime,
        size: sniff.seen,
        width: null,
        height: null,
        duration: null,
        alt: null,
        thumbnail_url: null,
        created_at: now.getTime(),
        deleted_at: null,
      };
      await this.db.insertInto('media').values(row).execute();
      return { media: row, contentHash: fingerprint(sniff.hash, originalName) };
    } catch (err) {
      await fs.promises.rm(temp, { force: true });
      throw err;
    }
  }

  async byUrls(accountId: string, urls: string[]) {
    const found = new Map<string, { id: string; url: string; mime_type: string }>();
    // In slices: one body may name tens of thousands of URLs, more than a statement may bind.
    for (let start = 0; start < urls.length; start += LOOKUP_SLICE) {
      const rows = await this.db
        .selectFrom('media')
        .select(['id', 'url', 'mime_type'])
        .where('account_id', '=', accountId)
        .where('deleted_at', 'is', null)
        .where('url', 'in', urls.slice(start, start + LOOKUP_SLICE))
        .execute();
      for (const row of rows) found.set(row.url, row);
    }
    return found;
  }

  async byIds(ids: string[]): Promise<MediaRow[]> {
    if (ids.length === 0) return [];
    return this.db.selectFrom('media').selectAll().where('id', 'in', ids).execute();
  }
}
