import type { MigrationConnection } from '../migration-runner.js'
import type { Migration } from '../migrations.js'
import type { Database } from './sqlite-driver.js'

// IMMEDIATE takes the write lock first, so two processes starting on one file apply each
// migration once.
export function sqliteMigrationConnection (database: Database): MigrationConnection {
  const recordMigration = (migration: Migration): void => {
    database.prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, strftime('%Y-%m-%dT%H:%M:%fZ'))")
      .run(migration.version, migration.name)
  }
  return {
    async beginLocked () {
      database.exec('BEGIN IMMEDIATE')
      database.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
                       version    INTEGER PRIMARY KEY,
                       name       TEXT NOT NULL,
                       applied_at TEXT NOT NULL
                     ) STRICT`)
    },
    // Versions may come back as bigints (safe-integer mode), so they are made numbers.
    async appliedVersions () {
      return database.prepare('SELECT version FROM schema_migrations').pluck().all().map(Number)
    },
    async apply (migration) {
      database.exec(migration.sqlite)
      recordMigration(migration)
    },
    async commit () {
      database.exec('COMMIT')
    },
    async rollback () {
      if (database.inTransaction) database.exec('ROLLBACK')
    },
  }
}
