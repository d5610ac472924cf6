/**
 * Idempotency-Key handling for creating requests. The first request with a key
 * reserves it; its 2xx answer is stored for 24 h and replayed to a repeat with the
 * same body. A repeat with another body is 422; one that arrives while the first
 * is still running is 409. A failed request frees its key so the caller can retry.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.ts';
import { ApiError } from './errors.ts';

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
const IN_FLIGHT_TIMEOUT_MS = 10 * 60 * 1000;

export type Reservation = { kind: 'fresh' } | { kind: 'replay'; requestHash: string | null; statusCode: number; body: unknown };

export function checkKey(key: string): void {
  if (key.length === 0 || key.length > 255 || !/^[\x21-\x7e]+$/.test(key)) {
    throw new ApiError(400, 'invalid_header', 'Idempotency-Key: must be 1 to 255 visible ASCII characters', [
      { path: 'headers.idempotency-key', message: 'must be 1 to 255 visible ASCII characters' },
    ]);
  }
}

export class Idempotency {
  constructor(private readonly db: Kysely<Database>) {}

  /** Reserves the key for this request, or returns the stored answer of an earlier one. */
  async reserve(accountId: string, key: string, route: string, requestHash: string | null, now = Date.now()): Promise<Reservation> {
    checkKey(key);
    for (let tries = 0; tries < 3; tries++) {
      const existing = await this.db.selectFrom('idempotency_keys').selectAll().where('account_id', '=', accountId).where('key', '=', key).executeTakeFirst();
      if (existing && existing.created_at > now - IDEMPOTENCY_TTL_MS) {
        if (existing.route !== route) {
          throw new ApiError(422, 'idempotency_key_reused', `Idempotency-Key was already used for ${existing.route}`);
        }
        // An in-flight key whose process died long ago is abandoned, not in flight.
        const abandoned = existing.state !== 'done' && existing.created_at < now - IN_FLIGHT_TIMEOUT_MS;
        if (abandoned) {
          await this.db.deleteFrom('idempotency_keys').where('account_id', '=', accountId).where('key', '=', key).where('state', '=', 'in_flight').execute();
          continue;
        }
        if (existing.state !== 'done') throw new ApiError(409, 'idempotency_key_in_flight', 'A request with this Idempotency-Key is still being processed');
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
    throw new ApiError(409, 'idempotency_key_in_flight', 'A request with this Idempotency-Key is still being processed');
  }

  async complete(accountId: string, key: string, requestHash: string | null, statusCode: number, body: unknown): Promise<void> {
    await this.db
      .updateTable('idempotency_keys')
      .set({ state: 'done', status_code: statusCode, response: JSON.stringify(body), request_hash: requestHash })
      .where('account_id', '=', accountId)
      .where('key', '=', key)
      .execute();
  }

  async release(accountId: string, key: string): Promise<void> {
    await this.db.deleteFrom('idempotency_keys').where('account_id', '=', accountId).where('key', '=', key).where('state', '=', 'in_flight').execute();
  }

  async prune(now = Date.now()): Promise<void> {
    await this.db
      .deleteFrom('idempotency_keys')
      .where('created_at', '<', now - IDEMPOTENCY_TTL_MS)
      .execute();
  }
}

export function mismatch(): ApiError {
  return new ApiError(422, 'idempotency_key_mismatch', 'Idempotency-Key was already used with a different request body');
}
