/**
 * Pending device authorizations (RFC 8628), kept in Herald's database so any
 * number of auth-server processes share them. A request lives 15 minutes; it is
 * deleted once its token is fetched, once it is refused, or at the first access
 * after it expired. The device code is stored as SHA-256, the token sealed.
 */
import crypto from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database, DeviceRequestRow } from '../db/schema.ts';
import { randomToken, sha256, type SecretBox } from '../lib/secrets.ts';

export const DEVICE_REQUEST_TTL_MS = 15 * 60_000;
/** RFC 8628 3.5: each slow_down adds this to the interval. */
const SLOW_DOWN_STEP_S = 5;
/** Polls this much early still count as on time (timers and networks are not exact). */
const POLL_TOLERANCE = 0.8;

// Consonants only (RFC 8628 6.1): no words, no look-alikes (no vowels, 0/O, 1/I).
const USER_CODE_ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ';
const USER_CODE_LENGTH = 8;

/** "bcdf-ghjk", "BCDF GHJK" and "BCDFGHJK" are the same code. */
export function normalizeUserCode(input: string): string {
  return input.toUpperCase().replace(/[\s-]/g, '');
}

export function formatUserCode(code: string): string {
  return `${code.slice(0, 4)}-${code.slice(4)}`;
}

function newUserCode(): string {
  let code = '';
  // Rejection sampling keeps every letter equally likely.
  while (code.length < USER_CODE_LENGTH) {
    const byte = crypto.randomBytes(1)[0];
    if (byte < 256 - (256 % USER_CODE_ALPHABET.length)) code += USER_CODE_ALPHABET[byte % USER_CODE_ALPHABET.length];
  }
  return code;
}

export type PollResult =
  | { kind: 'unknown' }
  | { kind: 'expired' }
  | { kind: 'slow_down'; interval: number }
  | { kind: 'pending' }
  | { kind: 'denied' }
  | { kind: 'approved'; token: TokenGrant };

/** What Herald's token endpoint answered, kept until the device fetches it. */
export interface TokenGrant {
  access_token: string;
  token_type: string;
  expires_in?: number;
  scope?: string;
  /** Herald's account id. */
  id: string;
}

export class DeviceRequests {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly box: SecretBox,
  ) {}

  async create(intervalSeconds: number, scope: string | undefined, now = Date.now()): Promise<{ deviceCode: string; userCode: string; expiresAt: number }> {
    // Requests abandoned long ago go now; a fresh expiry is left for its poller to learn about.
    await this.db
      .deleteFrom('device_requests')
      .where('expires_at', '<', now - DEVICE_REQUEST_TTL_MS)
      .execute();
    const deviceCode = randomToken('hdc_');
    const expiresAt = now + DEVICE_REQUEST_TTL_MS;
    for (let attempt = 0; ; attempt++) {
      const userCode = newUserCode();
      try {
        await this.db
          .insertInto('device_requests')
          .values({
            device_code_hash: sha256(deviceCode),
            user_code: userCode,
            state: null,
            code_verifier: null,
            scope: scope ?? null,
            status: 'pending',
            token_sealed: null,
            interval_seconds: intervalSeconds,
            last_polled_at: null,
            created_at: now,
            expires_at: expiresAt,
          })
          .execute();
        return { deviceCode, userCode, expiresAt };
      } catch (err) {
        // Another live request drew the same user code: draw again.
        if (attempt >= 5) throw err;
      }
    }
  }

  /** Deletes `row` when it expired; true when it did. */
  private async dropIfExpired(row: DeviceRequestRow, now: number): Promise<boolean> {
    if (row.expires_at > now) return false;
    await this.db.deleteFrom('device_requests').where('device_code_hash', '=', row.device_code_hash).execute();
    return true;
  }

  /** The user entered a code: the pending request it names gets a fresh OAuth state and PKCE verifier. */
  async begin(userCodeInput: string, now = Date.now()): Promise<{ state: string; codeVerifier: string; scope: string | null } | undefined> {
    const row = await this.db.selectFrom('device_requests').selectAll().where('user_code', '=', normalizeUserCode(userCodeInput)).executeTakeFirst();
    if (!row || (await this.dropIfExpired(row, now)) || row.status !== 'pending') return undefined;
    const state = randomToken();
    const codeVerifier = randomToken();
    await this.db.updateTable('device_requests').set({ state, code_verifier: codeVerifier }).where('device_code_hash', '=', row.device_code_hash).execute();
    return { state, codeVerifier, scope: row.scope };
  }

  /** The pending request Herald's redirect names by `state`. */
  async byState(state: string, now = Date.now()): Promise<DeviceRequestRow | 'expired' | undefined> {
    const row = await this.db.selectFrom('device_requests').selectAll().where('state', '=', state).executeTakeFirst();
    if (!row) return undefined;
    if (await this.dropIfExpired(row, now)) return 'expired';
    return row.status === 'pending' ? row : undefined;
  }

  async approve(row: DeviceRequestRow, token: TokenGrant): Promise<void> {
    await this.db
      .updateTable('device_requests')
      .set({ status: 'approved', token_sealed: this.box.encrypt(JSON.stringify(token)), state: null, code_verifier: null })
      .where('device_code_hash', '=', row.device_code_hash)
      .where('status', '=', 'pending')
      .execute();
  }

  async deny(row: DeviceRequestRow): Promise<void> {
    await this.db
      .updateTable('device_requests')
      .set({ status: 'denied', state: null, code_verifier: null })
      .where('device_code_hash', '=', row.device_code_hash)
      .execute();
  }

  /** One poll of /device/token. A finished request is answered once, then deleted. */
  async poll(deviceCode: string, now = Date.now()): Promise<PollResult> {
    const hash = sha256(deviceCode);
    const row = await this.db.selectFrom('device_requests').selectAll().where('device_code_hash', '=', hash).executeTakeFirst();
    if (!row) return { kind: 'unknown' };
    if (await this.dropIfExpired(row, now)) return { kind: 'expired' };
    if (row.status === 'approved' || row.status === 'denied') {
      // Deleting is what hands the answer out: of two simultaneous polls only one wins.
      const taken = await this.db.deleteFrom('device_requests').where('device_code_hash', '=', hash).executeTakeFirst();
      if (Number(taken.numDeletedRows) !== 1) return { kind: 'unknown' };
      return row.status === 'denied' ? { kind: 'denied' } : { kind: 'approved', token: JSON.parse(this.box.decrypt(row.token_sealed!)) };
    }
    if (row.last_polled_at !== null && now - row.last_polled_at < row.interval_seconds * 1000 * POLL_TOLERANCE) {
      const interval = row.interval_seconds + SLOW_DOWN_STEP_S;
      await this.db.updateTable('device_requests').set({ interval_seconds: interval, last_polled_at: now }).where('device_code_hash', '=', hash).execute();
      return { kind: 'slow_down', interval };
    }
    await this.db.updateTable('device_requests').set({ last_polled_at: now }).where('device_code_hash', '=', hash).execute();
    return { kind: 'pending' };
  }
}
