/**
 * The store's work queues, claimed one way: posts (scheduler/claim.ts), webhook
 * deliveries, series, feeds, follow-ups, channels' token renewal, the mail
 * outbox and mail digests. Each queue
 * says which of its rows are due and in which order; `claimRows` marks up to `limit`
 * of them as taken and returns them, in one UPDATE … WHERE key IN (SELECT …)
 * RETURNING *. On PostgreSQL the inner select locks the rows it picks and skips
 * those another worker is claiming (FOR UPDATE SKIP LOCKED), so two workers never
 * take the same row; SQLite runs one writer at a time.
 *
 * A claim is held in one of two ways:
 * - a lease, in tables with lease_owner and lease_until: the row names its worker
 *   until a time, and is free again when nobody holds it or the lease ran out. The
 *   worker's later writes apply only while it still holds it (`heldBy`), so one
 *   whose lease ran out never overwrites the outcome of the worker that took over;
 * - a later due time, in tables without those columns (follow-ups, channels): the
 *   claim moves the row's due time ahead, so nobody finds it due until then.
 */
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Dialect } from './index.ts';
import type { Database } from './schema.ts';

/** Tables whose rows carry a lease (lease_owner, lease_until). */
export type LeasedTable = 'posts' | 'webhook_deliveries' | 'post_series' | 'feeds' | 'mail_outbox';
/** Every table worked as a queue. */
export type QueueTable = LeasedTable | 'post_follow_ups' | 'channels' | 'mail_choices';

/** Each queue's row key (a follow-up is keyed by its post). */
const KEY: Record<QueueTable, string> = {
  posts: 'id',
  webhook_deliveries: 'id',
  post_series: 'id',
  feeds: 'id',
  post_follow_ups: 'post_id',
  channels: 'id',
  mail_outbox: 'id',
  mail_choices: 'user_id',
};

/** How a claim is held: a lease naming the worker, or (tables without lease columns) a due time moved ahead. */
export type Hold<T extends QueueTable> = T extends LeasedTable
  ? { owner: string; ms: number /** Adds one to the row's `attempts` (posts, deliveries count every claim). */; countAttempt?: boolean }
  : { postpone: string & keyof Database[T]; ms: number };

export interface ClaimRequest<T extends QueueTable> {
  table: T;
  /** The name the table goes by in `due` and `order`. */
  as: string;
  /** Which rows are due (for leased tables, whether a lease is free is added here). */
  due: RawBuilder<unknown>;
  /** The order rows are taken in; by an indexed due time, so the first rows come without sorting the whole queue. */
  order?: RawBuilder<unknown>;
  limit: number;
  now: number;
  hold: Hold<T>;
}

/** Nobody holds the row, or its holder's lease ran out by `now`. */
export function leaseFree(now: number, as?: string): RawBuilder<boolean> {
  const until = sql.ref(as ? `${as}.lease_until` : 'lease_until');
  return sql<boolean>`(${until} IS NULL OR ${until} < ${now})`;
}

/** A worker holds the row right now: its lease has not run out by `now` (the opposite of leaseFree). */
export function leaseLive(now: number): RawBuilder<boolean> {
  return sql<boolean>`(lease_owner IS NOT NULL AND lease_until > ${now})`;
}

/** The row is still held by `owner` (a worker's writes after its claim apply only then). */
export function heldBy(owner: string | null): RawBuilder<boolean> {
  return sql<boolean>`lease_owner = ${owner}`;
}

/** What ends a lease. */
export const UNLEASED = { lease_owner: null, lease_until: null } as const;

/** Marks up to `limit` due rows as taken and returns them, as they are after the claim. */
export async function claimRows<T extends QueueTable>(db: Kysely<Database>, dialect: Dialect, request: ClaimRequest<T>): Promise<Database[T][]> {
  const { table, as, due, order, limit, now, hold } = request;
  const key = KEY[table];
  const leased = 'owner' in hold;
  const set = leased
    ? sql`lease_owner = ${hold.owner}, lease_until = ${now + hold.ms}${hold.countAttempt ? sql`, attempts = attempts + 1` : sql``}`
    : sql`${sql.ref(hold.postpone)} = ${now + hold.ms}`;
  const result = await sql<Database[T]>`
    UPDATE ${sql.table(table)} SET ${set}
    WHERE ${sql.ref(key)} IN (
      SELECT ${sql.ref(`${as}.${key}`)} FROM ${sql.table(table)} ${sql.id(as)}
      WHERE ${due}${leased ? sql` AND ${leaseFree(now, as)}` : sql``}
      ${order ? sql`ORDER BY ${order}` : sql``}
      LIMIT ${limit}
      ${dialect === 'postgres' ? sql`FOR UPDATE SKIP LOCKED` : sql``}
    )
    RETURNING *`.execute(db);
  return result.rows;
}

/** Keeps `owner`'s lease on a row until `until`; nothing when another worker holds it now. */
export async function extendLease(db: Kysely<Database>, table: LeasedTable, id: string, owner: string | null, until: number): Promise<void> {
  await sql`UPDATE ${sql.table(table)} SET lease_until = ${until} WHERE id = ${id} AND ${heldBy(owner)}`.execute(db);
}

/** Ends `owner`'s lease on a row without changing anything else; nothing when another worker holds it now. */
export async function releaseLease(db: Kysely<Database>, table: LeasedTable, id: string, owner: string): Promise<void> {
  await sql`UPDATE ${sql.table(table)} SET lease_owner = NULL, lease_until = NULL WHERE id = ${id} AND ${heldBy(owner)}`.execute(db);
}

/**
 * When the next of the rows `where` picks becomes claimable: its due time, or its
 * lease's end if that comes later. Undefined when there is none.
 */
export async function nextClaimable(db: Kysely<Database>, table: LeasedTable, dueColumn: string, where: RawBuilder<unknown>): Promise<number | undefined> {
  const due = sql.ref(dueColumn);
  const row = await sql<{ at: number | null }>`
    SELECT MIN(CASE WHEN lease_until IS NOT NULL AND lease_until > ${due} THEN lease_until ELSE ${due} END) AS at
    FROM ${sql.table(table)} WHERE ${where}`.execute(db);
  const at = row.rows[0]?.at;
  return at === null || at === undefined ? undefined : Number(at);
}
