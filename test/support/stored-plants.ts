import { Database } from '../../src/store/sqlite/sqlite-driver.js'

// A stored plant as tests compare it: its id, its name, its tag (null when it has none), and
// any other property its document holds, so that a property stored by mistake shows up.
export interface StoredPlantRow {
  readonly id: bigint
  readonly name: string
  readonly tag: string | null
  readonly [otherProperty: string]: unknown
}

export function toStoredPlantRow (id: bigint, document: string): StoredPlantRow {
  const { name, tag = null, ...others } = JSON.parse(document) as { name: string, tag?: string }
  return { id, name, tag, ...others }
}

// What a SQLite file really holds, read through a connection of its own, ids as exact bigints.
export function readStoredPlants (databaseFile: string): StoredPlantRow[] {
  const database = new Database(databaseFile, { readonly: true })
  database.defaultSafeIntegers(true)
  try {
    return database.prepare<[], { id: bigint, document: string }>('SELECT id, document FROM plants ORDER BY id').all()
      .map(({ id, document }) => toStoredPlantRow(id, document))
  } finally {
    database.close()
  }
}

export function readStoredIds (databaseFile: string): bigint[] {
  return readStoredPlants(databaseFile).map((row) => row.id)
}
