import pg from 'pg'
import { Database } from '../src/store/sqlite/sqlite-driver.js'
import { prefillSqliteStore } from './prefilled-store.js'

export const tenMillion = 10_000_000
// The x-th plant's id is x · idMultiplier mod idSpace, in both backends' fills and in
// tenMillionPlantId.
const idMultiplier = 1073741789n
const idSpace = 2n ** 52n

// How the large stores' index trees are laid out. 'grown' as creates with random ids leave them:
// SQLite's leaves about 90% full (its splits rebalance three pages into four), PostgreSQL's about
// 70% (each split halves a page), as test/bench-large-stores.test.ts checks against stores grown
// by random inserts. 'packed' fills every leaf (PostgreSQL's to its default 90%), as an import
// sorted by id does: until most leaves have split, most creates with a random id split one
// (docs/benchmark.md measures both).
export type LargeStoreShape = 'grown' | 'packed'
// The document of every plant the large stores hold, and of the creates measured on them.
export const plantDocument = '{"name":"Fern","tag":"shade"}'
// As long as a plant's, so that deleting the fillers frees a tenth of the leaves' bytes.
const fillerDocument = '{"name":"Fill","tag":"shade"}'
// The x-th plant's id in SQL, as tenMillionPlantId gives it.
const plantIdOfX = `(x * ${idMultiplier}) % ${idSpace}`
const sqlitePlantIds = (stored: number): string => `WITH RECURSIVE counter (x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM counter WHERE x < ${stored})
  SELECT ${plantIdOfX} AS id FROM counter`

// A SQLite store holding ten million plants (or `stored`): the store is opened once so that its
// migrations make the tables, then the plants are inserted in id order, which packs every leaf.
// Grown, a filler goes in just after every ninth plant in id order (at its id plus one, which no
// plant has: that would take two x's some 10^15 apart), and the fillers are deleted after, each
// leaf keeping nine tenths of its entries. About 40 s and 480 MB grown, 16 s and 430 MB packed,
// on the machine of docs/benchmark.md's table. Resolves with the seconds it took.
export async function storeTenMillionPlants (filename: string, stored = tenMillion, shape: LargeStoreShape = 'grown'): Promise<number> {
  return prefillSqliteStore(filename, (database) => {
    if (shape === 'packed') {
      database.exec(`INSERT INTO plants (id, document) SELECT id, '${plantDocument}' FROM (${sqlitePlantIds(stored)}) ORDER BY id`)
      return
    }
    database.exec(`INSERT INTO plants (id, document)
      WITH ranked AS MATERIALIZED (SELECT id, row_number() OVER (ORDER BY id) AS rank FROM (${sqlitePlantIds(stored)}))
      SELECT id, '${plantDocument}' FROM ranked
      UNION ALL SELECT id + 1, '${fillerDocument}' FROM ranked WHERE rank % 9 = 0
      ORDER BY 1`)
    database.prepare('DELETE FROM plants WHERE document = ?').run(fillerDocument)
  })
}

// The same ten million plants in a PostgreSQL store whose tables the service's migrations have
// made (`url` names its schema), inserted in id order, its primary key rebuilt with 70% full
// leaves when grown (the setting reset after, as the migrations leave it), then vacuumed and
// analysed as autovacuum would have done by then. Resolves with the seconds it took.
export async function storeTenMillionPlantsInPostgres (url: string, stored = tenMillion, shape: LargeStoreShape = 'grown'): Promise<number> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const started = performance.now()
    await client.query(`INSERT INTO plants (id, document)
      SELECT ${plantIdOfX} AS id, '${plantDocument}'::jsonb
      FROM generate_series(1::bigint, ${stored}) AS x ORDER BY id`)
    if (shape === 'grown') {
      await client.query('ALTER INDEX plants_pkey SET (fillfactor = 70)')
      await client.query('REINDEX INDEX plants_pkey')
      await client.query('ALTER INDEX plants_pkey RESET (fillfactor)')
    }
    await client.query('VACUUM ANALYZE plants')
    return (performance.now() - started) / 1000
  } finally {
    await client.end()
  }
}

// An id drawn at random across 2^52, as a client with hashed or random ids sends: the ids the
// creates on these stores are measured with.
export const randomPlantId = (): bigint => BigInt(Math.floor(Math.random() * 2 ** 52))

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
