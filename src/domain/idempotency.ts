/**
 * Idempotency keys for creating requests: the public API's Idempotency-Key
 * header and the MCP tools' idempotency_key argument share these rules and this
 * store. The first request with a key reserves it; its answer is stored for 24 h
 * and replayed to a repeat with the same fingerprint. A repeat with another
 * fingerprint is 422; one that arrives while the first is still running is 409.
 * A failed request frees its key so the caller can retry.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.ts';
import { sha256 } from '../lib/secrets.ts';
import { ApiError } from './errors.ts';

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
const IN_FLIGHT_TIMEOUT_MS = 10 * 60 * 1000;

/** A key is 1 to KEY_MAX_LENGTH visible ASCII characters (the MCP argument's schema states the same rule). */
export const KEY_MAX_LENGTH = 255;
export const KEY_PATTERN = /^[\x21-\x7e]+$/;

/** What a creating request answers: its status and body, and its fingerprint when known only after it ran (an upload's bytes). */
export interface Answer<T> {
  status: number;
  body: T;
  hash?: string;
}

type Reservation = { kind: 'fresh' } | { kind: 'replay'; requestHash: string | null; statusCode: number; body: unknown };

/** The fingerprint of a request's arguments (a JSON body as sent, a tool's arguments). */
export function fingerprint(value: unknown): string {
  return sha256(JSON.stringify(value ?? null));
}

export function checkKey(key: string): void {
  if (key.length === 0 || key.length > KEY_MAX_LENGTH || !KEY_PATTERN.test(key)) {
    throw new ApiError('invalid_header', 'Idempotency-Key: must be 1 to 255 visible ASCII characters', [
      { path: 'headers.idempotency-key', message: 'must be 1 to 255 visible ASCII characters' },
    ]);
  }
}

export class Idempotency {
  constructor(private readonly db: Kysely<Database>) {}

  /**
   * Runs `work` once per key of the account: without a key it simply runs; with
   * one, a repeat gets the first answer back (`replayed`) and runs nothing.
   * `operation` names what the key was used for (a route, a tool). `hash` is the
   * request's fingerprint; null when it is known only once `work` read the
   * request (an upload), which then returns it, and `rehash` computes it for a
   * repeat without storing anything.
   */
  async once<T>(
    accountId: string,
    key: string | undefined,
    operation: string,
    hash: string | null,
    work: () => Promise<Answer<T>>,
    rehash?: () => Promise<string>,
  ): Promise<Answer<T> & { replayed: boolean }> {
    if (key === undefined) return { ...(await work()), replayed: false };
    const reservation = await this.reserve(accountId, key, operation, hash);
    if (reservation.kind === 'replay') {
      if (hash === null && rehash && (await rehash()) !== reservation.requestHash) throw mismatch();
      return { status: reservation.statusCode, body: reservation.body as T, replayed: true };
    }
    try {
      const answer = await work();
      await this.complete(accountId, key, hash ?? answer.hash ?? null, answer.status, answer.body);
      return { ...answer, replayed: false };
    } catch (err) {
      await this.release(accountId, key);
      throw err;
    }
  }

  /** Reserves the key for this request, or returns the stored answer of an earlier one. */
  private async reserve(accountId: string, key: string, route: string, requestHash: string | null, now = Date.now()): Promise<Reservation> {
    checkKey(key);
    for (let tries = 0; tries < 3; tries++) {
      const existing = await this.db.selectFrom('idempotency_keys').selectAll().where('account_id', '=', accountId).where('key', '=', key).executeTakeFirst();
      if (existing && existing.created_at > now - IDEMPOTENCY_TTL_MS) {
        if (existing.route !== route) {
          throw new ApiError('idempotency_key_reused', `Idempotency-Key was already used for ${existing.route}`);
        }
        // An in-flight key whose process died long ago is abandoned, not in flight.
        const abandoned = existing.state !== 'done' && existing.created_at < now - IN_FLIGHT_TIMEOUT_MS;
        if (abandoned) {
          await this.db.deleteFrom('idempotency_keys').where('account_id', '=', accountId).where('key', '=', key).where('state', '=', 'in_flight').execute();
          continue;
        }
        if (existing.state !== 'done') throw new ApiError('idempotency_key_in_flight', 'A request with this Idempotency-Key is still being processed');
        if (requestHash !== null && existing.request_hash !== requestHash) throw mismatch();
        return { kind: 'replay', requestHash: existing.request_hash, statusCode: existing.status_code!, body: JSON.parse(existing.response!) };
      }
      if (existing)
        await this.db
          .deleteFrom('idempotency_keys')
          .where('account_id', '=', accountId)
          .where('key', '=', key)
          .where('created_at', '=', existing.created_at)
          .execute();
      const inserted = await this.db
        .insertInto('idempotency_keys')
        .values({ account_id: accountId, key, route, request_hash: requestHash, state: 'in_flight', status_code: null, response: null, created_at: now })
        .onConflict((oc) => oc.columns(['account_id', 'key']).doNothing())
        .returning('key')
        .executeTakeFirst();
      if (inserted) return { kind: 'fresh' };
      // Someone reserved it between our read and insert: read again.
    }
    throw new ApiError('idempotency_key_in_flight', 'A request with this Idempotency-Key is still being processed');
  }

  private async complete(accountId: string, key: string, requestHash: string | null, statusCode: number, body: unknown): Promise<void> {
    await this.db
      .updateTable('idempotency_keys')
      .set({ state: 'done', status_code: statusCode, response: JSON.stringify(body), request_hash: requestHash })
      .where('account_id', '=', accountId)
      .where('key', '=', key)
      .execute();
  }

  private async release(accountId: string, key: string): Promise<void> {
    await this.db.deleteFrom('idempotency_keys').where('account_id', '=', accountId).where('key', '=', key).where('state', '=', 'in_flight').execute();
  }

  async prune(now = Date.now()): Promise<void> {
    await this.db
      .deleteFrom('idempotency_keys')
      .where('created_at', '<', now - IDEMPOTENCY_TTL_MS)
      .execute();
  }
}

function mismatch(): ApiError {
  return new ApiError('idempotency_key_mismatch', 'Idempotency-Key was already used with a different request body');
}
