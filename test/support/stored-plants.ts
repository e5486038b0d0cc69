import { Database } from '../../src/store/sqlite/sqlite-driver.js'

export interface StoredPlantRow {
  readonly id: bigint
  readonly name: string
  readonly tag: string | null
}

// What a SQLite file really holds, read through a connection of its own, ids as exact bigints.
export function readStoredPlants (databaseFile: string): StoredPlantRow[] {
  const database = new Database(databaseFile, { readonly: true })
  database.defaultSafeIntegers(true)
  try {
    return database.prepare<[], StoredPlantRow>('SELECT id, name, tag FROM plants ORDER BY id').all()
  } finally {
    database.close()
  }
}

export function readStoredIds (databaseFile: string): bigint[] {
  return readStoredPlants(databaseFile).map((row) => row.id)
}
