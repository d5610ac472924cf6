import type { Kysely } from 'kysely';

const ms = 'bigint';

/**
 * Per-network publishing slots shared by every worker: a worker holds one slot
 * (with a lease, so a dead worker's slot frees itself) while it publishes.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('network_slots')
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('slot', 'integer', (c) => c.notNull())
    .addColumn('holder', 'text')
    .addColumn('held_until', ms, (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('network_slots_pk', ['name', 'slot'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('network_slots').execute();
}
