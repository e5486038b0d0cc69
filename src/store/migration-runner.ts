import { migrations, type Migration } from './migrations.js'

// What the runner needs of a backend: one connection of its own, on which beginLocked starts
// a transaction that holds the backend's migration lock (so that instances starting together
// apply each migration once) and that has the schema_migrations table.
export interface MigrationConnection {
  beginLocked (): Promise<void>
  appliedVersions (): Promise<readonly number[]>
  apply (migration: Migration): Promise<void>
  commit (): Promise<void>
  rollback (): Promise<void>
}

// What one run of the migrations did: the versions it applied (none when the schema was up to
// date), and the schema's version after it. The start-up summary reports it.
export interface MigrationReport {
  readonly appliedNow: readonly number[]
  readonly schemaVersion: number
}

// Applies what is missing, up to `upTo` (every version by default), in one transaction: a
// failed migration leaves nothing behind.
export async function applyMigrations (connection: MigrationConnection, upTo = Number.POSITIVE_INFINITY): Promise<MigrationReport> {
  try {
    await connection.beginLocked()
    const applied = new Set(await connection.appliedVersions())
    const appliedNow: number[] = []
    for (const migration of migrations) {
      if (migration.version <= upTo && !applied.has(migration.version)) {
        await connection.apply(migration)
        appliedNow.push(migration.version)
      }
    }
    await connection.commit()
    return { appliedNow, schemaVersion: Math.max(0, ...applied, ...appliedNow) }
  } catch (error) {
    await connection.rollback().catch(() => undefined)
    throw error
  }
}
