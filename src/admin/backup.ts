/**
 * `herald backup FILE` and `herald restore FILE` for the embedded store: one
 * .tar.gz holding a consistent copy of the SQLite database (VACUUM INTO, which
 * reads one snapshot while a server keeps writing), the media folder, and the
 * generated secret that seals channel tokens (without it a restored store could
 * not open them). PostgreSQL and S3 have their own tools (see the README).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import SqliteDatabase from 'libsql';
import type { Config } from '../config.ts';
import { lockDataFolder } from '../lib/data-lock.ts';

const DATABASE = 'herald.db';
const SECRET = 'secret.key';
const MEDIA = 'uploads';

/** tar-stream, loaded by backup and restore only: no other command needs it. */
const loadTar = () => import('tar-stream');

/** Every file below `dir`, as paths relative to it. */
function filesBelow(dir: string, prefix = ''): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const relative = path.join(prefix, entry.name);
    if (entry.isDirectory()) return filesBelow(path.join(dir, entry.name), relative);
    return entry.isFile() ? [relative] : [];
  });
}

function embeddedOnly(config: Config): void {
  if (config.databaseUrl) throw new Error('HERALD_DATABASE_URL is set: back PostgreSQL up with pg_dump and restore it with pg_restore (see the README).');
}

/** Writes the backup of the embedded store of `config` to `file`; returns what it holds. */
export async function backup(config: Config, file: string): Promise<{ files: number; bytes: number }> {
  embeddedOnly(config);
  const source = path.join(config.dataDir, DATABASE);
  if (!fs.existsSync(source)) throw new Error(`There is no store to back up at ${source}.`);
  const staging = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-backup-'));
  try {
    // One consistent snapshot, taken while a running server may keep writing.
    const db = new SqliteDatabase(source);
    try {
      db.exec(`VACUUM INTO '${path.join(staging, DATABASE).replace(/'/g, "''")}'`);
    } finally {
      db.close();
    }
    const entries: { name: string; from: string }[] = [{ name: DATABASE, from: path.join(staging, DATABASE) }];
    if (fs.existsSync(path.join(config.dataDir, SECRET))) entries.push({ name: SECRET, from: path.join(config.dataDir, SECRET) });
    // Media files are written once and never changed, so copying them as they are is consistent.
    const media = config.s3 ? [] : filesBelow(path.join(config.dataDir, MEDIA));
    for (const name of media) entries.push({ name: path.posix.join(MEDIA, ...name.split(path.sep)), from: path.join(config.dataDir, MEDIA, name) });

    const pack = (await loadTar()).pack();
    const written = pipeline(pack, zlib.createGzip(), fs.createWriteStream(file, { mode: 0o600 }));
    let bytes = 0;
    for (const entry of entries) {
      const content = fs.readFileSync(entry.from);
      bytes += content.length;
      await new Promise<void>((resolve, reject) => pack.entry({ name: entry.name, mode: 0o600 }, content, (err) => (err ? reject(err) : resolve())));
    }
    pack.finalize();
    await written;
    return { files: entries.length, bytes };
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
}

/** Puts a backup back into the data folder of `config`, which no Herald may be using and which must hold no store yet. */
export async function restore(config: Config, file: string): Promise<{ files: number }> {
  embeddedOnly(config);
  if (!fs.existsSync(file)) throw new Error(`No backup at ${file}.`);
  const lock = lockDataFolder(config.dataDir);
  if (!lock.held) throw new Error(`A Herald (pid ${lock.owner}) runs on ${config.dataDir}: stop it before restoring.`);
  try {
    if (fs.existsSync(path.join(config.dataDir, DATABASE))) {
      throw new Error(`${config.dataDir} already holds a store: restore into an empty data folder (HERALD_DATA_DIR), or move the old one away first.`);
    }
    const root = path.resolve(config.dataDir);
    const extract = (await loadTar()).extract();
    let files = 0;
    extract.on('entry', (header, stream, next) => {
      const target = path.resolve(root, header.name);
      // Only files of Herald's own layout, and never outside the data folder.
      const ours =
        header.type === 'file' &&
        (header.name === DATABASE || header.name === SECRET || header.name.startsWith(`${MEDIA}/`)) &&
        target.startsWith(root + path.sep);
      if (!ours) {
        stream.resume();
        return next();
      }
      fs.mkdirSync(path.dirname(target), { recursive: true, mode: 0o700 });
      stream.pipe(fs.createWriteStream(target, { mode: 0o600 })).on('finish', () => {
        files++;
        next();
      });
    });
    await pipeline(fs.createReadStream(file), zlib.createGunzip(), extract);
    if (!fs.existsSync(path.join(root, DATABASE))) throw new Error(`${file} is not a Herald backup (it holds no ${DATABASE}).`);
    return { files };
  } finally {
    lock.release();
  }
}
