import type { Database } from './sqlite-driver.js'

// Append only: a released migration is never edited, a change is a new version.
const migrations: ReadonlyArray<{ version: number, name: string, sql: string }> = [
  {
    version: 1,
    name: 'create plants',
    sql: `CREATE TABLE plants (
            id   INTEGER PRIMARY KEY,
            name TEXT NOT NULL,
            tag  TEXT
          ) STRICT`,
  },
]

export function applySqliteMigrations (database: Database): void {
  database.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
                   version    INTEGER PRIMARY KEY,
                   name       TEXT NOT NULL,
                   applied_at TEXT NOT NULL
                 ) STRICT`)
  const appliedVersions = database.prepare('SELECT version FROM schema_migrations').pluck()
  const recordMigration = database.prepare(
    "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, strftime('%Y-%m-%dT%H:%M:%fZ'))")
  // IMMEDIATE takes the write lock first, so two processes starting on one file apply each
  // migration once.
  database.transaction(() => {
    // Versions may come back as bigints (safe-integer mode), so compare them as numbers.
    const applied = new Set(appliedVersions.all().map(Number))
    for (const migration of migrations) {
      if (applied.has(migration.version)) continue
      database.exec(migration.sql)
      recordMigration.run(migration.version, migration.name)
    }
  }).immediate()
}
