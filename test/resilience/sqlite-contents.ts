import SqliteDatabase from 'libsql';

/** Every row of every table of the SQLite file, as text: what "untouched" is checked against. */
export function sqliteContents(file: string): string {
  const db = new SqliteDatabase(file, { readonly: true });
  try {
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as { name: string }[];
    return JSON.stringify(tables.map(({ name }) => [name, db.prepare(`SELECT * FROM "${name}" ORDER BY rowid`).all()]));
  } finally {
    db.close();
  }
}
