/**
 * Media in any S3-compatible bucket (AWS S3, MinIO, Cloudflare R2, Backblaze B2,
 * Garage...). Uploads are still checked in a local temporary file first; the
 * finished file is then streamed to the bucket in parts, so memory stays bounded
 * whatever the size. The SDK is loaded only when this store is configured.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import type { S3Client } from '@aws-sdk/client-s3';
import type { S3Config } from '../config.ts';
import { checkKey, typeOfKey, type ByteRange, type MediaStorage, type StoredObject } from './storage.ts';

/** Files are immutable under their random keys, so caches may keep them for a year. */
export const IMMUTABLE_CACHE = 'public, max-age=31536000, immutable';
/** Parts of 8 MiB, two in flight: at most about 16 MiB of a file in memory. */
const PART_BYTES = 8 * 1024 * 1024;
const PARTS_IN_FLIGHT = 2;

type Sdk = typeof import('@aws-sdk/client-s3');

export class S3Storage implements MediaStorage {
  readonly kind = 's3';
  readonly tempDir: string;

  private constructor(
    private readonly sdk: Sdk,
    private readonly client: S3Client,
    private readonly bucket: string,
    private readonly prefix: string,
    readonly root: string,
  ) {
    this.tempDir = path.join(root, '.tmp');
    fs.mkdirSync(this.tempDir, { recursive: true });
  }

  static async create(config: S3Config, localRoot: string): Promise<S3Storage> {
    const sdk = await import('@aws-sdk/client-s3');
    const client = new sdk.S3Client({
      region: config.region,
      endpoint: config.endpoint,
      forcePathStyle: config.forcePathStyle,
      credentials: config.accessKeyId && config.secretAccessKey ? { accessKeyId: config.accessKeyId, secretAccessKey: config.secretAccessKey } : undefined,
      // Many S3-compatible servers do not understand the SDK's default checksum trailers
      // (aws-chunked bodies) and would store the framing as part of the file.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
    return new S3Storage(sdk, client, config.bucket, config.prefix, localRoot);
  }

  private objectKey(key: string): string {
    return this.prefix + checkKey(key);
  }

  async put(tempFile: string, key: string, contentType: string): Promise<void> {
    const { Upload } = await import('@aws-sdk/lib-storage');
    try {
      const upload = new Upload({
        client: this.client,
        partSize: PART_BYTES,
        queueSize: PARTS_IN_FLIGHT,
        params: {
          Bucket: this.bucket,
          Key: this.objectKey(key),
          Body: fs.createReadStream(tempFile),
          ContentType: contentType,
          CacheControl: IMMUTABLE_CACHE,
        },
      });
      await upload.done();
    } finally {
      await fs.promises.rm(tempFile, { force: true });
    }
  }

  async open(key: string, range?: ByteRange): Promise<Readable> {
    try {
      const answer = await this.client.send(
        new this.sdk.GetObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key), Range: range ? `bytes=${range.start}-${range.end}` : undefined }),
      );
      return answer.Body as Readable;
    } catch (err) {
      throw notFoundAsEnoent(err);
    }
  }

  async stat(key: string): Promise<StoredObject | null> {
    try {
      const head = await this.client.send(new this.sdk.HeadObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key) }));
      return { size: Number(head.ContentLength ?? 0), contentType: head.ContentType || typeOfKey(key) };
    } catch (err) {
      if ((notFoundAsEnoent(err) as { code?: string }).code === 'ENOENT') return null;
      throw err;
    }
  }

  async remove(key: string): Promise<void> {
    await this.client.send(new this.sdk.DeleteObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key) }));
  }

  async close(): Promise<void> {
    this.client.destroy();
  }
}

function notFoundAsEnoent(err: unknown): unknown {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number }; code?: string };
  if (e.name === 'NoSuchKey' || e.name === 'NotFound' || e.$metadata?.httpStatusCode === 404) return Object.assign(new Error('not stored'), { code: 'ENOENT' });
  return err;
}
