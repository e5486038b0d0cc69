import { once } from 'node:events'
import { type AddressInfo, createServer } from 'node:net'
import pg from 'pg'
import t, { type Test } from 'tap'
import { migrationLockKey } from '../../src/store/postgres/postgres-migrations.js'
import { PostgresPlantStore, type PostgresPlantStoreOptions } from '../../src/store/postgres/postgres-plant-store.js'
import { StoreUnavailableError } from '../../src/store/store-errors.js'
import { emptySchema, otherTransaction, postgresSkipReason, postgresTestDatabase, runAsAdmin, testPostgresUrl } from '../support/test-databases.js'
import { testPlantStoreContract } from './plant-store-contract.js'
import { createInStore, documentOf, PlantConflictError, plantRow } from '../support/plant-rows.js'
import { migrations } from '../../src/store/migrations.js'

// A real PostgreSQL server, each test in a schema of its own (see support/test-databases.ts).

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
  t.same(await runAsAdmin(`SELECT version, name FROM ${database.schema}.schema_migrations ORDER BY version`), migrations.map(({ version, name }) => ({ version, name })))
  const idType = await runAsAdmin<{ data_type: string }>(
    "SELECT data_type FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'plants' AND column_name = 'id'", [database.schema])
  t.same(idType, [{ data_type: 'bigint' }], 'the id column is a bigint')
})

t.test('int64 ids cross the driver exactly, both ways', runs, async (t) => {
  const database = await postgresTestDatabase(t)
  const store = await PostgresPlantStore.open({ connectionString: database.url, poolSize: 2 })
  t.teardown(() => store.close())
  const ids = [-(2n ** 63n), 2n ** 63n - 1n, 2n ** 53n + 1n, 9007199254740993n]
  for (const id of ids) await createInStore(store, plantRow({ id, name: `plant ${id}` }))
  t.same((await database.readStoredPlants()).map((row) => row.id), [...new Set(ids)].sort((a, b) => (a < b ? -1 : 1)))
})

t.test('every session commits durably at read committed, even when the URL asks otherwise', runs, async (t) => {
  const database = await postgresTestDatabase(t)
  const url = new URL(database.url)
  url.searchParams.set('options',
    `${url.searchParams.get('options')} -c synchronous_commit=off -c default_transaction_isolation=serializable`)
  const store = await PostgresPlantStore.open({ connectionString: url.toString(), poolSize: 4 })
  t.teardown(() => store.close())
  const settings = await poolOf(store).query<Record<string, string>>(
    `SELECT current_setting('synchronous_commit') AS synchronous_commit,
            current_setting('default_transaction_isolation') AS isolation,
            current_setting('search_path') AS search_path`)
  t.same(settings.rows, [{ synchronous_commit: 'on', isolation: 'read committed', search_path: database.schema }],
    'and the schema from the URL is kept')
  // At serializable, the losing racers would fail to serialize, and get 503s.
  const results = await Promise.allSettled(Array.from({ length: 40 }, (_, index) =>
    createInStore(store, plantRow({ id: 1n, name: `Racer ${index % 2}` }))))
  t.ok(results.every((result) => result.status === 'fulfilled' || result.reason instanceof PlantConflictError),
    'every racer is a create, a replay or a conflict')
})

t.test('the batch insert is the only named statement: taken ids are read by one sent unnamed', runs, async (t) => {
  const store = await openStore(t, { poolSize: 1 })
  await createInStore(store, plantRow({ id: 1n, name: 'Fern' }))
  await Promise.all([createInStore(store, plantRow({ id: 1n, name: 'Fern' })), createInStore(store, plantRow({ id: 2n, name: 'Ivy' }))])
  const prepared = await poolOf(store).query<{ name: string }>('SELECT name FROM pg_prepared_statements ORDER BY name')
  // The replay was compared with the stored plant by a statement the server plans afresh at
  // every run and never caches.
  t.same(prepared.rows.map((row) => row.name), ['insert-plants'])
})

t.test('the batch statement reads no stored rows, whichever plan the server caches for it', runs, async (t) => {
  const store = await openStore(t, { poolSize: 1 })
  // Enough batches for the server to cache a generic plan, on a table never analysed, then
  // many more rows.
  for (let batch = 0; batch < 10; batch++) {
    await Promise.all(Array.from({ length: 500 }, (_, index) => createInStore(store, plantRow({ id: BigInt(batch * 500 + index), name: 'Fern' }))))
  }
  const pool = poolOf(store)
  const planOf = async (): Promise<string> => {
    const plan = await pool.query<{ 'QUERY PLAN': string }>('EXPLAIN EXECUTE "insert-plants"(\'{1}\', ARRAY[\'{"name":"Fern"}\']::jsonb[])')
    return plan.rows.map((row) => row['QUERY PLAN']).join('\n')
  }
  const cachedPlan = await planOf()
  await pool.query('SET plan_cache_mode = force_generic_plan')
  const genericPlan = await planOf()
  await pool.query('RESET plan_cache_mode')
  for (const plan of [cachedPlan, genericPlan]) {
    t.match(plan, /Conflict Arbiter Indexes: plants_pkey/, 'a taken id is found through the primary key')
    t.notMatch(plan, /Scan[^\n]* on plants/, 'and no stored row is read otherwise')
  }
})

t.test('a plant another session commits while the batch statement waits for it is read afresh', runs, async (t) => {
  const database = await postgresTestDatabase(t)
  const store = await PostgresPlantStore.open({ connectionString: database.url, poolSize: 2 })
  t.teardown(() => store.close())
  const other = await otherTransaction(t, database.url)
  await other.query('INSERT INTO plants (id, document) VALUES (1, $1), (2, $2)', [documentOf({ name: 'Fern' }), documentOf({ name: 'Ivy' })])
  // The batch statement starts (its snapshot taken), then waits on the other session's rows.
  const creates = Promise.all([createInStore(store, plantRow({ id: 1n, name: 'Fern' })), createInStore(store, plantRow({ id: 2n, name: 'Palm' }))]
    .map(async (create) => create.then(({ created }) => (created ? 'created' : 'replayed'), (error: unknown) =>
      error instanceof PlantConflictError ? 'conflict' : error)))
  await new Promise((resolve) => setTimeout(resolve, 200))
  await other.query('COMMIT')
  t.same(await creates, ['replayed', 'conflict'])
})

t.test('the pool never opens more connections than its size', runs, async (t) => {
  const database = await postgresTestDatabase(t)
  const applicationName = `plant-store-pool-${database.schema}`
  const url = new URL(database.url)
  url.searchParams.set('application_name', applicationName)
  const store = await PostgresPlantStore.open({ connectionString: url.toString(), poolSize: 3 })
  t.teardown(() => store.close())
  await Promise.all(Array.from({ length: 60 }, (_, index) => createInStore(store, plantRow({ id: BigInt(index), name: 'Fern' }))))
  const connections = await runAsAdmin<{ count: string }>(
    'SELECT count(*) AS count FROM pg_stat_activity WHERE application_name = $1', [applicationName])
  t.ok(Number(connections[0]?.count) <= 3, `${connections[0]?.count} connections`)
  t.equal((await database.readStoredPlants()).length, 60)
})

t.test('a create held up by another transaction past the statement timeout is unavailable, then succeeds', runs, async (t) => {
  const database = await postgresTestDatabase(t)
  const store = await PostgresPlantStore.open({ connectionString: database.url, poolSize: 2, statementTimeoutMs: 300 })
  t.teardown(() => store.close())
  const other = await otherTransaction(t, database.url)
  await other.query('INSERT INTO plants (id, document) VALUES (1, $1)', [documentOf({ name: 'Fern' })])
  await t.rejects(createInStore(store, plantRow({ id: 1n, name: 'Fern' })), StoreUnavailableError)
  await other.query('ROLLBACK')
  t.same(await createInStore(store, plantRow({ id: 1n, name: 'Fern' })), { plant: plantRow({ id: 1n, name: 'Fern' }), created: true })
})

t.test('an unreachable server: the store opens, says unavailable at once, and is not ready', runs, async (t) => {
  const store = await PostgresPlantStore.open({ connectionString: 'postgres://postgres@127.0.0.1:1/test', poolSize: 2 })
  t.teardown(() => store.close())
  const started = Date.now()
  await t.rejects(createInStore(store, plantRow({ id: 1n, name: 'Fern' })), StoreUnavailableError)
  await t.rejects(store.checkReady(), StoreUnavailableError)
  t.ok(Date.now() - started < 3000, 'neither hangs')
})

t.test('a database that does not exist stops start-up: that is not a passing outage', runs, async (t) => {
  const url = new URL(testPostgresUrl)
  url.pathname = '/plant_store_no_such_database'
  await t.rejects(PostgresPlantStore.open({ connectionString: url.toString(), poolSize: 1 }), { code: '3D000' })
})

t.test('a setting the server does not know, in the connection\'s options, stops start-up too', runs, async (t) => {
  const url = new URL(testPostgresUrl)
  url.searchParams.set('options', '-c statment_timeout=5')
  await t.rejects(PostgresPlantStore.open({ connectionString: url.toString(), poolSize: 1 }), { code: '42704' })
})

t.test('a database that comes back empty is migrated again, and the request that finds it so succeeds', runs, async (t) => {
  const database = await postgresTestDatabase(t)
  const store = await PostgresPlantStore.open({ connectionString: database.url, poolSize: 2 })
  t.teardown(() => store.close())
  await createInStore(store, plantRow({ id: 1n, name: 'Fern' }))
  await emptySchema(database.schema)
  t.same(await createInStore(store, plantRow({ id: 1n, name: 'Fern' })), { plant: plantRow({ id: 1n, name: 'Fern' }), created: true })
  await emptySchema(database.schema)
  await t.resolves(store.checkReady(), 'a readiness check finds it so and migrates too')
  t.same(await database.readStoredPlants(), [])
})

t.test('a table dropped by hand, with its migration still recorded, is an error, not a silent repair', runs, async (t) => {
  const database = await postgresTestDatabase(t)
  const store = await PostgresPlantStore.open({ connectionString: database.url, poolSize: 2 })
  t.teardown(() => store.close())
  await runAsAdmin(`DROP TABLE ${database.schema}.plants`)
  await t.rejects(createInStore(store, plantRow({ id: 1n, name: 'Fern' })), { code: '42P01' })
})

t.test('a migration that waits for another instance: a request waits no longer than a statement, ' +
  'and a connection lost meanwhile does not crash the process', runs, async (t) => {
  const database = await postgresTestDatabase(t)
  // Holding the migrations' lock stalls every migration on this server, other test files'
  // included, so it is held briefly.
  const holder = new pg.Client({ connectionString: testPostgresUrl })
  await holder.connect()
  t.teardown(() => holder.end())
  await holder.query('SELECT pg_advisory_lock($1::bigint)', [migrationLockKey])
  const url = new URL(database.url)
  url.searchParams.set('application_name', `plant-store-migration-${database.schema}`)
  const opening = PostgresPlantStore.open({ connectionString: url.toString(), poolSize: 2, statementTimeoutMs: 200 })

  // Cut the waiting migration's connection, as a failover would.
  for (let terminated = 0; terminated === 0;) {
    const rows = await runAsAdmin<{ terminated: boolean }>(
      "SELECT pg_terminate_backend(pid) AS terminated FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'",
      [url.searchParams.get('application_name')])
    terminated = rows.length
  }
  const store = await opening
  t.teardown(() => store.close())
  const started = Date.now()
  await t.rejects(createInStore(store, plantRow({ id: 1n, name: 'Fern' })), StoreUnavailableError, 'still waiting for the lock')
  t.ok(Date.now() - started < 1500, `the request gave up after ${Date.now() - started} ms`)

  await holder.query('SELECT pg_advisory_unlock($1::bigint)', [migrationLockKey])
  await t.resolves(store.checkReady())
  t.same(await createInStore(store, plantRow({ id: 1n, name: 'Fern' })), { plant: plantRow({ id: 1n, name: 'Fern' }), created: true })
})

t.test('a server that accepts connections and never answers: the store opens, and every call gives up promptly', runs, async (t) => {
  const silent = createServer((socket) => socket.on('error', () => undefined))
  silent.listen(0, '127.0.0.1')
  await once(silent, 'listening')
  t.teardown(() => new Promise((resolve) => silent.close(resolve)))
  silent.on('connection', (socket) => t.teardown(() => socket.destroy()))
  const { port } = silent.address() as AddressInfo

  const opened = Date.now()
  const store = await PostgresPlantStore.open({ connectionString: `postgres://postgres@127.0.0.1:${port}/test`, poolSize: 2, connectTimeoutMs: 300 })
  t.teardown(() => store.close())
  t.ok(Date.now() - opened < 1500, `open gave up on the migration after ${Date.now() - opened} ms`)
  const calls: Array<() => Promise<unknown>> = [() => createInStore(store, plantRow({ id: 1n, name: 'Fern' })), () => store.checkReady()]
  for (const call of calls) {
    const started = Date.now()
    await t.rejects(call(), StoreUnavailableError)
    t.ok(Date.now() - started < 1500, `gave up after ${Date.now() - started} ms`)
  }
})
