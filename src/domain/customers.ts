/**
 * Customers: the public API's "groups" of channels (GET /groups, the `customer`
 * filter of GET /posts, `?group=` of GET /integrations). An agency keeps one
 * customer per client and assigns each channel to at most one.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.ts';
import { newId } from '../lib/ids.ts';
import { iso } from '../lib/time.ts';
import { ApiError, notFound } from './errors.ts';

export interface CustomerView {
  id: string;
  name: string;
  createdAt: string;
  /** Ids of the live channels assigned to this customer. */
  channels: string[];
}

export class Customers {
  constructor(private readonly db: Kysely<Database>) {}

  async list(accountId: string): Promise<CustomerView[]> {
    const [rows, assigned] = await Promise.all([
      this.db.selectFrom('customers').selectAll().where('account_id', '=', accountId).orderBy('name').execute(),
      this.db
        .selectFrom('channels')
        .select(['id', 'customer_id'])
        .where('account_id', '=', accountId)
        .where('deleted_at', 'is', null)
        .where('customer_id', 'is not', null)
        .orderBy('created_at')
        .execute(),
    ]);
    return rows.map((r) => ({
      id: r.id,
      name: r.name,
      createdAt: iso(r.created_at),
      channels: assigned.filter((c) => c.customer_id === r.id).map((c) => c.id),
    }));
  }

  async get(accountId: string, id: string): Promise<CustomerView> {
    const found = (await this.list(accountId)).find((c) => c.id === id);
    if (!found) throw notFound('Customer', id);
    return found;
  }

  async create(accountId: string, name: string, now = Date.now()): Promise<CustomerView> {
    const row = { id: newId(), account_id: accountId, name, created_at: now };
    await this.db.insertInto('customers').values(row).execute();
    return { id: row.id, name, createdAt: iso(now), channels: [] };
  }

  async rename(accountId: string, id: string, name: string): Promise<CustomerView> {
    const done = await this.db.updateTable('customers').set({ name }).where('account_id', '=', accountId).where('id', '=', id).executeTakeFirst();
    if (Number(done.numUpdatedRows) === 0) throw notFound('Customer', id);
    return this.get(accountId, id);
  }

  /** Deletes the customer; its channels stay, without a customer. */
  async remove(accountId: string, id: string): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      // Removed channels keep their row (and the reference), so every channel is released, live or not.
      await trx.updateTable('channels').set({ customer_id: null }).where('account_id', '=', accountId).where('customer_id', '=', id).execute();
      const done = await trx.deleteFrom('customers').where('account_id', '=', accountId).where('id', '=', id).executeTakeFirst();
      if (Number(done.numDeletedRows) === 0) throw notFound('Customer', id);
    });
  }

  /**
   * Makes `channelIds` exactly the channels of this customer: listed channels
   * move here (from any other customer), channels no longer listed are released.
   */
  async assignChannels(accountId: string, id: string, channelIds: string[]): Promise<CustomerView> {
    await this.get(accountId, id);
    const wanted = [...new Set(channelIds)];
    if (wanted.length > 0) {
      const found = await this.db
        .selectFrom('channels')
        .select('id')
        .where('account_id', '=', accountId)
        .where('deleted_at', 'is', null)
        .where('id', 'in', wanted)
        .execute();
      const known = new Set(found.map((r) => r.id));
      const index = wanted.findIndex((c) => !known.has(c));
      if (index >= 0) {
        throw new ApiError('not_found', `channels.${index}: channel ${JSON.stringify(wanted[index])} does not exist in this account`, [
          { path: `channels.${index}`, message: 'no such channel in this account' },
        ]);
      }
    }
    await this.db.transaction().execute(async (trx) => {
      let release = trx.updateTable('channels').set({ customer_id: null }).where('account_id', '=', accountId).where('customer_id', '=', id);
      if (wanted.length > 0) release = release.where('id', 'not in', wanted);
      await release.execute();
      if (wanted.length > 0) await trx.updateTable('channels').set({ customer_id: id }).where('account_id', '=', accountId).where('id', 'in', wanted).execute();
    });
    return this.get(accountId, id);
  }
}
