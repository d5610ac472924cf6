/** A write refused because it would repeat a value a unique index holds (PostgreSQL 23505, SQLite's UNIQUE constraint). */
export function isUniqueViolation(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || (code === 'SQLITE_CONSTRAINT' && /UNIQUE/.test(err.message));
}
