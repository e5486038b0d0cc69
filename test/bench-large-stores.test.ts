import t, { type Test } from 'tap'
import { prefillSqliteStore } from '../bench/prefilled-store.js'
import {
  type LargeStoreShape, plantDocument, storeTenMillionPlants, storeTenMillionPlantsInPostgres, tenMillionPlantId,
} from '../bench/ten-million-plants.js'
import { PostgresPlantStore } from '../src/store/postgres/postgres-plant-store.js'
import { Database } from '../src/store/sqlite/sqlite-driver.js'
import { type PostgresTestDatabase, postgresSkipReason, postgresTestDatabase, readPostgresPlants, runAsAdmin, testPostgresUrl } from './support/test-databases.js'
import { readStoredIds } from './support/stored-plants.js'
import { testFolder } from './support/test-folder.js'

// The benchmark's large stores (bench/ten-million-plants.ts), small: every plant they promise is
// there and nothing else, and a grown store's index is the size that the same plants inserted in
// random order, as creates with random ids arrive, make it; a packed one smaller.
const stored = 20_000
const plantIds = Array.from({ length: stored }, (_, index) => tenMillionPlantId(index + 1))
const inIdOrder = (ids: readonly bigint[]): bigint[] => [...ids].sort((a, b) => a < b ? -1 : a > b ? 1 : 0)
// The same plants' ids in random order, as creates with random ids arrive.
const inRandomOrder = (ids: readonly bigint[]): bigint[] => ids.map((id) => ({ id, key: Math.random() }))
  .sort((a, b) => a.key - b.key).map(({ id }) => id)

function sqliteLeafPages (filename: string): number {
  const database = new Database(filename, { readonly: true })
  try {
    return database.prepare<[], number>("SELECT count(*) FROM dbstat WHERE name = 'plants' AND pagetype = 'leaf'").pluck().get()!
  } finally {
    database.close()
  }
}

t.test('SQLite: a grown store has the leaves of random inserts, a packed one fewer', async (t) => {
  const folder = testFolder(t)
  await prefillSqliteStore(`${folder}/random.db`, (database) => {
    const insert = database.prepare('INSERT INTO plants (id, document) VALUES (?, ?)')
    database.transaction(() => { for (const id of inRandomOrder(plantIds)) insert.run(id, plantDocument) })()
  })
  const randomLeaves = sqliteLeafPages(`${folder}/random.db`)
  for (const shape of ['grown', 'packed'] as LargeStoreShape[]) {
    const filename = `${folder}/${shape}.db`
    await storeTenMillionPlants(filename, stored, shape)
    t.same(readStoredIds(filename), inIdOrder(plantIds), `${shape}: the plants`)
    const leaves = sqliteLeafPages(filename)
    const [low, high] = shape === 'grown' ? [0.96, 1.04] : [0.8, 0.95]
    t.ok(leaves >= randomLeaves * low && leaves <= randomLeaves * high, `${shape}: ${leaves} leaves, random inserts ${randomLeaves}`)
  }
})

async function migratedPostgresStore (t: Test): Promise<PostgresTestDatabase> {
  const database = await postgresTestDatabase(t)
  const store = await PostgresPlantStore.open({ connectionString: database.url, poolSize: 1 })
  await store.close()
  return database
}

const postgresIndexBytes = async (database: PostgresTestDatabase): Promise<number> => Number((await runAsAdmin<{ bytes: string }>(
  `SELECT pg_relation_size('${database.schema}.plants_pkey') AS bytes`))[0]!.bytes)

t.test('PostgreSQL: a grown store has the index of random inserts, a packed one smaller', { skip: postgresSkipReason }, async (t) => {
  const random = await migratedPostgresStore(t)
  await runAsAdmin(`INSERT INTO ${random.schema}.plants (id, document)
    SELECT id, $2::jsonb FROM unnest($1::bigint[]) WITH ORDINALITY AS arrival (id, n) ORDER BY n`,
  [inRandomOrder(plantIds).map(String), plantDocument])
  const randomBytes = await postgresIndexBytes(random)
  for (const shape of ['grown', 'packed'] as LargeStoreShape[]) {
    const database = await migratedPostgresStore(t)
    await storeTenMillionPlantsInPostgres(database.url, stored, shape)
    const rows = await readPostgresPlants(testPostgresUrl, `${database.schema}.plants`)
    t.same(rows.map(({ id }) => id), inIdOrder(plantIds), `${shape}: the plants`)
    const bytes = await postgresIndexBytes(database)
    const [low, high] = shape === 'grown' ? [0.9, 1.1] : [0.6, 0.85]
    t.ok(bytes >= randomBytes * low && bytes <= randomBytes * high, `${shape}: index of ${bytes} bytes, random inserts ${randomBytes}`)
  }
})
