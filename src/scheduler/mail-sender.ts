/**
 * Sends the outbox (mail/mail.ts) over SMTP: claims due letters with a lease, so
 * several workers share them and each letter goes out once (a worker that dies
 * mid-send leaves it to the next after its lease, so a reader may rarely get one
 * twice). A refusal the server calls temporary (4xx) or a server out of reach is
 * tried again later, with growing waits; a permanent refusal (5xx) or the last
 * attempt gives up, keeping the reason. Log lines name the letter and its kind,
 * never its body or links (they may carry a token).
 */
import os from 'node:os';
import { sql } from 'kysely';
import nodemailer from 'nodemailer';
import type { MailConfig } from '../config.ts';
import type { Store } from '../db/index.ts';
import { claimRows, heldBy, nextClaimable, UNLEASED } from '../db/lease.ts';
import type { MailOutboxRow } from '../db/schema.ts';
import { newId } from '../lib/ids.ts';
import { log } from '../lib/log.ts';
import type { Mail } from '../mail/mail.ts';
import { QUEUE_POLL_MS, WorkLoop } from './work-loop.ts';
import { retryDelayMs } from './webhook-dispatcher.ts';

/** Waits after the 1st, 2nd ... failed attempt (about 15 h in all); then the letter is given up. */
export const MAIL_RETRY_DELAYS_MS = [30, 120, 600, 1_800, 3_600, 7_200, 14_400, 28_800].map((s) => s * 1000);

export interface MailSenderOptions {
  leaseMs?: number;
  concurrency?: number;
  pollMs?: number;
  /** Longest wait for the SMTP server at each step (connecting, greeting, each answer). */
  timeoutMs?: number;
  retryDelaysMs?: number[];
}

/** The SMTP transport of HERALD_SMTP_URL; HERALD_SMTP_CA adds the authority that signed a private server's certificate. */
export function smtpTransport(config: MailConfig, timeoutMs: number) {
  return nodemailer.createTransport({
    url: config.smtpUrl,
    ...(config.ca ? { tls: { ca: config.ca } } : {}),
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
  });
}

/** Why an attempt failed, without the server's address or credentials; and whether trying again may help. */
export function describeSmtpFailure(err: unknown): { reason: string; permanent: boolean } {
  const e = err as { responseCode?: number; response?: string; code?: string; message?: string; permanent?: boolean };
  if (typeof e.responseCode === 'number') {
    // A refused login is the operator's to fix (HERALD_SMTP_URL): the letters wait for it rather than being lost.
    const permanent = e.responseCode >= 500 && e.code !== 'EAUTH';
    return { reason: `the SMTP server answered ${(e.response ?? String(e.responseCode)).slice(0, 300)}`, permanent };
  }
  return { reason: `the SMTP server could not be reached or spoken to (${e.code ?? e.message ?? 'unknown error'})`, permanent: false };
}

export class MailSender {
  readonly worker = `${os.hostname()}:${process.pid}:mail:${newId().slice(0, 8)}`;
  private readonly leaseMs: number;
  private readonly retryDelaysMs: number[];
  private readonly loop: WorkLoop<MailOutboxRow>;
  private readonly transport: ReturnType<typeof smtpTransport>;

  constructor(
    private readonly deps: { store: Store; mail: Mail },
    config: MailConfig,
    options: MailSenderOptions = {},
  ) {
    const timeoutMs = options.timeoutMs ?? 30_000;
    this.leaseMs = options.leaseMs ?? 5 * 60_000;
    this.retryDelaysMs = options.retryDelaysMs ?? MAIL_RETRY_DELAYS_MS;
    if (timeoutMs * 3 >= this.leaseMs) throw new Error('mail sender: timeoutMs must be well under leaseMs');
    this.transport = smtpTransport(config, timeoutMs);
    const { store } = deps;
    this.loop = new WorkLoop({
      name: 'mail',
      concurrency: options.concurrency ?? 4,
      pollMs: options.pollMs ?? QUEUE_POLL_MS,
      claim: (limit) =>
        claimRows(store.db, store.dialect, {
          table: 'mail_outbox',
          as: 'm',
          due: sql`m.state = 'pending' AND m.next_attempt_at <= ${Date.now()}`,
          order: sql`m.next_attempt_at`,
          limit,
          now: Date.now(),
          hold: { owner: this.worker, ms: this.leaseMs, countAttempt: true },
        }),
      handle: (letter) => this.attempt(letter, config.from),
      nextDue: () => nextClaimable(store.db, 'mail_outbox', 'next_attempt_at', sql`state = 'pending'`),
    });
  }

  start(): void {
    this.deps.mail.wake = () => this.loop.wake(Date.now());
    this.loop.start();
  }

  async stop(graceMs = Infinity): Promise<void> {
    this.deps.mail.wake = () => {};
    await this.loop.stop(graceMs);
    this.transport.close();
  }

  private async attempt(letter: MailOutboxRow, from: string): Promise<void> {
    const where = { mail: letter.id, kind: letter.kind, attempt: letter.attempts };
    if (!letter.body_sealed) return this.finish(letter, { state: 'failed', last_error: 'the letter has no body' });
    try {
      const body = this.deps.mail.open(letter.body_sealed);
      await this.transport.sendMail({ from, to: letter.to_address, subject: letter.subject, text: body.text, html: body.html });
      log.info(where, 'mail sent');
      return this.finish(letter, { state: 'sent', sent_at: Date.now(), body_sealed: null, last_error: null });
    } catch (err) {
      const { reason, permanent } = describeSmtpFailure(err);
      const wait = permanent ? undefined : retryDelayMs(letter.attempts, this.retryDelaysMs);
      if (wait === undefined) {
        log.warn({ ...where, reason }, 'mail given up');
        const why = permanent ? reason : `${reason} (gave up after ${letter.attempts} attempts)`;
        return this.finish(letter, { state: 'failed', body_sealed: null, last_error: why });
      }
      log.warn({ ...where, reason, retryInSeconds: Math.round(wait / 1000) }, 'mail not sent; trying again later');
      return this.finish(letter, { last_error: reason, next_attempt_at: Date.now() + wait });
    }
  }

  private async finish(letter: MailOutboxRow, change: Partial<MailOutboxRow>): Promise<void> {
    await this.deps.store.db
      .updateTable('mail_outbox')
      .set({ ...change, ...UNLEASED })
      .where('id', '=', letter.id)
      // A worker whose lease ran out must not overwrite the outcome of the one that took over.
      .where(heldBy(this.worker))
      .execute();
    if (change.next_attempt_at !== undefined) this.loop.wake(change.next_attempt_at);
  }
}
