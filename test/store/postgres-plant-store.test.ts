import pg from 'pg'
import t, { type Test } from 'tap'
import { PostgresPlantStore, type PostgresPlantStoreOptions } from '../../src/store/postgres/postgres-plant-store.js'
import { StoreUnavailableError } from '../../src/store/store-errors.js'
import { postgresSkipReason, postgresTestDatabase, runAsAdmin, testPostgresUrl } from '../test-databases.js'
import { testPlantStoreContract } from './plant-store-contract.js'

// A real PostgreSQL server, each test in a schema of its own (see test-databases.ts).

async function openStore (t: Test, options: Partial<PostgresPlantStoreOptions> = {}): Promise<PostgresPlantStore> {
  const database = await postgresTestDatabase(t)
  const store = await PostgresPlantStore.open({ connectionString: database.url, poolSize: 4, ...options })
  t.teardown(() => store.close())
  return store
}

// The store's own connections, for reading the settings its sessions really run with.
function poolOf (store: PostgresPlantStore): pg.Pool {
  return (store as unknown as { pool: pg.Pool }).pool
}

const runs = { skip: postgresSkipReason }

t.test('the PostgreSQL store keeps the plant store contract', runs, async (t) => {
  testPlantStoreContract(t, async (t) => {
    const database = await postgresTestDatabase(t)
    return PostgresPlantStore.open({ connectionString: database.url, poolSize: 4 })
  })
})

t.test('instances starting at once on an empty schema apply each migration exactly once', runs, async (t) => {
  const database = await postgresTestDatabase(t)
  const stores = await Promise.all(Array.from({ length: 6 }, () =>
    PostgresPlantStore.open({ connectionString: database.url, poolSize: 1 })))
  t.teardown(() => Promise.all(stores.map((store) => store.close())))
  await Promise.all(stores.map((store) => store.checkReady()))
  t.same(await runAsAdmin(`SELECT version, name FROM ${database.schema}.schema_migrations`), [{ version: 1, name: 'create plants' }])
  const idType = await runAsAdmin<{ data_type: string }>(
    "SELECT data_type FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'plants' AND column_name = 'id'", [database.schema])
  t.same(idType, [{ data_type: 'bigint' }], 'the id column is a bigint')
})

t.test('int64 ids cross the driver exactly, both ways', runs, async (t) => {
  const database = await postgresTestDatabase(t)
  const store = await PostgresPlantStore.open({ connectionString: database.url, poolSize: 2 })
  t.teardown(() => store.close())
  const ids = [-(2n ** 63n), 2n ** 63n - 1n, 2n ** 53n + 1n, 9007199254740993n]
  for (const id of ids) await store.createPlant({ id, name: `plant ${id}` })
  t.same((await database.readStoredPlants()).map((row) => row.id), [...new Set(ids)].sort((a, b) => (a < b ? -1 : 1)))
})

t.test('every connection commits with synchronous_commit on, even when the URL asks for off', runs, async (t) => {
  const database = await postgresTestDatabase(t)
  const url = new URL(database.url)
  url.searchParams.set('options', `${url.searchParams.get('options')} -c synchronous_commit=off`)
  const store = await PostgresPlantStore.open({ connectionString: url.toString(), poolSize: 2 })
  t.teardown(() => store.close())
  const settings = await poolOf(store).query<{ synchronous_commit: string, search_path: string }>(
    "SELECT current_setting('synchronous_commit') AS synchronous_commit, current_setting('search_path') AS search_path")
  t.same(settings.rows, [{ synchronous_commit: 'on', search_path: database.schema }], 'and the schema from the URL is kept')
})

t.test('creates run as named prepared statements', runs, async (t) => {
  const store = await openStore(t, { poolSize: 1 })
  await store.createPlant({ id: 1n, name: 'Fern' })
  await store.createPlant({ id: 1n, name: 'Fern' })
  const prepared = await poolOf(store).query<{ name: string }>('SELECT name FROM pg_prepared_statements ORDER BY name')
  t.same(prepared.rows.map((row) => row.name), ['insert-plant', 'select-plant'])
})

t.test('the pool never opens more connections than its size', runs, async (t) => {
  const database = await postgresTestDatabase(t)
  const applicationName = `plant-store-pool-${database.schema}`
  const url = new URL(database.url)
  url.searchParams.set('application_name', applicationName)
  const store = await PostgresPlantStore.open({ connectionString: url.toString(), poolSize: 3 })
  t.teardown(() => store.close())
  await Promise.all(Array.from({ length: 60 }, (_, index) => store.createPlant({ id: BigInt(index), name: 'Fern' })))
  const connections = await runAsAdmin<{ count: string }>(
    'SELECT count(*) AS count FROM pg_stat_activity WHERE application_name = $1', [applicationName])
  t.ok(Number(connections[0]?.count) <= 3, `${connections[0]?.count} connections`)
  t.equal((await database.readStoredPlants()).length, 60)
})

t.test('a create held up by another transaction past the statement timeout is unavailable, then succeeds', runs, async (t) => {
  const database = await postgresTestDatabase(t)
  const store = await PostgresPlantStore.open({ connectionString: database.url, poolSize: 2, statementTimeoutMs: 300 })
  t.teardown(() => store.close())
  const other = new pg.Client({ connectionString: database.url })
  await other.connect()
  t.teardown(() => other.end())
  await other.query('BEGIN')
  await other.query("INSERT INTO plants (id, name) VALUES (1, 'Fern')")
  await t.rejects(store.createPlant({ id: 1n, name: 'Fern' }), StoreUnavailableError)
  await other.query('ROLLBACK')
  t.same(await store.createPlant({ id: 1n, name: 'Fern' }), { plant: { id: 1n, name: 'Fern' }, created: true })
})

t.test('an unreachable server: the store opens, says unavailable at once, and is not ready', runs, async (t) => {
  const store = await PostgresPlantStore.open({ connectionString: 'postgres://postgres@127.0.0.1:1/test', poolSize: 2 })
  t.teardown(() => store.close())
  const started = Date.now()
  await t.rejects(store.createPlant({ id: 1n, name: 'Fern' }), StoreUnavailableError)
  await t.rejects(store.checkReady(), StoreUnavailableError)
  t.ok(Date.now() - started < 3000, 'neither hangs')
})

t.test('a database that does not exist stops start-up: that is not a passing outage', runs, async (t) => {
  const url = new URL(testPostgresUrl)
  url.pathname = '/plant_store_no_such_database'
  await t.rejects(PostgresPlantStore.open({ connectionString: url.toString(), poolSize: 1 }), { code: '3D000' })
})

t.test('a database that comes back empty is migrated again, and the request that finds it so succeeds', runs, async (t) => {
  const database = await postgresTestDatabase(t)
  const store = await PostgresPlantStore.open({ connectionString: database.url, poolSize: 2 })
  t.teardown(() => store.close())
  await store.createPlant({ id: 1n, name: 'Fern' })
  await runAsAdmin(`DROP TABLE ${database.schema}.plants, ${database.schema}.schema_migrations`)
  t.same(await store.createPlant({ id: 1n, name: 'Fern' }), { plant: { id: 1n, name: 'Fern' }, created: true })
  await runAsAdmin(`DROP TABLE ${database.schema}.plants, ${database.schema}.schema_migrations`)
  await t.resolves(store.checkReady(), 'a readiness check finds it so and migrates too')
  t.same(await database.readStoredPlants(), [])
})

t.test('a table dropped by hand, with its migration still recorded, is an error, not a silent repair', runs, async (t) => {
  const database = await postgresTestDatabase(t)
  const store = await PostgresPlantStore.open({ connectionString: database.url, poolSize: 2 })
  t.teardown(() => store.close())
  await runAsAdmin(`DROP TABLE ${database.schema}.plants`)
  await t.rejects(store.createPlant({ id: 1n, name: 'Fern' }), { code: '42P01' })
})
