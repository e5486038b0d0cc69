import { Database } from '../src/store/sqlite/sqlite-driver.js'
import t, { type Test } from 'tap'
import { PostgresPlantStore } from '../src/store/postgres/postgres-plant-store.js'
import { SqlitePlantStore } from '../src/store/sqlite/sqlite-plant-store.js'
import { buildTestApp } from './support/helper.js'
import { otherTransaction, postgresSkipReason, postgresTestDatabase, runAsAdmin } from './support/test-databases.js'
import { documentOf } from './support/plant-rows.js'
import { testFolder } from './support/test-folder.js'

// Real SQLite and PostgreSQL failures, seen from outside: the status and code the spec declares, and no
// internals in the message.

async function appWithLockableStore (t: Test) {
  const filename = `${testFolder(t)}/locked.db`
  const store = await SqlitePlantStore.open({ filename, busyTimeoutMs: 50 })
  const testApp = await buildTestApp(t, {}, { store })
  const other = new Database(filename)
  t.teardown(() => other.close())
  return { ...testApp, other }
}

t.test('a store locked by another writer answers 503 with Retry-After, then recovers', async (t) => {
  const { createPlant, send, other } = await appWithLockableStore(t)
  other.exec('BEGIN IMMEDIATE')
  const unavailable = await createPlant({ id: 1, name: 'Fern' })
  t.equal(unavailable.statusCode, 503)
  t.equal(unavailable.headers['retry-after'], '1')
  t.same(unavailable.body, { error: 50301, message: 'the store is unavailable; retry later' })
  const notReady = await send({ method: 'GET', url: '/readyz' })
  t.equal(notReady.statusCode, 503)
  t.equal((notReady.body as { error: number }).error, 50301)

  other.exec('ROLLBACK')
  t.equal((await createPlant({ id: 1, name: 'Fern' })).statusCode, 200, 'the same request succeeds later')
  t.equal((await send({ method: 'GET', url: '/readyz' })).statusCode, 200)
})

t.test('an unexpected store failure is a 500 whose message carries no SQL and no driver text', async (t) => {
  const { createPlant, other } = await appWithLockableStore(t)
  other.exec('DROP TABLE plants')
  const failed = await createPlant({ id: 2, name: 'Fern' })
  t.equal(failed.statusCode, 500)
  t.same(failed.body, { error: 50001, message: 'internal server error' })
  t.notMatch(failed.response.body, /plants|table|sqlite|SELECT|INSERT|at /i)
})

t.test('on PostgreSQL, a create blocked past the statement timeout answers 503 with Retry-After, then recovers',
  { skip: postgresSkipReason }, async (t) => {
    const database = await postgresTestDatabase(t)
    const store = await PostgresPlantStore.open({ connectionString: database.url, poolSize: 2, statementTimeoutMs: 300 })
    const { createPlant } = await buildTestApp(t, {}, { store })
    const other = await otherTransaction(t, database.url)
    await other.query('INSERT INTO plants (id, document) VALUES (1, $1)', [documentOf({ name: 'Fern' })])
    const unavailable = await createPlant({ id: 1, name: 'Fern' })
    t.equal(unavailable.statusCode, 503)
    t.equal(unavailable.headers['retry-after'], '1')
    t.same(unavailable.body, { error: 50301, message: 'the store is unavailable; retry later' })
    await other.query('ROLLBACK')
    t.equal((await createPlant({ id: 1, name: 'Fern' })).statusCode, 200)
  })

t.test('on PostgreSQL, an unexpected failure is a 500 whose message carries no SQL and no driver text',
  { skip: postgresSkipReason }, async (t) => {
    const database = await postgresTestDatabase(t)
    const { createPlant } = await buildTestApp(t, { DATABASE_URL: database.url })
    t.equal((await createPlant({ id: 1, name: 'Fern' })).statusCode, 200)
    await runAsAdmin(`DROP TABLE ${database.schema}.plants`)
    const failed = await createPlant({ id: 2, name: 'Fern' })
    t.equal(failed.statusCode, 500)
    t.same(failed.body, { error: 50001, message: 'internal server error' })
    t.notMatch(failed.response.body, /plants|relation|postgres|SELECT|INSERT|at /i)
  })
