/**
 * Every setting Herald reads from the environment, parsed and checked in one place.
 * Nothing else in the code reads process.env.
 */
import path from 'node:path';

export interface Config {
  /** TCP port of the HTTP server. */
  port: number;
  /** Address the server binds to. */
  host: string;
  /** Address users and networks reach this server at, without a trailing slash. */
  publicUrl: string;
  /** Base address of uploaded media (the "upload host"), without a trailing slash. */
  uploadUrl: string;
  /** Folder for the SQLite file, uploaded media and the generated secret. */
  dataDir: string;
  /** postgres://... to run on PostgreSQL; undefined means the embedded SQLite store. */
  databaseUrl?: string;
  /** Key material for encrypting secrets at rest; generated into dataDir when absent. */
  secret?: string;
  /** POST /posts requests allowed per account and hour. */
  postsPerHour: number;
  /** Requests allowed per API key and minute, on every endpoint. */
  requestsPerMinute: number;
  /** Largest request body accepted, in bytes (uploads have their own caps). */
  bodyLimit: number;
  /** Largest image and video accepted by upload, in bytes. */
  maxImageBytes: number;
  maxVideoBytes: number;
  /** Hosts or addresses that outbound fetches may reach although they are private (e.g. a local n8n). */
  allowPrivateHosts: string[];
  /** Run the publishing engine inside this process. */
  runWorker: boolean;
  logLevel: string;
}

type Env = Record<string, string | undefined>;

function int(env: Env, name: string, fallback: number, min = 0): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) {
    throw new Error(`${name} must be a whole number of at least ${min}, got "${raw}"`);
  }
  return value;
}

function url(env: Env, name: string, fallback: string): string {
  const raw = env[name] || fallback;
  try {
    const parsed = new URL(raw);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error('not http(s)');
  } catch {
    throw new Error(`${name} must be an http(s) URL, got "${raw}"`);
  }
  return raw.replace(/\/+$/, '');
}

export function loadConfig(env: Env = process.env): Config {
  const port = int(env, 'HERALD_PORT', 5000);
  const publicUrl = url(env, 'HERALD_PUBLIC_URL', `http://localhost:${port}`);
  const databaseUrl = env.HERALD_DATABASE_URL || undefined;
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new Error('HERALD_DATABASE_URL must start with postgres:// (leave it unset for the embedded store)');
  }
  return {
    port,
    host: env.HERALD_HOST || '0.0.0.0',
    publicUrl,
    uploadUrl: url(env, 'HERALD_UPLOAD_URL', `${publicUrl}/uploads`),
    dataDir: path.resolve(env.HERALD_DATA_DIR || 'data'),
    databaseUrl,
    secret: env.HERALD_SECRET || undefined,
    postsPerHour: int(env, 'HERALD_POSTS_PER_HOUR', 30, 1),
    requestsPerMinute: int(env, 'HERALD_REQUESTS_PER_MINUTE', 600, 1),
    bodyLimit: int(env, 'HERALD_BODY_LIMIT', 1024 * 1024, 1024),
    maxImageBytes: int(env, 'HERALD_MAX_IMAGE_BYTES', 10 * 1024 * 1024, 1),
    maxVideoBytes: int(env, 'HERALD_MAX_VIDEO_BYTES', 1024 * 1024 * 1024, 1),
    allowPrivateHosts: (env.HERALD_ALLOW_PRIVATE_HOSTS || '')
      .split(',')
      .map((s) => s.trim().toLowerCase())
      .filter(Boolean),
    runWorker: env.HERALD_WORKER !== 'off',
    logLevel: env.HERALD_LOG_LEVEL || 'info',
  };
}
