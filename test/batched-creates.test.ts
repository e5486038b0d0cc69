import t, { type Test } from 'tap'
import { openPlantStore } from '../src/store/open-plant-store.js'
import type { PlantRow, PlantStore } from '../src/store/plant-store.js'
import { PostgresPlantStore } from '../src/store/postgres/postgres-plant-store.js'
import { Database } from '../src/store/sqlite/sqlite-driver.js'
import { SqlitePlantStore } from '../src/store/sqlite/sqlite-plant-store.js'
import { StoreUnavailableError } from '../src/store/store-errors.js'
import { buildTestApp } from './support/helper.js'
import { otherTransaction, runAsAdmin, type TestDatabase, testOnEveryBackend } from './support/test-databases.js'
import { createInStore, documentOf, PlantConflictError, plantRow } from './support/plant-rows.js'

// Creates are committed in batches (src/store/group-commit.ts). Creates submitted in the same
// turn of the event loop are sure to share a batch, so these tests submit theirs together and
// check, on each real backend, what every caller is told and what is stored.

async function openStore (t: Test, database: TestDatabase): Promise<PlantStore> {
  const store = await openPlantStore({ DATABASE_URL: database.url, DATABASE_POOL_SIZE: 4, DATABASE_FAILOVER_WAIT: 0 }, { warn: () => undefined })
  t.teardown(() => store.close())
  return store
}

type Told = 'created' | 'replayed' | 'conflict' | 'unavailable' | 'failed'

async function createTogether (store: PlantStore, plants: readonly PlantRow[]): Promise<Told[]> {
  const results = await Promise.allSettled(plants.map((plant) => createInStore(store, plant)))
  return results.map((result) => {
    if (result.status === 'fulfilled') return result.value.created ? 'created' : 'replayed'
    if (result.reason instanceof PlantConflictError) return 'conflict'
    if (result.reason instanceof StoreUnavailableError) return 'unavailable'
    return 'failed'
  })
}

// A trigger that refuses one plant by name: a write that fails for a reason of its own.
async function refusePlantsNamed (database: TestDatabase, name: string): Promise<void> {
  if (database.backend === 'SQLite') {
    const connection = new Database(database.url.slice('sqlite:'.length))
    connection.exec(`CREATE TRIGGER refuse_named BEFORE INSERT ON plants WHEN json_extract(NEW.document, '$.name') = '${name}'
      BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`)
    connection.close()
    return
  }
  const schema = new URL(database.url).searchParams.get('options')?.replace('-c search_path=', '')
  await runAsAdmin(`CREATE FUNCTION ${schema}.refuse_named() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN IF NEW.document->>'name' = '${name}' THEN RAISE EXCEPTION 'refused by the test'; END IF; RETURN NEW; END $$`)
  await runAsAdmin(`CREATE TRIGGER refuse_named BEFORE INSERT ON ${schema}.plants
    FOR EACH ROW EXECUTE FUNCTION ${schema}.refuse_named()`)
}

testOnEveryBackend(t, 'creates of one id in one batch resolve in arrival order', async (t, database) => {
  const store = await openStore(t, database)
  const told = await createTogether(store, [
    plantRow({ id: 1n, name: 'Fern' }),
    plantRow({ id: 1n, name: 'Fern' }),
    plantRow({ id: 1n, name: 'Palm' }),
    plantRow({ id: 2n, name: 'Palm', tag: 'tall' }),
    plantRow({ id: 2n, name: 'Palm' }),
    plantRow({ id: 2n, name: 'Palm', tag: 'tall' }),
  ])
  t.same(told, ['created', 'replayed', 'conflict', 'created', 'conflict', 'replayed'])
  t.same(await database.readStoredPlants(), [{ id: 1n, name: 'Fern', tag: null }, { id: 2n, name: 'Palm', tag: 'tall' }])
})

testOnEveryBackend(t, 'a batch mixing new, replayed and conflicting creates tells each caller its own outcome', async (t, database) => {
  const store = await openStore(t, database)
  await createInStore(store, plantRow({ id: 10n, name: 'Ivy' }))
  await createInStore(store, plantRow({ id: 11n, name: 'Moss' }))
  const told = await createTogether(store, [
    plantRow({ id: 12n, name: 'Aloe' }),
    plantRow({ id: 10n, name: 'Ivy' }),
    plantRow({ id: 11n, name: 'Not moss' }),
    plantRow({ id: 2n ** 63n - 1n, name: 'Largest' }),
  ])
  t.same(told, ['created', 'replayed', 'conflict', 'created'])
  t.same((await database.readStoredPlants()).map(({ id, name }) => [id, name]),
    [[10n, 'Ivy'], [11n, 'Moss'], [12n, 'Aloe'], [2n ** 63n - 1n, 'Largest']])
})

testOnEveryBackend(t, 'a write that fails on its own fails alone: its batch neighbours get their true outcomes', async (t, database) => {
  const store = await openStore(t, database)
  await createInStore(store, plantRow({ id: 1n, name: 'Fern' }))
  await refusePlantsNamed(database, 'Refused')
  const told = await createTogether(store, [
    plantRow({ id: 2n, name: 'Ivy' }),
    plantRow({ id: 3n, name: 'Refused' }),
    plantRow({ id: 1n, name: 'Fern' }),
    plantRow({ id: 1n, name: 'Palm' }),
    plantRow({ id: 4n, name: 'Moss' }),
  ])
  t.same(told, ['created', 'failed', 'replayed', 'conflict', 'created'])
  t.same((await database.readStoredPlants()).map(({ id, name }) => [id, name]), [[1n, 'Fern'], [2n, 'Ivy'], [4n, 'Moss']])
})

testOnEveryBackend(t, 'over HTTP, the failed write gets a declared 500 and the rest of its batch 200s', async (t, database) => {
  const { createPlant } = await buildTestApp(t, { DATABASE_URL: database.url })
  await createPlant({ id: 1, name: 'Fern' })
  await refusePlantsNamed(database, 'Refused')
  const responses = await Promise.all([
    createPlant({ id: 2, name: 'Ivy' }),
    createPlant({ id: 3, name: 'Refused' }),
    createPlant({ id: 1, name: 'Fern' }),
  ])
  t.same(responses.map(({ statusCode }) => statusCode), [200, 500, 200])
  t.same(responses[1]?.body, { error: 50001, message: 'internal server error' })
  t.same((await database.readStoredPlants()).map(({ id }) => id), [1n, 2n])
})

// The write lock (SQLite) or a row lock (PostgreSQL) is held elsewhere for longer than the
// store waits: the whole batch is unavailable and nothing of it is written.
testOnEveryBackend(t, 'a batch that cannot commit is unavailable for every caller and writes nothing', async (t, database) => {
  const held = await holdWrites(t, database)
  const store = held.store
  const batch = [plantRow({ id: 1n, name: 'Fern' }), plantRow({ id: 2n, name: 'Ivy' }), plantRow({ id: 3n, name: 'Moss' })]
  t.same(await createTogether(store, batch), ['unavailable', 'unavailable', 'unavailable'])
  await held.release()
  t.same(await database.readStoredPlants(), [], 'nothing of the batch was written')
  t.same(await createTogether(store, batch), ['created', 'created', 'created'], 'the same creates succeed once the lock is gone')
})

async function holdWrites (t: Test, database: TestDatabase): Promise<{ store: PlantStore, release: () => Promise<void> }> {
  if (database.backend === 'SQLite') {
    const filename = database.url.slice('sqlite:'.length)
    const store = await SqlitePlantStore.open({ filename, busyTimeoutMs: 50 })
    t.teardown(() => store.close())
    const other = new Database(filename)
    t.teardown(() => other.close())
    other.exec('BEGIN IMMEDIATE')
    return { store, release: async () => { other.exec('ROLLBACK') } }
  }
  const store = await PostgresPlantStore.open({ connectionString: database.url, poolSize: 2, statementTimeoutMs: 300 })
  t.teardown(() => store.close())
  const other = await otherTransaction(t, database.url)
  await other.query('INSERT INTO plants (id, document) VALUES (2, $1)', [documentOf({ name: 'Held' })])
  return { store, release: async () => { await other.query('ROLLBACK') } }
}

testOnEveryBackend(t, 'under a flood of creates, everyone is answered, in arrival order, and every acknowledged plant is stored', async (t, database) => {
  const store = await openStore(t, database)
  const count = 3000
  const answered: number[] = []
  const plants = Array.from({ length: count }, (_, index) => (plantRow({ id: BigInt(index + 1), name: `Plant ${index + 1}` })))
  await Promise.all(plants.map(async (plant, index) => {
    await createInStore(store, plant)
    answered.push(index)
  }))
  t.same(answered, plants.map((_, index) => index), 'no create was answered before one that arrived earlier')
  t.equal((await database.readStoredPlants()).length, count)
})

testOnEveryBackend(t, 'creates taken before the store closes are answered; creates after it are unavailable', async (t, database) => {
  const store = await openPlantStore({ DATABASE_URL: database.url, DATABASE_POOL_SIZE: 4, DATABASE_FAILOVER_WAIT: 0 }, { warn: () => undefined })
  const taken = createTogether(store, [plantRow({ id: 1n, name: 'Fern' }), plantRow({ id: 2n, name: 'Ivy' })])
  const closed = store.close()
  t.same(await createTogether(store, [plantRow({ id: 3n, name: 'Moss' })]), ['unavailable'])
  t.same(await taken, ['created', 'created'])
  await closed
  t.same((await database.readStoredPlants()).map(({ id }) => id), [1n, 2n])
})
