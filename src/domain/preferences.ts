/** Each person's display preferences: read, and changed field by field. */
import type { Kysely } from 'kysely';
import type { Database, PersonPreferencesRow } from '../db/schema.ts';
import type { Clock, Language, PersonPreferences, PreferencesChange } from '../contract/preferences.ts';

const NOTHING_CHOSEN: PersonPreferences = { language: null, zone: null, weekStart: null, clock: null };

function view(row: PersonPreferencesRow | undefined): PersonPreferences {
  if (!row) return NOTHING_CHOSEN;
  return {
    language: row.language as Language | null,
    zone: row.zone,
    weekStart: row.week_start === null ? null : (row.week_start as 0 | 1),
    clock: row.clock as Clock | null,
  };
}

export class Preferences {
  constructor(private readonly db: Kysely<Database>) {}

  async of(userId: string): Promise<PersonPreferences> {
    return view(await this.db.selectFrom('person_preferences').selectAll().where('user_id', '=', userId).executeTakeFirst());
  }

  /** Fields left out keep their value; the row is written whole, so two stores agree on one statement. */
  async change(userId: string, change: PreferencesChange, now = Date.now()): Promise<PersonPreferences> {
    const next = { ...(await this.of(userId)), ...change };
    const row: PersonPreferencesRow = {
      user_id: userId,
      language: next.language,
      zone: next.zone,
      week_start: next.weekStart,
      clock: next.clock,
      updated_at: now,
    };
    const { user_id: _, ...columns } = row;
    await this.db
      .insertInto('person_preferences')
      .values(row)
      .onConflict((c) => c.column('user_id').doUpdateSet(columns))
      .execute();
    return view(row);
  }
}
