/**
 * One `herald start` per data folder: a second one beside the first would run a
 * second engine on the same embedded store without anyone meaning to. The lock
 * is a file holding the owner's pid, created atomically; a lock whose process is
 * gone (a crash, kill -9) is taken over.
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
