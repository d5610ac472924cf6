/**
 * Account webhooks: endpoints an account registers to hear about its posts and
 * channels. Each event becomes one delivery per subscribed endpoint, stored
 * first and sent by the webhook dispatcher, so nothing is lost when an endpoint
 * is down and every attempt can be looked at (and sent again) later.
 */
import type { Kysely } from 'kysely';
import type { Database, WebhookDeliveryRow, WebhookRow } from '../db/schema.ts';
import { hotQuery } from '../db/hot-query.ts';
import { tables, type ChangeSignal } from '../db/changes.ts';
import { ReadCache } from '../db/read-cache.ts';
import { newId } from '../lib/ids.ts';
import { OutboundRefused, type OutboundGuard } from '../lib/outbound.ts';
import type { SecretBox } from '../lib/secrets.ts';
import { iso } from '../lib/time.ts';
import { newWebhookSecret } from '../lib/webhook-signature.ts';
import type { WebhookEvent } from '../contract/webhooks.ts';
import { conflict, invalidField, notFound } from './errors.ts';

/** Sent only on request (POST /webhooks/{id}/test), whatever the subscription. */
export const PING_EVENT = 'ping';

export const DELIVERIES_PAGE_SIZE = 50;
/** How long the log of finished deliveries is kept. */
export const DELIVERY_RETENTION_MS = 30 * 86_400_000;

export interface WebhookView {
  id: string;
  name: string | null;
  url: string;
  events: WebhookEvent[];
  disabled: boolean;
  createdAt: string;
  updatedAt: string;
}

export interface AttemptRecord {
  at: number;
  status: number | null;
  error: string | null;
}

function view(row: WebhookRow): WebhookView {
  return {
    id: row.id,
    name: row.name,
    url: row.url,
    events: JSON.parse(row.events),
    disabled: row.disabled === 1,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}

function deliveryView(row: WebhookDeliveryRow) {
  return {
    id: row.id,
    webhookId: row.webhook_id,
    messageId: row.message_id,
    event: row.event_type,
    state: row.state,
    attempts: row.attempts,
    nextAttemptAt: row.state === 'pending' ? iso(row.next_attempt_at) : null,
    lastStatus: row.last_status,
    lastError: row.last_error,
    createdAt: iso(row.created_at),
    deliveredAt: row.delivered_at === null ? null : iso(row.delivered_at),
    payload: JSON.parse(row.payload) as { type: string; timestamp: string; data: Record<string, unknown> },
    attemptLog: (JSON.parse(row.attempt_log) as AttemptRecord[]).map((a) => ({ at: iso(a.at), status: a.status, error: a.error })),
  };
}

/** A new delivery row, due now. */
function pendingDelivery(webhook: Pick<WebhookRow, 'id' | 'account_id'>, messageId: string, type: string, payload: string, now: number): WebhookDeliveryRow {
  return {
    id: newId(),
    webhook_id: webhook.id,
    account_id: webhook.account_id,
    message_id: messageId,
    event_type: type,
    payload,
    state: 'pending',
    attempts: 0,
    attempt_log: '[]',
    next_attempt_at: now,
    lease_owner: null,
    lease_until: null,
    last_status: null,
    last_error: null,
    created_at: now,
    delivered_at: null,
  };
}

/** The body every endpoint receives, as the Standard Webhooks specification shapes it. */
export function eventPayload(type: string, data: Record<string, unknown>, now: number): string {
  return JSON.stringify({ type, timestamp: iso(now), data });
}

/** For how many accounts the endpoint list is kept in memory. */
const SUBSCRIBERS_CACHED = 10_000;

export class Webhooks {
  /** Tells the local dispatcher that a delivery is due at `at`; the dispatcher replaces this no-op when it runs here. */
  wake: (at: number) => void = () => {};
  /** Asked on every post change, so compiled once. */
  private readonly subscribersQuery;
  /** Each account's live endpoints, kept until the webhooks table changes: every post published asks. */
  private readonly recent: ReadCache<Pick<WebhookRow, 'id' | 'account_id' | 'events'>[]>;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly box: SecretBox,
    private readonly outbound: OutboundGuard,
    changes: ChangeSignal,
  ) {
    this.recent = new ReadCache(changes, tables('webhooks'), { entries: SUBSCRIBERS_CACHED });
    this.subscribersQuery = hotQuery<{ account: string }, Pick<WebhookRow, 'id' | 'account_id' | 'events'>>(db, ['account'], (p) =>
      db
        .selectFrom('webhooks')
        .select(['id', 'account_id', 'events'])
        .where('account_id', '=', p.account)
        .where('deleted_at', 'is', null)
        .where('disabled', '=', 0),
    );
  }

  private async row(accountId: string, id: string): Promise<WebhookRow> {
    const row = await this.db
      .selectFrom('webhooks')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    if (!row) throw notFound('Webhook', id);
    return row;
  }

  /** Only public addresses (or hosts the operator allowed) may receive events. */
  private async checkUrl(raw: string): Promise<void> {
    try {
      // A name is resolved now so that "localhost" or an internal name is refused at once, not at the first event.
      await this.outbound.checkReachable(raw);
    } catch (err) {
      if (err instanceof OutboundRefused) throw invalidField('url', err.reason, 'url_refused');
      throw err;
    }
  }

  async list(accountId: string): Promise<WebhookView[]> {
    const rows = await this.db
      .selectFrom('webhooks')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('deleted_at', 'is', null)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows.map(view);
  }

  async get(accountId: string, id: string): Promise<WebhookView> {
    return view(await this.row(accountId, id));
  }

  /** Registers an endpoint; the signing secret is returned here and never again. */
  async create(accountId: string, input: { url: string; events: WebhookEvent[]; name?: string }): Promise<{ webhook: WebhookView; secret: string }> {
    await this.checkUrl(input.url);
    const secret = newWebhookSecret();
    const now = Date.now();
    const row: WebhookRow = {
      id: newId(),
      account_id: accountId,
      name: input.name ?? null,
      url: input.url,
      events: JSON.stringify([...new Set(input.events)]),
      secret_sealed: this.box.encrypt(secret),
      disabled: 0,
      created_at: now,
      updated_at: now,
      deleted_at: null,
    };
    await this.db.insertInto('webhooks').values(row).execute();
    return { webhook: view(row), secret };
  }

  async update(
    accountId: string,
    id: string,
    input: { url?: string; events?: WebhookEvent[]; name?: string | null; disabled?: boolean },
  ): Promise<WebhookView> {
    await this.row(accountId, id);
    if (input.url !== undefined) await this.checkUrl(input.url);
    const set: Partial<WebhookRow> = { updated_at: Date.now() };
    if (input.url !== undefined) set.url = input.url;
    if (input.events !== undefined) set.events = JSON.stringify([...new Set(input.events)]);
    if (input.name !== undefined) set.name = input.name;
    if (input.disabled !== undefined) set.disabled = input.disabled ? 1 : 0;
    await this.db.updateTable('webhooks').set(set).where('id', '=', id).where('account_id', '=', accountId).execute();
    return this.get(accountId, id);
  }

  /** Removes an endpoint; deliveries still waiting for it end as failed (their log stays readable until then). */
  async remove(accountId: string, id: string): Promise<void> {
    await this.row(accountId, id);
    const now = Date.now();
    await this.db.transaction().execute(async (tx) => {
      await tx.updateTable('webhooks').set({ deleted_at: now, updated_at: now }).where('id', '=', id).execute();
      await tx
        .updateTable('webhook_deliveries')
        .set({ state: 'failed', last_error: 'The webhook was deleted before this event could be delivered.', lease_owner: null, lease_until: null })
        .where('webhook_id', '=', id)
        .where('state', '=', 'pending')
        .execute();
    });
  }

  /** Where and with which secret to send, for endpoints not deleted; deleted ones are absent. */
  async endpoints(ids: string[]): Promise<Map<string, { url: string; secret: string; disabled: boolean }>> {
    if (ids.length === 0) return new Map();
    const rows = await this.db
      .selectFrom('webhooks')
      .select(['id', 'url', 'secret_sealed', 'disabled'])
      .where('id', 'in', ids)
      .where('deleted_at', 'is', null)
      .execute();
    return new Map(rows.map((r) => [r.id, { url: r.url, secret: this.box.decrypt(r.secret_sealed), disabled: r.disabled === 1 }]));
  }

  /**
   * Records one delivery of each event for every live endpoint of the account
   * that subscribed to it, through `db` (the transaction of the change the events
   * describe). One indexed lookup when the account has no webhooks.
   */
  async record(accountId: string, events: { type: WebhookEvent; data: Record<string, unknown> }[], now: number, db: Kysely<Database>): Promise<number> {
    if (events.length === 0) return 0;
    // Read through the caller's transaction: SQLite has one connection, which the transaction holds.
    const endpoints = await this.recent.get(accountId, () => this.subscribersQuery({ account: accountId }, db));
    if (endpoints.length === 0) return 0;
    const rows: WebhookDeliveryRow[] = [];
    for (const { type, data } of events) {
      const subscribed = endpoints.filter((w) => (JSON.parse(w.events) as string[]).includes(type));
      if (subscribed.length === 0) continue;
      // One message id per event: every endpoint sees the same webhook-id for it.
      const messageId = `msg_${newId()}`;
      const payload = eventPayload(type, data, now);
      rows.push(...subscribed.map((w) => pendingDelivery(w, messageId, type, payload, now)));
    }
    if (rows.length === 0) return 0;
    await db.insertInto('webhook_deliveries').values(rows).execute();
    return rows.length;
  }

  /** Queues a ping event for one endpoint, whatever it subscribed to. */
  async ping(accountId: string, id: string) {
    const webhook = await this.row(accountId, id);
    if (webhook.disabled) throw conflict('webhook_disabled', `Webhook ${id} is disabled; enable it (PATCH disabled: false) before testing it`);
    const now = Date.now();
    const row = pendingDelivery(
      webhook,
      `msg_${newId()}`,
      PING_EVENT,
      eventPayload(PING_EVENT, { webhook: { id: webhook.id, name: webhook.name, url: webhook.url } }, now),
      now,
    );
    await this.db.insertInto('webhook_deliveries').values(row).execute();
    this.wake(now);
    return deliveryView(row);
  }

  /** Sends a recorded event again, with the same webhook-id and body, as a new delivery. */
  async redeliver(accountId: string, id: string, deliveryId: string) {
    const webhook = await this.row(accountId, id);
    if (webhook.disabled) throw conflict('webhook_disabled', `Webhook ${id} is disabled; enable it (PATCH disabled: false) before redelivering`);
    const original = await this.db
      .selectFrom('webhook_deliveries')
      .selectAll()
      .where('id', '=', deliveryId)
      .where('webhook_id', '=', id)
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    if (!original) throw notFound('Delivery', deliveryId);
    const now = Date.now();
    const row = pendingDelivery(webhook, original.message_id, original.event_type, original.payload, now);
    await this.db.insertInto('webhook_deliveries').values(row).execute();
    this.wake(now);
    return deliveryView(row);
  }

  /** Drops finished deliveries older than `keepMs` (pending ones stay until they end). */
  async prune(keepMs = DELIVERY_RETENTION_MS, now = Date.now()): Promise<void> {
    // next_attempt_at of a finished delivery is no later than its last attempt, and (state, next_attempt_at) is indexed.
    await this.db
      .deleteFrom('webhook_deliveries')
      .where('state', 'in', ['delivered', 'failed'])
      .where('next_attempt_at', '<', now - keepMs)
      .execute();
  }

  /** Deliveries to one endpoint, newest first; `page` counts from 0. */
  async deliveries(accountId: string, id: string, page: number) {
    await this.row(accountId, id);
    const limit = DELIVERIES_PAGE_SIZE;
    const rows = await this.db
      .selectFrom('webhook_deliveries')
      .selectAll()
      .where('webhook_id', '=', id)
      .where('account_id', '=', accountId)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit + 1)
      .offset(page * limit)
      .execute();
    return { deliveries: rows.slice(0, limit).map(deliveryView), page, limit, hasMore: rows.length > limit };
  }
}
