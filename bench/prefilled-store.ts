import { Database } from '../src/store/sqlite/sqlite-driver.js'
import { SqlitePlantStore } from '../src/store/sqlite/sqlite-plant-store.js'

// A SQLite store filled before the service starts: opened once so that its migrations make the
// tables, then filled by `fill` on a connection of its own, the WAL checkpointed into the file.
// Resolves with the seconds the filling took.
export async function prefillSqliteStore (filename: string, fill: (database: Database) => void): Promise<number> {
  const store = await SqlitePlantStore.open({ filename })
  await store.close()
  const database = new Database(filename)
  try {
    database.pragma('journal_mode = WAL')
    const started = performance.now()
    fill(database)
    database.pragma('wal_checkpoint(TRUNCATE)')
    return (performance.now() - started) / 1000
  } finally {
    database.close()
  }
}
