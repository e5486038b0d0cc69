import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import { type CreateResult, isSamePlant } from '../create-outcome.js'
import type { PlantRecord } from '../plant-store.js'
import { Database } from './sqlite-driver.js'
import { applySqliteMigrations } from './sqlite-migrations.js'

interface StoredRow {
  name: string
  tag: string | null
}

// One connection to the plants file and what the store does through it. Synchronous, as
// better-sqlite3 is: the store runs it on a thread of its own (sqlite-writer-thread.ts), so
// that waiting for the disk never holds up the event loop.
export class SqlitePlantWriter {
  readonly database: Database
  readonly commitCreates: (plants: readonly PlantRecord[]) => CreateResult[]
  readonly readMigrationVersion: () => unknown

  // The file (and its folder) is created if need be, configured and, when asked, migrated;
  // closed again if any of that fails, so a writer that cannot start leaves no handle open.
  constructor (filename: string, busyTimeoutMs: number, { migrate }: { migrate: boolean }) {
    mkdirSync(dirname(filename), { recursive: true })
    this.database = new Database(filename, { timeout: busyTimeoutMs })
    try {
      // WAL with synchronous=FULL fsyncs the log on every commit, so an acknowledged create
      // survives a process crash and a power loss.
      this.database.pragma('journal_mode = WAL')
      this.database.pragma('synchronous = FULL')
      this.database.defaultSafeIntegers(true)
      if (migrate) applySqliteMigrations(this.database)
    } catch (error) {
      this.database.close()
      throw error
    }

    const insert = this.database.prepare(
      'INSERT INTO plants (id, name, tag) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING')
    const selectStored = this.database.prepare<[bigint], StoredRow>('SELECT name, tag FROM plants WHERE id = ?')
    // Each create inserts first and compares only when the id was taken, in arrival order, so
    // a later create in the same batch sees an earlier one's plant. The whole batch is one
    // IMMEDIATE transaction (one fsync): no other writer can slip in between, in this process
    // or another on the same file, and a failure leaves none of it written.
    const insertOrCompare = (plant: PlantRecord): CreateResult => {
      if (insert.run(plant.id, plant.name, plant.tag ?? null).changes === 1) return 'created'
      const stored = selectStored.get(plant.id)
      return stored !== undefined && isSamePlant(plant, stored) ? 'replayed' : 'conflict'
    }
    const commit = this.database.transaction((plants: readonly PlantRecord[]) => plants.map(insertOrCompare))
    this.commitCreates = (plants) => commit.immediate(plants)

    // Ready means able to write: take the write lock (as a create would) and read the file.
    const migrationVersion = this.database.prepare('SELECT max(version) FROM schema_migrations').pluck()
    const readUnderWriteLock = this.database.transaction(() => migrationVersion.get())
    this.readMigrationVersion = () => readUnderWriteLock.immediate()
  }

  close (): void {
    this.database.close()
  }
}
