import { setTimeout as sleep } from 'node:timers/promises'
import t, { type Test } from 'tap'
import { buildTestApp, type CheckedResponse, type TestApp } from './support/helper.js'
import { privatePostgres, privatePostgresSkipReason } from './support/private-postgres.js'
import { readPostgresPlants } from './support/test-databases.js'

// A real PostgreSQL that is not there yet, comes, goes and comes back. While it is away every
// answer is a prompt 503 a client may retry; once it is back the service recovers by itself,
// with nothing lost. The cluster is this test's own: stopping it disturbs no other test file.

const unavailable = { error: 50301, message: 'the store is unavailable; retry later' }
// The pool gives up on a connection after 2 s; no answer may wait much longer than that.
const promptMs = 3000
const fern = { id: 1, name: 'Fern', tag: 'fern' }
const aloe = { id: 2, name: 'Aloe' }

async function assertUnavailable (t: Test, what: string, request: () => Promise<CheckedResponse>): Promise<void> {
  const started = performance.now()
  const answer = await request()
  const elapsedMs = performance.now() - started
  t.equal(answer.statusCode, 503, what)
  t.equal(answer.headers['retry-after'], '1', `${what}: Retry-After`)
  t.same(answer.body, unavailable, `${what}: the Error body`)
  t.ok(elapsedMs < promptMs, `${what}: answered in ${Math.round(elapsedMs)} ms`)
}

// Polls as a load balancer would; the service is never rebuilt, so a 200 means it recovered by itself.
async function waitUntilReady ({ send }: TestApp): Promise<CheckedResponse> {
  const deadline = Date.now() + 10_000
  for (;;) {
    const answer = await send({ method: 'GET', url: '/readyz' })
    if (answer.statusCode === 200 || Date.now() > deadline) return answer
    await sleep(100)
  }
}

t.test('a PostgreSQL outage is a prompt 503, and the service recovers by itself with nothing lost', {
  skip: privatePostgresSkipReason,
}, async (t) => {
  const database = await privatePostgres(t)

  // Not there yet: the service starts all the same, so it may start before its database.
  const testApp = await buildTestApp(t, { DATABASE_URL: database.url })
  const readyz = () => testApp.send({ method: 'GET', url: '/readyz' })
  await assertUnavailable(t, 'create before the database exists', () => testApp.createPlant(fern))
  await assertUnavailable(t, 'readyz before the database exists', readyz)

  // It arrives: the migrations the start-up could not apply are applied by the next request.
  await database.start()
  const ready = await waitUntilReady(testApp)
  t.equal(ready.statusCode, 200, 'ready once the database is up')
  t.same(ready.body, { status: 'ready' })
  t.equal((await testApp.createPlant(fern)).statusCode, 200, 'the create succeeds')

  // It goes: the pool's idle connections break, which must be told, not thrown.
  const warnings = t.capture(testApp.app.log, 'warn')
  await database.stop()
  await assertUnavailable(t, 'create while the database is down', () => testApp.createPlant(aloe))
  await assertUnavailable(t, 'replay while the database is down', () => testApp.createPlant(fern))
  await assertUnavailable(t, 'readyz while the database is down', readyz)
  t.ok(warnings().some(({ args }) => /idle PostgreSQL connection/.test(String(args[1]))),
    'the broken idle connections were logged and dropped')

  // It comes back with its data: the committed plant survived, and ids still mean what they did.
  await database.start()
  t.equal((await waitUntilReady(testApp)).statusCode, 200, 'ready again once the database is back')
  const replay = await testApp.createPlant(fern)
  t.equal(replay.statusCode, 200, 'the plant created before the outage is still there')
  t.same(replay.body, { name: 'Fern', tag: 'fern' })
  t.equal((await testApp.createPlant({ ...fern, name: 'Bracken' })).statusCode, 409, 'its id is still taken')
  t.equal((await testApp.createPlant(aloe)).statusCode, 200, 'the create refused during the outage succeeds now')
  t.same(await readPostgresPlants(database.url), [
    { id: 1n, name: 'Fern', tag: 'fern' },
    { id: 2n, name: 'Aloe', tag: null },
  ])
})
