/**
 * Every setting Herald reads from the environment, parsed and checked in one place.
 * Nothing else in the code reads process.env.
 */
import net from 'node:net';
import { weakSecret } from './lib/secrets.ts';
import os from 'node:os';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

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
  /** The built web application (index.html and assets/); the `herald` command points it at its own build. */
  webDir: string;
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
  /** upload-from-url: time to connect, and for the whole fetch including the body, in ms. */
  fetchConnectTimeoutMs: number;
  fetchTimeoutMs: number;
  /** Keep media in an S3-compatible bucket instead of the data folder. */
  s3?: S3Config;
  /** Hosts or addresses that outbound fetches may reach although they are private (e.g. a local n8n). */
  allowPrivateHosts: string[];
  /** Run the publishing engine inside this process. */
  runWorker: boolean;
  /** Posts one engine publishes at once. */
  workerConcurrency: number;
  /** How long after its due time a post keeps being retried after temporary failures. */
  retryDeadlineMs: number;
  /** How long a worker holds a claimed post; a dead worker's posts are taken again after this. */
  leaseMs: number;
  /** HERALD_FEED_POLL_SECONDS: how often each RSS or Atom subscription is read. */
  feedPollMs: number;
  /** HERALD_SERIES_INTERVAL_SECONDS: how often each engine looks for repeating posts whose next occurrences are due to be created. */
  seriesEveryMs: number;
  /** HERALD_TRUST_PROXY: whose X-Forwarded-For is believed. */
  trustProxy: TrustedProxies;
  /** HERALD_REQUEST_TIMEOUT_SECONDS: longest time to receive a whole request (headers and body) without an upload. */
  requestTimeoutMs: number;
  /** HERALD_CONNECTIONS_PER_ADDRESS: open connections one client address may hold. */
  connectionsPerAddress: number;
  /** HERALD_SHUTDOWN_SECONDS: how long a stopping process lets publishes already sent finish. */
  shutdownMs: number;
  logLevel: string;
  /** HERALD_METRICS_TOKEN: GET /api/metrics answers to `Authorization: Bearer` this token; without it, that route does not exist. */
  metricsToken?: string;
  /** HERALD_METRICS_PORT: a listener of its own for GET /metrics (workers have no other), on HERALD_METRICS_HOST (127.0.0.1). */
  metricsPort?: number;
  metricsHost: string;
  /** Outgoing e-mail (HERALD_SMTP_URL, HERALD_MAIL_FROM, HERALD_SMTP_CA); undefined: mail is off and links are offered to copy. */
  mail?: MailConfig;
  /** HERALD_OIDC_*: single sign-on with an OpenID Connect provider; undefined when not configured. */
  oidc?: OidcConfig;
  /**
   * Every HERALD_* variable as given: networks read their app credentials and
   * base URLs from here by name (HERALD_X_API_KEY, HERALD_BLUESKY_SERVICE_URL...),
   * see src/providers/network-settings.ts.
   */
  networkEnv: Record<string, string>;
}

export interface MailConfig {
  /** smtp://user:pass@host:587 (STARTTLS when the server offers it) or smtps://user:pass@host:465. Holds a password: never logged. */
  smtpUrl: string;
  /** The sender, e.g. "Herald <herald@example.com>". */
  from: string;
  /** HERALD_SMTP_CA: a PEM file of the certificate authority that signed the SMTP server's certificate (a private or self-signed one). */
  ca?: string;
}

export interface S3Config {
  bucket: string;
  /** For S3-compatible servers (MinIO, R2...); AWS when absent. */
  endpoint?: string;
  region: string;
  /** Without keys the SDK's own chain applies (instance roles). */
  accessKeyId?: string;
  secretAccessKey?: string;
  /** Object keys start with this (e.g. "herald/"). */
  prefix: string;
  /** Path-style addressing (bucket in the path), which most S3-compatible servers need. */
  forcePathStyle: boolean;
}

/** The OpenID Connect provider people sign in with (Google Workspace, Entra, Okta, Keycloak, Authentik...). */
export interface OidcConfig {
  /** HERALD_OIDC_ISSUER: the issuer URL; its /.well-known/openid-configuration is read. */
  issuer: string;
  /** HERALD_OIDC_CLIENT_ID and HERALD_OIDC_CLIENT_SECRET: Herald's client at the provider. */
  clientId: string;
  clientSecret: string;
  /** HERALD_OIDC_NAME: the sign-in button says "Sign in with <name>" ("single sign-on" when unset). */
  name: string;
}

type Env = Record<string, string | undefined>;

/** HERALD_OIDC_ISSUER, HERALD_OIDC_CLIENT_ID and HERALD_OIDC_CLIENT_SECRET go together; none of them: no single sign-on. */
function oidcConfig(env: Env): OidcConfig | undefined {
  const names = ['HERALD_OIDC_ISSUER', 'HERALD_OIDC_CLIENT_ID', 'HERALD_OIDC_CLIENT_SECRET'] as const;
  const given = names.filter((n) => env[n]);
  if (given.length === 0) return undefined;
  if (given.length < names.length) {
    throw new Error(`${names.join(', ')} go together: ${names.filter((n) => !env[n]).join(', ')} missing`);
  }
  // Kept exactly as given: discovery compares it with the provider's `issuer` character for character (Authentik's ends with a slash).
  const issuer = env.HERALD_OIDC_ISSUER!.trim();
  if (!/^https?:\/\/[^\s]+$/.test(issuer) || !URL.canParse(issuer)) throw new Error(`HERALD_OIDC_ISSUER must be an http(s) URL, got "${issuer}"`);
  return {
    issuer,
    clientId: env.HERALD_OIDC_CLIENT_ID!,
    clientSecret: env.HERALD_OIDC_CLIENT_SECRET!,
    name: env.HERALD_OIDC_NAME?.trim() || 'single sign-on',
  };
}

function int(env: Env, name: string, fallback: number, min = 0): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) {
    throw new Error(`${name} must be a whole number of at least ${min}, got "${raw}"`);
  }
  return value;
}

/**
 * HERALD_TRUST_PROXY: the reverse proxies whose X-Forwarded-For is believed, as
 * addresses or CIDR ranges (comma-separated) or a hop count. Unset: none, so a
 * client cannot pick the address its sign-in attempts are counted under.
 */
export type TrustedProxies = false | number | string;

export function trustedProxies(env: Env): TrustedProxies {
  const value = (env.HERALD_TRUST_PROXY || '').trim();
  if (value === '') return false;
  if (/^\d+$/.test(value)) return Number(value);
  if (/^(true|yes|on|all|\*)$/i.test(value)) {
    throw new Error(
      'HERALD_TRUST_PROXY must name the proxies (addresses or CIDR ranges, comma-separated) or give a hop count; ' +
        'trusting every sender would let any client choose its address',
    );
  }
  for (const part of value.split(',').map((p) => p.trim())) {
    const [address, bits] = part.split('/');
    const named = ['loopback', 'linklocal', 'uniquelocal'].includes(part);
    if (!named && (!net.isIP(address ?? '') || (bits !== undefined && !/^\d{1,3}$/.test(bits)))) {
      throw new Error(`HERALD_TRUST_PROXY: "${part}" is not an address, a CIDR range or one of loopback, linklocal, uniquelocal`);
    }
  }
  return value;
}

/** A metrics token short enough to guess would make the metrics public in all but name. */
function metricsToken(value: string | undefined): string | undefined {
  if (!value) return undefined;
  if (value.length < 16) throw new Error('HERALD_METRICS_TOKEN must be at least 16 characters (e.g. openssl rand -hex 24)');
  return value;
}

/** HERALD_SECRET, refused at start when it is too weak to be the key of everything sealed at rest. */
function strongSecret(secret: string | undefined): string | undefined {
  if (!secret) return undefined;
  const problem = weakSecret(secret);
  if (problem) throw new Error(problem);
  return secret;
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

/** Herald's own folder (where its package.json is), whether this runs from src/ or from the bundle bin/herald.js builds. */
export function heraldRoot(): string {
  for (let dir = path.dirname(fileURLToPath(import.meta.url)); ; dir = path.dirname(dir)) {
    try {
      if (JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')).name === 'herald') return dir;
    } catch {
      /* no package.json here: look further up */
    }
    if (path.dirname(dir) === dir) return process.cwd();
  }
}

export function loadConfig(env: Env = process.env): Config {
  const root = heraldRoot();
  const port = int(env, 'HERALD_PORT', 5000);
  const publicUrl = url(env, 'HERALD_PUBLIC_URL', `http://localhost:${port}`);
  const databaseUrl = env.HERALD_DATABASE_URL || undefined;
  const s3 = s3Config(env);
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new Error('HERALD_DATABASE_URL must start with postgres:// (leave it unset for the embedded store)');
  }
  return {
    port,
    host: env.HERALD_HOST || '0.0.0.0',
    publicUrl,
    trustProxy: trustedProxies(env),
    requestTimeoutMs: int(env, 'HERALD_REQUEST_TIMEOUT_SECONDS', 60, 1) * 1000,
    connectionsPerAddress: int(env, 'HERALD_CONNECTIONS_PER_ADDRESS', 256, 1),
    // A bucket with a public address serves the files itself; otherwise Herald serves them.
    uploadUrl: url(env, 'HERALD_UPLOAD_URL', s3?.publicUrl ?? `${publicUrl}/uploads`),
    // Relative paths given are the user's (from where they run Herald); the defaults are Herald's own folder,
    // so "herald keys" run from anywhere finds the store "npm start" uses.
    dataDir: env.HERALD_DATA_DIR ? path.resolve(env.HERALD_DATA_DIR) : path.join(root, 'data'),
    webDir: env.HERALD_WEB_DIR ? path.resolve(env.HERALD_WEB_DIR) : path.join(root, 'dist', 'web'),
    databaseUrl,
    secret: strongSecret(env.HERALD_SECRET),
    postsPerHour: int(env, 'HERALD_POSTS_PER_HOUR', 30, 1),
    requestsPerMinute: int(env, 'HERALD_REQUESTS_PER_MINUTE', 600, 1),
    bodyLimit: int(env, 'HERALD_BODY_LIMIT', 1024 * 1024, 1024),
    maxImageBytes: int(env, 'HERALD_MAX_IMAGE_BYTES', 10 * 1024 * 1024, 1),
    maxVideoBytes: int(env, 'HERALD_MAX_VIDEO_BYTES', 1024 * 1024 * 1024, 1),
    fetchConnectTimeoutMs: int(env, 'HERALD_FETCH_CONNECT_TIMEOUT_MS', 10_000, 1),
    fetchTimeoutMs: int(env, 'HERALD_FETCH_TIMEOUT_MS', 120_000, 1),
    s3: s3?.config,
    allowPrivateHosts: (env.HERALD_ALLOW_PRIVATE_HOSTS || '')
      .split(',')
      .map((s) => s.trim().toLowerCase())
      .filter(Boolean),
    runWorker: env.HERALD_WORKER !== 'off',
    workerConcurrency: int(env, 'HERALD_WORKER_CONCURRENCY', 64, 1),
    retryDeadlineMs: int(env, 'HERALD_RETRY_DEADLINE_MINUTES', 60, 1) * 60_000,
    leaseMs: int(env, 'HERALD_LEASE_SECONDS', 120, 2) * 1000,
    feedPollMs: int(env, 'HERALD_FEED_POLL_SECONDS', 900, 1) * 1000,
    seriesEveryMs: int(env, 'HERALD_SERIES_INTERVAL_SECONDS', 60, 1) * 1000,
    shutdownMs: int(env, 'HERALD_SHUTDOWN_SECONDS', 20, 0) * 1000,
    logLevel: env.HERALD_LOG_LEVEL || 'info',
    metricsToken: metricsToken(env.HERALD_METRICS_TOKEN),
    metricsPort: env.HERALD_METRICS_PORT ? int(env, 'HERALD_METRICS_PORT', 0, 1) : undefined,
    metricsHost: env.HERALD_METRICS_HOST || '127.0.0.1',
    mail: mailConfig(env),
    oidc: oidcConfig(env),
    networkEnv: Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[0].startsWith('HERALD_') && !!e[1])),
  };
}

/** Settings of the client side (the `herald` client commands and their stored login). */
export interface ClientConfig {
  /** HERALD_API_KEY; stored OAuth credentials take priority over it. */
  apiKey?: string;
  /** HERALD_API_URL including the /api prefix; clients append /public/v1/... */
  apiUrl: string;
  /** HERALD_AUTH_SERVER: the device-flow auth server used by `herald login`. */
  authServer: string;
  /** Folder of the stored login: $XDG_CONFIG_HOME/herald, %APPDATA%\herald or ~/.config/herald. */
  configDir: string;
  /** NO_COLOR set: never colour output, even on a terminal. */
  noColor: boolean;
}

export function loadClientConfig(env: Env = process.env, home: string = os.homedir()): ClientConfig {
  const base = env.XDG_CONFIG_HOME || (process.platform === 'win32' && env.APPDATA) || path.join(home, '.config');
  return {
    apiKey: env.HERALD_API_KEY || undefined,
    apiUrl: url(env, 'HERALD_API_URL', 'http://localhost:5000/api'),
    authServer: url(env, 'HERALD_AUTH_SERVER', 'http://localhost:3111'),
    configDir: path.join(base, 'herald'),
    noColor: env.NO_COLOR !== undefined && env.NO_COLOR !== '',
  };
}

/** Settings of the device-flow auth server (`herald auth-server`, see the README). */
export interface AuthServerConfig {
  /** HERALD_AUTH_PORT: where it listens (3111). */
  port: number;
  /** HERALD_HOST: address to bind. */
  host: string;
  /** HERALD_AUTH_PUBLIC_URL: where browsers reach it; verification_uri and the OAuth callback are under it. */
  publicUrl: string;
  /** HERALD_API_URL: Herald's API including /api, handed to clients as api_url; the token endpoint is under it. */
  apiUrl: string;
  /** Herald's consent page, next to the API: HERALD_API_URL without /api, plus /oauth/authorize. */
  authorizeUrl: string;
  /** HERALD_AUTH_CLIENT_ID and HERALD_AUTH_CLIENT_SECRET: this server's OAuth application at Herald; without them it registers its own. */
  clientId?: string;
  clientSecret?: string;
  /** HERALD_AUTH_POLL_INTERVAL: seconds clients wait between polls of /device/token. */
  pollIntervalSeconds: number;
  /** HERALD_AUTH_SCOPE: scopes asked for (space-separated); unset asks for full access. */
  scope?: string;
  /** HERALD_TRUST_PROXY, as for the API server. */
  trustProxy: TrustedProxies;
}

export function loadAuthServerConfig(env: Env = process.env): AuthServerConfig {
  const port = int(env, 'HERALD_AUTH_PORT', 3111);
  const apiUrl = url(env, 'HERALD_API_URL', `${url(env, 'HERALD_PUBLIC_URL', 'http://localhost:5000')}/api`);
  if (!/\/api$/.test(new URL(apiUrl).pathname))
    throw new Error(`HERALD_API_URL must end with the /api prefix (e.g. http://localhost:5000/api), got "${apiUrl}"`);
  const clientId = env.HERALD_AUTH_CLIENT_ID || undefined;
  const clientSecret = env.HERALD_AUTH_CLIENT_SECRET || undefined;
  if (Boolean(clientId) !== Boolean(clientSecret)) {
    throw new Error('HERALD_AUTH_CLIENT_ID and HERALD_AUTH_CLIENT_SECRET go together: give both, or neither and the auth server registers its own application');
  }
  return {
    port,
    host: env.HERALD_HOST || '0.0.0.0',
    publicUrl: url(env, 'HERALD_AUTH_PUBLIC_URL', `http://localhost:${port}`),
    apiUrl,
    authorizeUrl: `${apiUrl.replace(/\/api$/, '')}/oauth/authorize`,
    trustProxy: trustedProxies(env),
    clientId,
    clientSecret,
    pollIntervalSeconds: int(env, 'HERALD_AUTH_POLL_INTERVAL', 5, 1),
    scope: env.HERALD_AUTH_SCOPE || undefined,
  };
}

function s3Config(env: Env): { config: S3Config; publicUrl?: string } | undefined {
  const bucket = env.HERALD_S3_BUCKET;
  if (!bucket) return undefined;
  const endpoint = env.HERALD_S3_ENDPOINT ? url(env, 'HERALD_S3_ENDPOINT', '') : undefined;
  if (!!env.HERALD_S3_ACCESS_KEY_ID !== !!env.HERALD_S3_SECRET_ACCESS_KEY) {
    throw new Error('HERALD_S3_ACCESS_KEY_ID and HERALD_S3_SECRET_ACCESS_KEY must be set together');
  }
  const prefix = (env.HERALD_S3_PREFIX || '').replace(/^\/+/, '');
  if (prefix && !/^[A-Za-z0-9._/-]+\/$/.test(prefix)) throw new Error('HERALD_S3_PREFIX must be letters, digits, ".", "_", "-" or "/" and end with "/"');
  return {
    config: {
      bucket,
      endpoint,
      region: env.HERALD_S3_REGION || 'us-east-1',
      accessKeyId: env.HERALD_S3_ACCESS_KEY_ID || undefined,
      secretAccessKey: env.HERALD_S3_SECRET_ACCESS_KEY || undefined,
      prefix,
      forcePathStyle: env.HERALD_S3_FORCE_PATH_STYLE ? env.HERALD_S3_FORCE_PATH_STYLE !== 'false' : endpoint !== undefined,
    },
    publicUrl: env.HERALD_S3_PUBLIC_URL ? url(env, 'HERALD_S3_PUBLIC_URL', '') : undefined,
  };
}

/** Mail needs both the server and the sender; one without the other is a mistake said at start. */
function mailConfig(env: Env): MailConfig | undefined {
  const smtpUrl = env.HERALD_SMTP_URL || undefined;
  const from = env.HERALD_MAIL_FROM || undefined;
  if (!smtpUrl && !from) return undefined;
  if (!smtpUrl || !from) throw new Error('HERALD_SMTP_URL and HERALD_MAIL_FROM go together: give both to send e-mail, or neither');
  let parsed: URL;
  try {
    parsed = new URL(smtpUrl);
  } catch {
    throw new Error('HERALD_SMTP_URL must be a URL such as smtp://user:password@mail.example.com:587 or smtps://...:465');
  }
  if (parsed.protocol !== 'smtp:' && parsed.protocol !== 'smtps:') throw new Error('HERALD_SMTP_URL must start with smtp:// or smtps://');
  if (!/@|<[^>]+@[^>]+>$/.test(from)) throw new Error(`HERALD_MAIL_FROM must be an address such as "Herald <herald@example.com>", got "${from}"`);
  const caFile = env.HERALD_SMTP_CA || undefined;
  let ca: string | undefined;
  if (caFile) {
    try {
      ca = fs.readFileSync(path.resolve(caFile), 'utf8');
    } catch (err) {
      throw new Error(`HERALD_SMTP_CA: cannot read ${caFile} (${(err as Error).message})`);
    }
  }
  return { smtpUrl, from, ca };
}
