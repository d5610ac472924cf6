/**
 * A real SMTP server for the mail tests (the smtp-server package): STARTTLS
 * with a self-signed certificate made for the test by openssl, AUTH required
 * (and refused before TLS), and every message kept as it arrived, with a small
 * MIME reader for its subject and its text and HTML parts.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SMTPServer } from 'smtp-server';
import { eventually, freePort } from './herald.ts';

export interface Received {
  to: string[];
  /** Whether the session was on TLS (STARTTLS) when the message was sent. */
  secure: boolean;
  user: string | undefined;
  subject: string;
  text: string;
  html: string;
  raw: string;
}

export interface SmtpServer {
  /** smtp://user:pass@127.0.0.1:PORT */
  url: string;
  /** The PEM file of the certificate, for HERALD_SMTP_CA. */
  caFile: string;
  messages: Received[];
  /** The next `count` messages are refused with a temporary 451. */
  refuseNext(count: number): void;
  /** Messages refused so far. */
  refused: number;
  /** Waits for a message that `match` accepts. */
  waitFor(match: (m: Received) => boolean, what: string, ms?: number): Promise<Received>;
  close(): Promise<void>;
}

const USER = 'herald-mailer';
const PASS = 'smtp-pass-4c1f9e';

/** Decodes RFC 2047 encoded words (=?UTF-8?Q?...?= and =?UTF-8?B?...?=). */
function decodeWords(value: string): string {
  return value.replace(/=\?([^?]+)\?([QqBb])\?([^?]*)\?=\s*/g, (_, _charset, kind: string, text: string) =>
    kind.toUpperCase() === 'B'
      ? Buffer.from(text, 'base64').toString('utf8')
      : Buffer.from(
          text.replace(/_/g, ' ').replace(/=([0-9A-F]{2})/gi, (__, hex: string) => String.fromCharCode(Number.parseInt(hex, 16))),
          'latin1',
        ).toString('utf8'),
  );
}

function splitHead(part: string): { headers: Map<string, string>; body: string } {
  const at = part.indexOf('\r\n\r\n');
  const head = at < 0 ? part : part.slice(0, at);
  const body = at < 0 ? '' : part.slice(at + 4);
  const headers = new Map<string, string>();
  for (const line of head.replace(/\r\n[ \t]+/g, ' ').split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  return { headers, body };
}

function decodeBody(body: string, encoding: string | undefined): string {
  if (/base64/i.test(encoding ?? '')) return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
  if (/quoted-printable/i.test(encoding ?? '')) {
    const bytes = body.replace(/=\r\n/g, '').replace(/=([0-9A-F]{2})/gi, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
    return Buffer.from(bytes, 'latin1').toString('utf8');
  }
  return body;
}

/** The text and HTML parts of a message, however nested. */
function parts(part: string, found: { text: string; html: string }): void {
  const { headers, body } = splitHead(part);
  const type = headers.get('content-type') ?? 'text/plain';
  const boundary = /boundary="?([^";]+)"?/i.exec(type)?.[1];
  if (/^multipart\//i.test(type) && boundary) {
    for (const child of body.split(`--${boundary}`).slice(1)) if (!child.startsWith('--')) parts(child.replace(/^\r\n/, ''), found);
    return;
  }
  const decoded = decodeBody(body, headers.get('content-transfer-encoding'));
  if (/^text\/html/i.test(type)) found.html += decoded;
  else if (/^text\/plain/i.test(type)) found.text += decoded;
}

export function readMessage(raw: string): Pick<Received, 'subject' | 'text' | 'html'> {
  const found = { text: '', html: '' };
  parts(raw, found);
  return { subject: decodeWords(splitHead(raw).headers.get('subject') ?? ''), ...found };
}

/** A self-signed certificate for 127.0.0.1, made now. */
function selfSigned(dir: string): { key: string; cert: string; certFile: string } {
  const keyFile = path.join(dir, 'key.pem');
  const certFile = path.join(dir, 'cert.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
      '-keyout',
      keyFile,
      '-out',
      certFile,
    ],
    { stdio: 'ignore' },
  );
  return { key: fs.readFileSync(keyFile, 'utf8'), cert: fs.readFileSync(certFile, 'utf8'), certFile };
}

export async function startSmtpServer(): Promise<SmtpServer> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-smtp-'));
  const { key, cert, certFile } = selfSigned(dir);
  const messages: Received[] = [];
  let refuse = 0;
  const state = { refused: 0 };
  const server = new SMTPServer({
    key,
    cert,
    authMethods: ['PLAIN', 'LOGIN'],
    // AUTH only after STARTTLS (the package's default, said here because the tests rely on it).
    allowInsecureAuth: false,
    onAuth(auth, _session, callback) {
      if (auth.username === USER && auth.password === PASS) callback(null, { user: auth.username });
      else callback(new Error('535 Authentication failed'));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        if (refuse > 0) {
          refuse--;
          state.refused++;
          const err = new Error('Mailbox busy, try again later') as Error & { responseCode: number };
          err.responseCode = 451;
          return callback(err);
        }
        const raw = Buffer.concat(chunks).toString('utf8');
        messages.push({
          to: session.envelope.rcptTo.map((r) => r.address),
          secure: session.secure,
          user: session.user as string | undefined,
          raw,
          ...readMessage(raw),
        });
        callback();
      });
    },
  });
  const port = await freePort();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  return {
    url: `smtp://${USER}:${PASS}@127.0.0.1:${port}`,
    caFile: certFile,
    messages,
    refuseNext(count) {
      refuse = count;
    },
    get refused() {
      return state.refused;
    },
    waitFor(match, what, ms = 15_000) {
      return eventually(async () => messages.find(match), ms, what);
    },
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
