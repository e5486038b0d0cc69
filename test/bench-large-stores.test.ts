import t from 'tap'
import { type LargeStoreShape, storeTenMillionPlants, storeTenMillionPlantsInPostgres, tenMillionPlantId } from '../bench/ten-million-plants.js'
import { PostgresPlantStore } from '../src/store/postgres/postgres-plant-store.js'
import { Database } from '../src/store/sqlite/sqlite-driver.js'
import { postgresSkipReason, postgresTestDatabase, readPostgresPlants, runAsAdmin, testPostgresUrl } from './support/test-databases.js'
import { testFolder } from './support/test-folder.js'

// The benchmark's large stores (bench/ten-million-plants.ts), small: every plant they promise is
// there and nothing else, and a grown store's leaves are as full as random creates leave them.
const stored = 20_000
const plantIds = Array.from({ length: stored }, (_, index) => tenMillionPlantId(index + 1))

// How full the leaf pages of the plants' tree are, on average, from SQLite's dbstat table.
function leafFill (filename: string): number {
  const database = new Database(filename, { readonly: true })
  try {
    return database.prepare<[], { fill: number }>(`SELECT sum(pgsize - unused) * 1.0 / sum(pgsize) AS fill
      FROM dbstat WHERE name = 'plants' AND pagetype = 'leaf'`).get()!.fill
  } finally {
    database.close()
  }
}

function storedIds (filename: string): bigint[] {
  const database = new Database(filename, { readonly: true })
  try {
    database.defaultSafeIntegers(true)
    return database.prepare<[], bigint>('SELECT id FROM plants ORDER BY id').pluck().all()
  } finally {
    database.close()
  }
}

const inIdOrder = (ids: readonly bigint[]): bigint[] => [...ids].sort((a, b) => a < b ? -1 : a > b ? 1 : 0)

for (const [shape, fill] of [['grown', [0.65, 0.75]], ['packed', [0.95, 1]]] as Array<[LargeStoreShape, [number, number]]>) {
  t.test(`a SQLite store, ${shape}: the plants promised, and leaves ${fill[0] * 100}–${fill[1] * 100}% full`, async (t) => {
    const filename = `${testFolder(t)}/large.db`
    await storeTenMillionPlants(filename, stored, shape)
    t.same(storedIds(filename), inIdOrder(plantIds))
    const leaves = leafFill(filename)
    t.ok(leaves >= fill[0] && leaves <= fill[1], `leaves ${(leaves * 100).toFixed(1)}% full`)
  })
}

// PostgreSQL's index built in id order keeps a tenth of each leaf free (its fillfactor of 90).
for (const [shape, density] of [['grown', [55, 70]], ['packed', [85, 95]]] as Array<[LargeStoreShape, [number, number]]>) {
  t.test(`a PostgreSQL store, ${shape}: the plants promised, and leaves ${density[0]}–${density[1]}% full`, { skip: postgresSkipReason }, async (t) => {
    const database = await postgresTestDatabase(t)
    const store = await PostgresPlantStore.open({ connectionString: database.url, poolSize: 1 })
    await store.close()
    await storeTenMillionPlantsInPostgres(database.url, stored, shape)
    const rows = await readPostgresPlants(testPostgresUrl, `${database.schema}.plants`)
    t.same(rows.map(({ id }) => id), inIdOrder(plantIds))
    // The extension lives in the test's schema, and goes with it.
    await runAsAdmin(`CREATE EXTENSION IF NOT EXISTS pgstattuple SCHEMA ${database.schema}`)
    const leaves = (await runAsAdmin<{ leaves: number }>(
      `SELECT avg_leaf_density AS leaves FROM ${database.schema}.pgstatindex('${database.schema}.plants_pkey')`))[0]!.leaves
    t.ok(leaves >= density[0] && leaves <= density[1], `leaves ${leaves}% full`)
  })
}
