/**
 * Sends recorded webhook deliveries: claims due ones with a lease (so several
 * workers share them), POSTs each signed body through the outbound guard, and
 * either marks it delivered or schedules the next attempt. Receivers may see an
 * event more than once (a worker that dies mid-send is retried after its lease);
 * the webhook-id header stays the same so they can drop repeats.
 */
import os from 'node:os';
import type { Metrics } from '../lib/metrics.ts';
import { sql } from 'kysely';
import type { Store } from '../db/index.ts';
import { claimRows, heldBy, nextClaimable, UNLEASED } from '../db/lease.ts';
import type { WebhookDeliveryRow, WebhookDeliveryState } from '../db/schema.ts';
import type { AttemptRecord, Webhooks } from '../domain/webhooks.ts';
import { newId } from '../lib/ids.ts';
import { OutboundRefused, type OutboundGuard } from '../lib/outbound.ts';
import { signatureHeaders } from '../lib/webhook-signature.ts';
import { readDetail } from '../providers/adapter-kit/http-failures.ts';
import { QUEUE_POLL_MS, WorkLoop } from './work-loop.ts';

/**
 * Waits after the 1st, 2nd ... failed attempt: 11 attempts spread over about 28 h
 * (at least 24.9 h with the jitter), then the delivery is failed.
 */
export const DEFAULT_RETRY_DELAYS_MS = [5, 30, 120, 600, 1_800, 3_600, 7_200, 14_400, 28_800, 43_200].map((s) => s * 1000);

export interface WebhookDispatcherOptions {
  /** How long a claim is held; a delivery whose worker died is taken again after this. */
  leaseMs?: number;
  /** Deliveries sent at once by this worker. */
  concurrency?: number;
  /** Longest sleep between looks at the table (other processes may record events). */
  pollMs?: number;
  /** Longest wait for an endpoint's answer. */
  timeoutMs?: number;
  /** Wait after each failed attempt; when they run out the delivery fails. */
  retryDelaysMs?: number[];
}

/** The wait before the next attempt after `failedAttempts` failures, with ±10 % jitter; undefined: give up. */
export function retryDelayMs(failedAttempts: number, delays: number[], random = Math.random): number | undefined {
  const base = delays[failedAttempts - 1];
  if (base === undefined) return undefined;
  return Math.round(base * (0.9 + random() * 0.2));
}

/** Leases up to `limit` due deliveries to `worker`, counting the attempt (db/lease.ts). */
export async function claimDueDeliveries(store: Store, worker: string, limit: number, leaseMs: number, now = Date.now()): Promise<WebhookDeliveryRow[]> {
  return claimRows(store.db, store.dialect, {
    table: 'webhook_deliveries',
    as: 'd',
    due: sql`d.state = 'pending' AND d.next_attempt_at <= ${now}`,
    order: sql`d.next_attempt_at`,
    limit,
    now,
    hold: { owner: worker, ms: leaseMs, countAttempt: true },
  });
}

/** When the next pending delivery becomes claimable (due time or lease expiry), if any. */
export function nextDeliveryDue(store: Store): Promise<number | undefined> {
  return nextClaimable(store.db, 'webhook_deliveries', 'next_attempt_at', sql`state = 'pending'`);
}

function describeFailure(err: unknown, timeoutMs: number): string {
  if (err instanceof OutboundRefused)
    return `refused: ${err.reason}${err.reason === 'too many redirects' ? ' (webhook deliveries do not follow redirects)' : ''}`;
  const name = (err as Error)?.name;
  if (name === 'TimeoutError' || name === 'AbortError') return `no answer within ${Math.round(timeoutMs / 1000)} s`;
  const e = err as { code?: string; cause?: { code?: string; message?: string } };
  return `could not be reached (${e.cause?.code ?? e.code ?? e.cause?.message ?? (err as Error)?.message ?? 'unknown error'})`;
}

export interface DispatcherDeps {
  store: Store;
  webhooks: Webhooks;
  outbound: OutboundGuard;
  metrics: Metrics;
}

export class WebhookDispatcher {
  readonly worker = `${os.hostname()}:${process.pid}:wh:${newId().slice(0, 8)}`;
  private readonly leaseMs: number;
  private readonly timeoutMs: number;
  private readonly retryDelaysMs: number[];
  private readonly loop: WorkLoop<WebhookDeliveryRow>;
  /** The endpoints of claimed deliveries, read once per claim for all of them. */
  private endpoints = new Map<string, { url: string; secret: string; disabled: boolean }>();

  constructor(
    private readonly deps: DispatcherDeps,
    options: WebhookDispatcherOptions = {},
  ) {
    this.leaseMs = options.leaseMs ?? 60_000;
    this.timeoutMs = options.timeoutMs ?? 15_000;
    this.retryDelaysMs = options.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS;
    if (this.timeoutMs >= this.leaseMs) throw new Error('webhook dispatcher: timeoutMs must be shorter than leaseMs');
    this.loop = new WorkLoop({
      name: 'webhooks',
      concurrency: options.concurrency ?? 8,
      pollMs: options.pollMs ?? QUEUE_POLL_MS,
      claim: async (limit) => {
        const claimed = await claimDueDeliveries(this.deps.store, this.worker, limit, this.leaseMs);
        // Read fresh each time: a webhook may have been changed, disabled or deleted since.
        const ids = [...new Set(claimed.map((d) => d.webhook_id))];
        const found = await this.deps.webhooks.endpoints(ids);
        for (const id of ids) {
          const endpoint = found.get(id);
          if (endpoint) this.endpoints.set(id, endpoint);
          else this.endpoints.delete(id);
        }
        return claimed;
      },
      handle: (delivery) => this.attempt(delivery, this.endpoints.get(delivery.webhook_id)),
      nextDue: () => nextDeliveryDue(this.deps.store),
    });
  }

  start(): void {
    this.deps.webhooks.wake = (at) => this.wake(at);
    this.loop.start();
  }

  /** Stops claiming; resolves when the deliveries in hand are finished, or after `graceMs` (they are sent again later). */
  async stop(graceMs = Infinity): Promise<void> {
    this.deps.webhooks.wake = () => {};
    await this.loop.stop(graceMs);
  }

  /** A delivery is due at `at`: look then (or now) rather than at the next poll. */
  wake(at: number): void {
    this.loop.wake(at);
  }

  /** One attempt: send, then record its outcome and what happens next. */
  private async attempt(delivery: WebhookDeliveryRow, endpoint: { url: string; secret: string; disabled: boolean } | undefined): Promise<void> {
    if (!endpoint) return this.finish(delivery, 'failed', null, 'The webhook was deleted before this event could be delivered.');
    if (endpoint.disabled) return this.finish(delivery, 'failed', null, 'The webhook is disabled; enable it and redeliver this event.');
    const headers = {
      'content-type': 'application/json',
      'user-agent': 'Herald-Webhooks/1',
      ...signatureHeaders(endpoint.secret, delivery.message_id, delivery.payload),
    };
    let status: number | null = null;
    let error: string | null = null;
    try {
      const response = await this.deps.outbound.fetch(endpoint.url, {
        method: 'POST',
        headers,
        body: delivery.payload,
        signal: AbortSignal.timeout(this.timeoutMs),
        maxRedirects: 0,
      });
      status = response.status;
      if (response.ok) await response.body?.cancel();
      else error = `answered ${status}${await readDetail(response, 300).then((d) => (d ? `: ${d}` : ''))}`;
    } catch (err) {
      error = describeFailure(err, this.timeoutMs);
    }
    if (error === null) return this.finish(delivery, 'delivered', status, null);
    const wait = retryDelayMs(delivery.attempts, this.retryDelaysMs);
    if (wait === undefined) return this.finish(delivery, 'failed', status, `${error} (gave up after ${delivery.attempts} attempts)`);
    return this.finish(delivery, 'pending', status, error, Date.now() + wait);
  }

  private async finish(delivery: WebhookDeliveryRow, state: WebhookDeliveryState, status: number | null, error: string | null, nextAt?: number): Promise<void> {
    const now = Date.now();
    this.deps.metrics.delivery(state === 'pending' ? 'retrying' : state);
    const log: AttemptRecord[] = [...(JSON.parse(delivery.attempt_log) as AttemptRecord[]), { at: now, status, error }];
    await this.deps.store.db
      .updateTable('webhook_deliveries')
      .set({
        state,
        attempt_log: JSON.stringify(log),
        last_status: status,
        last_error: error,
        ...UNLEASED,
        ...(nextAt !== undefined ? { next_attempt_at: nextAt } : {}),
        ...(state === 'delivered' ? { delivered_at: now } : {}),
      })
      .where('id', '=', delivery.id)
      // A worker whose lease ran out must not overwrite the outcome of the one that took over.
      .where(heldBy(this.worker))
      .execute();
    if (nextAt !== undefined) this.wake(nextAt);
  }
}
