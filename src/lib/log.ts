/**
 * Herald's one logger (pino), shared by the HTTP server, the publishing engine
 * and background work: JSON lines, or readable lines when the output is a
 * terminal; the level is HERALD_LOG_LEVEL. Fields that could carry secrets are
 * redacted wherever they appear in a line.
 */
import { Writable } from 'node:stream';
import pino from 'pino';

const REDACT = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["idempotency-key"]',
  '*.accessToken',
  '*.refreshToken',
  '*.password',
  '*.secret',
  '*.key',
];

/** Fields every line has; the rest are printed as key=value in a terminal. */
const OWN_FIELDS = new Set(['level', 'time', 'pid', 'hostname', 'msg']);

/** A terminal line: "14:02:03 INFO  post published post=… network=x". */
export function readableLine(json: string): string {
  try {
    const entry = JSON.parse(json) as Record<string, unknown>;
    const level = (pino.levels.labels[entry.level as number] ?? String(entry.level)).toUpperCase().padEnd(5);
    const time = new Date(entry.time as number).toTimeString().slice(0, 8);
    const fields = Object.entries(entry)
      .filter(([name]) => !OWN_FIELDS.has(name))
      .map(([name, value]) => `${name}=${typeof value === 'string' ? value : JSON.stringify(value)}`);
    return `${time} ${level} ${entry.msg ?? ''}${fields.length ? ` ${fields.join(' ')}` : ''}\n`;
  } catch {
    return json.endsWith('\n') ? json : `${json}\n`;
  }
}

function destination(): pino.DestinationStream {
  if (!process.stdout.isTTY) return pino.destination(1);
  return new Writable({
    write(chunk: Buffer, _encoding, done) {
      process.stdout.write(readableLine(chunk.toString('utf8').trimEnd()));
      done();
    },
  });
}

export const log = pino({ level: process.env.HERALD_LOG_LEVEL || 'info', redact: { paths: REDACT, censor: '[redacted]' } }, destination());

/** The level from the configuration (the process may have been given another environment). */
export function setLogLevel(level: string): void {
  log.level = level;
}

/** An error for a log line: its message, stack and the driver's code where it has one. */
export function errorFields(err: unknown): { err: { message: string; code?: string; stack?: string } } {
  if (!(err instanceof Error)) return { err: { message: String(err) } };
  const code = (err as { code?: unknown }).code;
  return { err: { message: err.message, ...(typeof code === 'string' ? { code } : {}), stack: err.stack } };
}
