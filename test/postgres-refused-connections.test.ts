import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'
import t, { type Test } from 'tap'
import { buildTestApp, testToken, type CheckedResponse, type TestApp } from './support/helper.js'
import { privatePostgres, privatePostgresSkipReason } from './support/private-postgres.js'

// A server that is up but refuses the service's database after start-up: closed to connections
// for maintenance, or dropped and created again. The store is out of reach, as when the server is
// down (test/postgres-outage.test.ts): every answer is a 503 a client may retry, never a 500, and
// the service recovers by itself once the database takes connections again.

const unavailable = { error: 50301, message: 'the store is unavailable; retry later' }
const fern = { id: 1, name: 'Fern', tag: 'fern' }
const bearer = { authorization: `Bearer ${testToken}` }

async function assertEveryOperationUnavailable (t: Test, what: string, { send, createPlant }: TestApp): Promise<void> {
  const answers: Array<[string, CheckedResponse]> = [
    ['createPlant', await createPlant({ id: 2, name: 'Aloe' })],
    ['getPlant', await send({ method: 'GET', url: '/plants/1', headers: bearer })],
    ['listPlants', await send({ method: 'GET', url: '/plants', headers: bearer })],
    ['deletePlant', await send({ method: 'DELETE', url: '/plants/1', headers: bearer })],
    ['listWebhookEndpoints', await send({ method: 'GET', url: '/webhook-endpoints', headers: bearer })],
    ['getReadiness', await send({ method: 'GET', url: '/readyz' })],
  ]
  for (const [operation, answer] of answers) {
    t.equal(answer.statusCode, 503, `${what}: ${operation}`)
    t.equal(answer.headers['retry-after'], '1', `${what}: ${operation}'s Retry-After`)
    t.same(answer.body, unavailable, `${what}: ${operation}'s Error body`)
  }
}

async function waitUntilReady ({ send }: TestApp): Promise<number> {
  const deadline = Date.now() + 10_000
  for (;;) {
    const { statusCode } = await send({ method: 'GET', url: '/readyz' })
    if (statusCode === 200 || Date.now() > deadline) return statusCode
    await sleep(100)
  }
}

t.test('a database closed to connections or dropped after start-up is a 503 on every operation, and the service recovers', {
  skip: privatePostgresSkipReason,
}, async (t) => {
  const server = await privatePostgres(t)
  await server.start()
  const admin = new pg.Client({ connectionString: server.url })
  await admin.connect()
  t.teardown(async () => admin.end())
  const closeConnections = async (): Promise<void> => {
    await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = 'plants' AND pid <> pg_backend_pid()")
  }
  await admin.query('CREATE DATABASE plants')
  const testApp = await buildTestApp(t, { DATABASE_URL: server.url.replace(/\/postgres$/, '/plants') })
  t.equal((await testApp.createPlant(fern)).statusCode, 200, 'a create before the database is closed')

  const warnings = t.capture(testApp.app.log, 'warn')
  await admin.query('ALTER DATABASE plants ALLOW_CONNECTIONS false')
  await closeConnections()
  await assertEveryOperationUnavailable(t, 'closed to connections', testApp)
  const refusals = warnings().filter(({ args }) => /PostgreSQL refused a connection/.test(String(args[1])))
  t.equal(refusals.length, 1, 'the refusal is logged, once for the many requests it refused')
  t.match(String((refusals[0]?.args[0] as { err?: Error } | undefined)?.err?.message), /not currently accepting connections/, 'with the server\'s reason')

  await admin.query('ALTER DATABASE plants ALLOW_CONNECTIONS true')
  t.equal(await waitUntilReady(testApp), 200, 'ready once the database takes connections again')
  const replay = await testApp.createPlant(fern)
  t.equal(replay.statusCode, 200, 'the plant created before is still there')
  t.same(replay.body, { name: 'Fern', tag: 'fern' })

  await admin.query('DROP DATABASE plants WITH (FORCE)')
  await assertEveryOperationUnavailable(t, 'dropped', testApp)

  // Created again, empty: the first request applies the migrations again.
  await admin.query('CREATE DATABASE plants')
  t.equal(await waitUntilReady(testApp), 200, 'ready once the database is back')
  t.equal((await testApp.createPlant(fern)).statusCode, 200, 'a create in the new database')
})
