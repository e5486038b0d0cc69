import { Database } from '../../../src/store/sqlite/sqlite-driver.js'

// What PRAGMA integrity_check says of a SQLite file, through a connection of its own: ['ok']
// when the file, its indexes and its free pages are all sound.
export function sqliteIntegrityCheck (databaseFile: string): string[] {
  const database = new Database(databaseFile, { readonly: true })
  try {
    const rows = database.pragma('integrity_check') as Array<{ integrity_check: string }>
    return rows.map((row) => row.integrity_check)
  } finally {
    database.close()
  }
}
