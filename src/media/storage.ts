/**
 * Where uploaded files live. The disk store keeps them under the data folder and
 * they are served at {upload_url}/{key}; keys are random, never user-given names.
 */
import fs from 'node:fs';
import path from 'node:path';

export interface MediaStorage {
  /** Moves a finished temporary file into the store under `key`. */
  put(tempFile: string, key: string): Promise<void>;
  remove(key: string): Promise<void>;
  /** A folder for temporary files on the same file system. */
  tempDir: string;
}

export class DiskStorage implements MediaStorage {
  readonly tempDir: string;

  constructor(readonly root: string) {
    this.tempDir = path.join(root, '.tmp');
    fs.mkdirSync(this.tempDir, { recursive: true });
  }

  async put(tempFile: string, key: string): Promise<void> {
    const target = path.join(this.root, key);
    await fs.promises.mkdir(path.dirname(target), { recursive: true });
    await fs.promises.rename(tempFile, target);
  }

  async remove(key: string): Promise<void> {
    await fs.promises.rm(path.join(this.root, key), { force: true });
  }
}
