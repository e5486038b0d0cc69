import pg from 'pg'
import { Database } from '../src/store/sqlite/sqlite-driver.js'
import { prefillSqliteStore } from './prefilled-store.js'

export const tenMillion = 10_000_000
// The x-th plant's id is x · idMultiplier mod idSpace, in both backends' fills and in
// tenMillionPlantId.
const idMultiplier = 1073741789n
const idSpace = 2n ** 52n

// How the large stores' trees are laid out. A store that grew by creates with random ids has its
// index's leaf pages about two-thirds full (each split leaves two half-full pages, which fill
// again): 'grown' builds that shape quickly, inserting in id order (which packs every leaf full)
// a filler just after three of every seven plants' ids, then deleting the fillers, so that every
// leaf keeps about 70% of its entries (PostgreSQL's index, built with a tenth of each leaf free,
// about 63%). 'packed' leaves every leaf full, as an import sorted by id
// does: until each leaf has split once, nearly every create with a random id splits one
// (docs/benchmark.md measures both).
export type LargeStoreShape = 'grown' | 'packed'
const plantDocument = '{"name":"Fern","tag":"shade"}'
// As long as a plant's, so that the leaves keep 70% of their bytes as well as of their entries.
const fillerDocument = '{"name":"Fill","tag":"shade"}'

// The rows to insert, in id order: the x-th plant's id is x · idMultiplier mod 2^52 (distinct, as
// the multiplier is odd, and scattered as random ids are), `plants` naming the x's. A filler's
// id is its plant's plus one, which no plant has: that would take two x's some 10^15 apart.
const plantsAndFillers = (plants: string, shape: LargeStoreShape, typed: (text: string) => string): string => {
  const plantId = `(x * ${idMultiplier}) % ${idSpace}`
  const fillers = shape === 'grown' ? `UNION ALL SELECT ${plantId} + 1, ${typed(fillerDocument)} FROM ${plants} WHERE x % 7 IN (1, 3, 5)` : ''
  return `SELECT ${plantId} AS id, ${typed(plantDocument)} AS document FROM ${plants} ${fillers} ORDER BY id`
}

// A SQLite store holding ten million plants (or `stored`), built with one statement (and one more
// deleting the fillers): the store is opened once so that its migrations make the tables. About
// 30 s and 690 MB grown, 10 s and 430 MB packed, on the machine of docs/benchmark.md's table.
// Resolves with the seconds it took.
export async function storeTenMillionPlants (filename: string, stored = tenMillion, shape: LargeStoreShape = 'grown'): Promise<number> {
  return prefillSqliteStore(filename, (database) => {
    database.exec(`INSERT INTO plants (id, document)
      WITH RECURSIVE counter (x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM counter WHERE x < ${stored})
      ${plantsAndFillers('counter', shape, (text) => `'${text}'`)}`)
    database.prepare('DELETE FROM plants WHERE document = ?').run(fillerDocument)
  })
}

// The same ten million plants in a PostgreSQL store whose tables the service's migrations have
// made (`url` names its schema), inserted in id order (the fillers deleted), then vacuumed and
// analysed as autovacuum would have done by then. Resolves with the seconds it took.
export async function storeTenMillionPlantsInPostgres (url: string, stored = tenMillion, shape: LargeStoreShape = 'grown'): Promise<number> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const started = performance.now()
    await client.query(`INSERT INTO plants (id, document)
      ${plantsAndFillers(`generate_series(1::bigint, ${stored}) AS x`, shape, (text) => `'${text}'::jsonb`)}`)
    await client.query('DELETE FROM plants WHERE document = $1::jsonb', [fillerDocument])
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
