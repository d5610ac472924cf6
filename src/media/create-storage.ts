/** Picks the media store from the configuration: the data folder, or an S3-compatible bucket. */
import path from 'node:path';
import type { Config } from '../config.ts';
import { S3Storage } from './s3-storage.ts';
import { DiskStorage, type MediaStorage } from './storage.ts';

export async function createStorage(config: Pick<Config, 'dataDir' | 's3'>): Promise<MediaStorage> {
  const local = path.join(config.dataDir, 'uploads');
  return config.s3 ? S3Storage.create(config.s3, local) : new DiskStorage(local);
}
