import pg from 'pg'
import { Database } from '../src/store/sqlite/sqlite-driver.js'
import { prefillSqliteStore } from './prefilled-store.js'

export const tenMillion = 10_000_000
// The x-th plant's id is x · idMultiplier mod idSpace, in both backends' fills and in
// tenMillionPlantId.
const idMultiplier = 1073741789n
const idSpace = 2n ** 52n

// A SQLite store holding ten million plants (or `stored`), built with one statement: the store is
// opened once so that its migrations make the tables, then ids spread across 2^52 are inserted in
// id order (x · 1073741789 mod 2^52 for x = 1…10^7: distinct, as the multiplier is odd, and
// scattered as random ids are). About 10 s and 430 MB on the machine of docs/benchmark.md's table.
// Resolves with the seconds it took.
export async function storeTenMillionPlants (filename: string, stored = tenMillion): Promise<number> {
  return prefillSqliteStore(filename, (database) => {
    database.exec(`INSERT INTO plants (id, document)
      WITH RECURSIVE counter (x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM counter WHERE x < ${stored})
      SELECT (x * ${idMultiplier}) % ${idSpace} AS id, '{"name":"Fern","tag":"shade"}' FROM counter ORDER BY id`)
  })
}

// The same ten million plants in a PostgreSQL store whose tables the service's migrations have
// made (`url` names its schema), inserted in id order, then vacuumed and analysed as autovacuum
// would have done by then. Resolves with the seconds it took.
export async function storeTenMillionPlantsInPostgres (url: string, stored = tenMillion): Promise<number> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const started = performance.now()
    await client.query(`INSERT INTO plants (id, document)
      SELECT (x::bigint * ${idMultiplier}) % ${idSpace} AS id, '{"name":"Fern","tag":"shade"}'::jsonb
      FROM generate_series(1, ${stored}) AS x ORDER BY id`)
    await client.query('VACUUM ANALYZE plants')
    return (performance.now() - started) / 1000
  } finally {
    await client.end()
  }
}

// The id of the store's x-th plant, x from 1 to ten million, as storeTenMillionPlants wrote it.
export function tenMillionPlantId (x: number): bigint {
  return (BigInt(x) * idMultiplier) % idSpace
}

// `count` cursors spread over the last tenth of the ids in id order (ranks nine million to ten
// million less a page, for ten million), each the `after` of a page that lies wholly among them.
export function lastMillionCursors (filename: string, count: number, pageSize: number, stored = tenMillion): bigint[] {
  const database = new Database(filename, { readonly: true })
  try {
    database.defaultSafeIntegers(true)
    const span = stored / 10 - pageSize
    const ids = database.prepare<[number, number], bigint>('SELECT id FROM plants ORDER BY id LIMIT ? OFFSET ?').pluck()
      .all(span, stored - stored / 10 - 1)
    return Array.from({ length: count }, (_, index) => ids[Math.floor(index * span / count)]!)
  } finally {
    database.close()
  }
}
