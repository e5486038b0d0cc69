import { existsSync } from 'node:fs'
import t, { type Test } from 'tap'
import { Database } from '../../src/store/sqlite/sqlite-driver.js'
import { SqlitePlantStore } from '../../src/store/sqlite/sqlite-plant-store.js'
import { StoreUnavailableError } from '../../src/store/store-errors.js'
import { testPlantStoreContract } from './plant-store-contract.js'
import { plantRow } from '../support/plant-rows.js'
import { migrations as appliedMigrations } from '../../src/store/migrations.js'

t.test('the SQLite store keeps the plant store contract', async (t) => {
  testPlantStoreContract(t, async (t) => await SqlitePlantStore.open({ filename: `${t.testdir()}/plants.db` }))
})

function inspect<T> (filename: string, read: (database: Database) => T): T {
  const database = new Database(filename)
  database.defaultSafeIntegers(true)
  try {
    return read(database)
  } finally {
    database.close()
  }
}

t.test('the file and its folder are created on first open, in WAL mode with synchronous=FULL', async (t) => {
  const filename = `${t.testdir()}/nested/folder/plants.db`
  const store = await SqlitePlantStore.open({ filename })
  t.teardown(() => store.close())
  t.ok(existsSync(filename))
  t.equal(inspect(filename, (database) => database.pragma('journal_mode', { simple: true })), 'wal')
  const synchronous = (store as unknown as { database: Database }).database.pragma('synchronous', { simple: true })
  t.equal(synchronous, 2n, 'synchronous=FULL on the store connection')
})

t.test('migrations are applied once and recorded', async (t) => {
  const filename = `${t.testdir()}/plants.db`
  await (await SqlitePlantStore.open({ filename })).close()
  await (await SqlitePlantStore.open({ filename })).close()
  const migrations = inspect(filename, (database) => database.prepare('SELECT version, name FROM schema_migrations ORDER BY version').all())
  t.same(migrations, appliedMigrations.map(({ version, name }) => ({ version: BigInt(version), name })))
})

t.test('plants survive closing and reopening the file', async (t) => {
  const filename = `${t.testdir()}/plants.db`
  const first = await SqlitePlantStore.open({ filename })
  await first.createPlant(plantRow({ id: 2n ** 62n, name: 'Fern' }))
  await first.close()
  const second = await SqlitePlantStore.open({ filename })
  t.teardown(() => second.close())
  t.same(await second.createPlant(plantRow({ id: 2n ** 62n, name: 'Fern' })), { plant: plantRow({ id: 2n ** 62n, name: 'Fern' }), created: false })
})

// A store with a short busy timeout, and a second connection to its file that can hold locks.
async function storeBesideAnotherConnection (t: Test): Promise<{ store: SqlitePlantStore, other: Database }> {
  const filename = `${t.testdir()}/plants.db`
  const store = await SqlitePlantStore.open({ filename, busyTimeoutMs: 50 })
  t.teardown(() => store.close())
  const other = new Database(filename)
  t.teardown(() => other.close())
  return { store, other }
}

t.test('a write lock held elsewhere for longer than the busy timeout is StoreUnavailableError', async (t) => {
  const { store, other } = await storeBesideAnotherConnection(t)
  other.exec('BEGIN IMMEDIATE')
  await t.rejects(store.createPlant(plantRow({ id: 1n, name: 'Fern' })), StoreUnavailableError)
  other.exec('ROLLBACK')
  t.equal((await store.createPlant(plantRow({ id: 1n, name: 'Fern' }))).created, true, 'it recovers when the lock is gone')
})

t.test('a store that cannot take the write lock is not ready, and is ready again once it can', async (t) => {
  const { store, other } = await storeBesideAnotherConnection(t)
  other.exec('BEGIN IMMEDIATE')
  await t.rejects(store.checkReady(), StoreUnavailableError)
  other.exec('ROLLBACK')
  await t.resolves(store.checkReady())
})
