/**
 * A full disk is not a fault of Herald's: a write that fails for lack of space
 * is answered 503 with Retry-After (nothing was changed, the same request works
 * once space is freed), and readiness says so before the writes fail: the data
 * folder's filesystem (the embedded store, uploads on their way in) with less
 * than MIN_FREE_BYTES free, or a write that failed for lack of space a moment ago
 * (the only sign of a PostgreSQL server's full disk).
 */
import fs from 'node:fs';

/** Below this, the next upload (up to 10 MB for an image) or a database checkpoint may not fit. */
export const MIN_FREE_BYTES = 64 * 1024 ** 2;
/** Seconds a client is told to wait: space is freed by a person, not in a moment. */
export const DISK_FULL_RETRY_AFTER_SECONDS = 60;
/** How long readiness keeps reporting a write that failed for lack of space. */
const FULL_REPORTED_MS = 60_000;

/** ENOSPC and EDQUOT from the file system, SQLite's SQLITE_FULL, PostgreSQL's disk_full (53100). */
export function isDiskFull(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code === 'ENOSPC' || code === 'EDQUOT' || code === '53100' || code.startsWith('SQLITE_FULL'));
}

/** Free bytes for an unprivileged writer on the filesystem holding `folder`. */
async function freeBytes(folder: string): Promise<number> {
  const stats = await fs.promises.statfs(folder);
  return stats.bavail * stats.bsize;
}

function megabytes(bytes: number): string {
  return `${Math.floor(bytes / 1024 ** 2)} MB`;
}

export class DiskWatch {
  private fullAt?: number;

  constructor(
    private readonly folder: string,
    private readonly free: (folder: string) => Promise<number> = freeBytes,
  ) {}

  /** A write just failed for lack of space. */
  noteFull(now = Date.now()): void {
    this.fullAt = now;
  }

  /** 'ok', or why the disk cannot take writes. */
  async check(now = Date.now()): Promise<string> {
    if (this.fullAt !== undefined && now - this.fullAt < FULL_REPORTED_MS) {
      return `a write failed ${Math.round((now - this.fullAt) / 1000)} s ago: no space left on the disk`;
    }
    try {
      const free = await this.free(this.folder);
      if (free < MIN_FREE_BYTES) return `${megabytes(free)} free on the disk of ${this.folder}; Herald needs at least ${megabytes(MIN_FREE_BYTES)}`;
      return 'ok';
    } catch (err) {
      return `unknown: ${(err as Error).message}`;
    }
  }
}
