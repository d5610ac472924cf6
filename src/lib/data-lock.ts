/**
 * Who uses a data folder. One `herald start` per data folder: a second one beside the first would run a
 * second engine on the same embedded store without anyone meaning to. The lock
 * is a file holding the owner's pid, created atomically; a lock whose process is
 * gone (a crash, kill -9) is taken over. Every process that opens the embedded
 * store also leaves its pid in `users/`, so `herald move-store` can tell that
 * the store is in use (by a serve, a worker or a start) and refuse.
 */
import fs from 'node:fs';
import path from 'node:path';

const LOCK_FILE = 'herald.lock';

export type DataLock = { held: true; release(): void } | { held: false; owner: number };

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export function lockDataFolder(dataDir: string): DataLock {
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const file = path.join(dataDir, LOCK_FILE);
  for (let tries = 0; tries < 2; tries++) {
    try {
      fs.writeFileSync(file, `${process.pid}\n`, { flag: 'wx', mode: 0o600 });
      const release = () => {
        if (fs.readFileSync(file, 'utf8').trim() === String(process.pid)) fs.rmSync(file, { force: true });
      };
      process.once('exit', () => {
        try {
          release();
        } catch {
          // Already gone.
        }
      });
      return { held: true, release };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const owner = Number(fs.readFileSync(file, 'utf8').trim());
      if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && alive(owner)) return { held: false, owner };
      // Left behind by a process that is gone.
      fs.rmSync(file, { force: true });
    }
  }
  throw new Error(`could not lock the data folder ${dataDir}`);
}

const USERS_DIR = 'users';

/** Marks this process as a user of the embedded store in `dataDir`; the mark goes when it is released or the process exits. */
export function markStoreUser(dataDir: string): () => void {
  const dir = path.join(dataDir, USERS_DIR);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = path.join(dir, String(process.pid));
  fs.writeFileSync(file, '', { mode: 0o600 });
  const release = () => fs.rmSync(file, { force: true });
  process.once('exit', release);
  return release;
}

/** The other live processes that use the embedded store in `dataDir` (marks of processes that are gone are cleared). */
export function otherStoreUsers(dataDir: string): number[] {
  const dir = path.join(dataDir, USERS_DIR);
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir).flatMap((name) => {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) return [];
    if (alive(pid)) return [pid];
    fs.rmSync(path.join(dir, name), { force: true });
    return [];
  });
}
