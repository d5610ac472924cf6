/**
 * An account's reusable texts, shared by its team: templates a post starts
 * from, and signatures added at the end of a post.
 */
import type { Kysely } from 'kysely';
import type { Database, TemplateRow } from '../db/schema.ts';
import { newId } from '../lib/ids.ts';
import { iso } from '../lib/time.ts';
import { notFound } from './errors.ts';

import { TEMPLATE_KINDS } from '../contract/routes/app.ts';

export { TEMPLATE_KINDS };
export type TemplateKind = (typeof TEMPLATE_KINDS)[number];

export interface TemplateView {
  id: string;
  kind: TemplateKind;
  name: string;
  content: string;
  updatedAt: string;
}

function view(row: TemplateRow): TemplateView {
  return { id: row.id, kind: row.kind, name: row.name, content: row.content, updatedAt: iso(row.updated_at) };
}

export class Templates {
  constructor(private readonly db: Kysely<Database>) {}

  async list(accountId: string): Promise<TemplateView[]> {
    const rows = await this.db.selectFrom('templates').selectAll().where('account_id', '=', accountId).orderBy('kind').orderBy('name').execute();
    return rows.map(view);
  }

  async create(accountId: string, input: { kind: TemplateKind; name: string; content: string }, now = Date.now()): Promise<TemplateView> {
    const row: TemplateRow = { id: newId(), account_id: accountId, ...input, created_at: now, updated_at: now };
    await this.db.insertInto('templates').values(row).execute();
    return view(row);
  }

  async update(accountId: string, id: string, input: { name?: string; content?: string }, now = Date.now()): Promise<TemplateView> {
    const done = await this.db
      .updateTable('templates')
      .set({ ...input, updated_at: now })
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .executeTakeFirst();
    if (Number(done.numUpdatedRows) === 0) throw notFound('Template', id);
    const row = await this.db.selectFrom('templates').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    return view(row);
  }

  async remove(accountId: string, id: string): Promise<void> {
    const done = await this.db.deleteFrom('templates').where('account_id', '=', accountId).where('id', '=', id).executeTakeFirst();
    if (Number(done.numDeletedRows) === 0) throw notFound('Template', id);
  }
}
