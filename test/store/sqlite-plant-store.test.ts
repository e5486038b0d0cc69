import { existsSync, statSync } from 'node:fs'
import { setTimeout } from 'node:timers/promises'
import type { Worker } from 'node:worker_threads'
import t, { type Test } from 'tap'
import { Database } from '../../src/store/sqlite/sqlite-driver.js'
import type { BackgroundConnection } from '../../src/store/sqlite/background-connection.js'
import { SqlitePlantStore } from '../../src/store/sqlite/sqlite-plant-store.js'
import type { SweepStep } from '../../src/store/sqlite/sqlite-webhook-store.js'
import { beforeEveryMessage } from '../../src/store/webhook-store.js'
import { StoreUnavailableError } from '../../src/store/store-errors.js'
import { testPlantStoreContract } from './plant-store-contract.js'
import { createInStore, plantRow } from '../support/plant-rows.js'
import { migrations as appliedMigrations } from '../../src/store/migrations.js'
import { openPlantStore } from '../../src/store/open-plant-store.js'
import { testFolder } from '../support/test-folder.js'

t.test('the SQLite store keeps the plant store contract', async (t) => {
  testPlantStoreContract(t, async (t) => await SqlitePlantStore.open({ filename: `${testFolder(t)}/plants.db` }))
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
  const filename = `${testFolder(t)}/nested/folder/plants.db`
  const store = await SqlitePlantStore.open({ filename })
  t.teardown(() => store.close())
  t.ok(existsSync(filename))
  t.equal(inspect(filename, (database) => database.pragma('journal_mode', { simple: true })), 'wal')
  const synchronous = (store as unknown as { database: Database }).database.pragma('synchronous', { simple: true })
  t.equal(synchronous, 2n, 'synchronous=FULL on the store connection')
})

t.test('migrations are applied once and recorded', async (t) => {
  const filename = `${testFolder(t)}/plants.db`
  await (await SqlitePlantStore.open({ filename })).close()
  await (await SqlitePlantStore.open({ filename })).close()
  const migrations = inspect(filename, (database) => database.prepare('SELECT version, name FROM schema_migrations ORDER BY version').all())
  t.same(migrations, appliedMigrations.map(({ version, name }) => ({ version: BigInt(version), name })))
})

t.test('plants survive closing and reopening the file', async (t) => {
  const filename = `${testFolder(t)}/plants.db`
  const first = await SqlitePlantStore.open({ filename })
  await createInStore(first, plantRow({ id: 2n ** 62n, name: 'Fern' }))
  await first.close()
  const second = await SqlitePlantStore.open({ filename })
  t.teardown(() => second.close())
  t.same(await createInStore(second, plantRow({ id: 2n ** 62n, name: 'Fern' })), { plant: plantRow({ id: 2n ** 62n, name: 'Fern' }), created: false })
})

// A store with a short busy timeout, and a second connection to its file that can hold locks.
async function storeBesideAnotherConnection (t: Test): Promise<{ store: SqlitePlantStore, other: Database }> {
  const filename = `${testFolder(t)}/plants.db`
  const store = await SqlitePlantStore.open({ filename, busyTimeoutMs: 50 })
  t.teardown(() => store.close())
  const other = new Database(filename)
  t.teardown(() => other.close())
  return { store, other }
}

t.test('a write lock held elsewhere for longer than the busy timeout is StoreUnavailableError', async (t) => {
  const { store, other } = await storeBesideAnotherConnection(t)
  other.exec('BEGIN IMMEDIATE')
  await t.rejects(createInStore(store, plantRow({ id: 1n, name: 'Fern' })), StoreUnavailableError)
  other.exec('ROLLBACK')
  t.equal((await createInStore(store, plantRow({ id: 1n, name: 'Fern' }))).created, true, 'it recovers when the lock is gone')
})

t.test('a store that cannot take the write lock is not ready, and is ready again once it can', async (t) => {
  const { store, other } = await storeBesideAnotherConnection(t)
  other.exec('BEGIN IMMEDIATE')
  await t.rejects(store.checkReady(), StoreUnavailableError)
  other.exec('ROLLBACK')
  await t.resolves(store.checkReady())
})

// The log is copied into the database file by a thread of the store's own
// (src/store/sqlite/background-connection.ts), not by the commits that fill it: the request thread's
// own checkpoint waits for 16,000 pages, far more than these creates write. Until a checkpoint,
// the database file lacks the pages that only the log holds.
t.test('the write-ahead log is checkpointed into the database file off the request thread', async (t) => {
  const filename = `${testFolder(t)}/plants.db`
  const store = await SqlitePlantStore.open({ filename })
  t.teardown(() => store.close())
  for (let batch = 0; batch < 20; batch++) {
    await Promise.all(Array.from({ length: 100 }, async (_, index) =>
      createInStore(store, plantRow({ id: BigInt(batch * 100 + index), name: 'Fern'.repeat(20) }))))
  }
  const requestConnection = (store as unknown as { database: Database }).database
  t.equal(requestConnection.pragma('wal_autocheckpoint', { simple: true }), 16_000n,
    'the request thread checkpoints only as a safety net')
  const pageSize = Number(requestConnection.pragma('page_size', { simple: true }))
  const bytesOfAllPages = (): number => Number(requestConnection.pragma('page_count', { simple: true })) * pageSize
  t.ok(bytesOfAllPages() > 40 * pageSize, `the creates filled ${bytesOfAllPages() / pageSize} pages`)
  const deadline = Date.now() + 5000
  while (statSync(filename).size < bytesOfAllPages() && Date.now() < deadline) await setTimeout(20)
  t.equal(statSync(filename).size, bytesOfAllPages(), 'the database file holds every page')
})

const requestConnectionOf = (store: SqlitePlantStore): Database => (store as unknown as { database: Database }).database

// `count` newPlant messages owed to the endpoint, written with one statement on the store's own
// connection, as a receiver down for long leaves them.
function oweMessages (store: SqlitePlantStore, endpointId: string, count: number): void {
  requestConnectionOf(store).exec(`INSERT INTO webhook_messages (endpoint_id, message_id, event, plant_id, document, committed_at, next_attempt_at)
    WITH RECURSIVE counter (x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM counter WHERE x < ${count})
    SELECT '${endpointId}', 'msg_' || x, 'newPlant', x, '{}', 1, 1 FROM counter`)
}

// The counts of what endpoints are owed step through every waiting message (about 100 ms for a
// million): they are read on the background connection's thread, so that a backlog stalls no
// request, and on the request thread should that thread have stopped.
t.test('the counts of waiting messages are read off the request thread, and on it once that thread has stopped', async (t) => {
  const filename = `${testFolder(t)}/plants.db`
  const store = await SqlitePlantStore.open({ filename })
  t.teardown(() => store.close())
  const endpointId = '00000000-0000-4000-8000-000000000001'
  await store.webhooks.createEndpoint({ id: endpointId, url: 'http://127.0.0.1:9/hook', events: null, secret: 'whsec_a', createdAt: Date.now() })
  const addMessages = (count: number): void => { oweMessages(store, endpointId, count) }
  const backlog = 200_000
  addMessages(backlog)
  // Run on the request thread, a read would be answered before the event loop's next turn.
  const answeredAfterATurn = async <T>(read: Promise<T>): Promise<boolean> => {
    let answered = false
    void read.then(() => { answered = true })
    await new Promise((resolve) => setImmediate(resolve))
    return answered
  }

  const counted = store.webhooks.pendingMessages()
  t.notOk(await answeredAfterATurn(counted), 'the request thread took its next turn while the count went on')
  t.equal(await counted, backlog)
  const listed = store.webhooks.listEndpoints()
  t.notOk(await answeredAfterATurn(listed), 'the request thread took its next turn while the listing went on')
  t.equal((await listed)[0]?.pendingMessages, backlog, 'the endpoints are listed with their counts')

  const first = store.webhooks.pendingMessages()
  addMessages(1)
  const [second, third] = [store.webhooks.pendingMessages(), store.webhooks.pendingMessages()]
  t.ok([backlog, backlog + 1].includes(await first))
  t.equal(await second, backlog + 1, 'a count asked for while one ran counts what was committed before it was asked for')
  t.equal(await third, backlog + 1, 'and is shared with those asked for with it')

  await (store as unknown as { background: BackgroundConnection }).background.stop()
  t.equal(await store.webhooks.pendingMessages(), backlog + 1, 'counted on the request thread')
  t.equal((await store.webhooks.listEndpoints())[0]?.pendingMessages, backlog + 1, 'listed on the request thread')
})

// Deleting a million rows in one transaction held every request for over a second: an
// endpoint's deletion takes the endpoint alone, and the sweep deletes what it was owed a step (a
// transaction) at a time, rows or bundled, with the event loop's turns between them: about 2,000
// messages a step on a fast machine, fewer on a slow one (src/store/sqlite/sqlite-webhook-store.ts).
// Sweeps a deleted endpoint owed 12,000 messages as rows and 4,500 in three bundles, beside a
// live endpoint owed 13, and answers what each step deleted, the last a step that found none.
async function sweepSteps (t: Test, sweepStep?: SweepStep): Promise<number[]> {
  const store = await SqlitePlantStore.open({ filename: `${testFolder(t)}/plants.db`, sweepStep })
  t.teardown(() => store.close())
  const [gone, live] = ['00000000-0000-4000-8000-000000000001', '00000000-0000-4000-8000-000000000002']
  for (const id of [gone, live]) {
    await store.webhooks.createEndpoint({ id, url: 'http://127.0.0.1:9/hook', events: null, secret: 'whsec_a', createdAt: Date.now() })
  }
  oweMessages(store, gone, 12_000)
  oweMessages(store, live, 10)
  // Bundles as batches of creates write them: the deleted endpoint's hold 1,500 messages each.
  const bundle = requestConnectionOf(store).prepare(`INSERT INTO webhook_message_bundles (endpoint_id, event, id_prefix, messages, message_count, committed_at, due_at)
    VALUES (?, 'newPlant', 'msg_000000000000000000000001', '[]', ?, 1, 1)`)
  for (let index = 0; index < 3; index++) bundle.run(gone, 1500)
  bundle.run(live, 3)
  const rowsOwedTo = (endpointId: string): number => Number(requestConnectionOf(store)
    .prepare('SELECT (SELECT count(*) FROM webhook_messages WHERE endpoint_id = ?) + (SELECT count(*) FROM webhook_message_bundles WHERE endpoint_id = ?)')
    .pluck().get(endpointId, endpointId))

  t.equal(await store.webhooks.deleteEndpoint(gone), true)
  t.equal(rowsOwedTo(gone), 12_003, 'its rows are left to the sweep')
  t.equal(await store.webhooks.pendingMessages(), 13, 'they are counted for no one: the live endpoint is owed its thirteen')
  t.same(await store.webhooks.dueMessages(gone, Date.now() + 1000, beforeEveryMessage, 100), [], 'a delivery still under way reads none of them')

  const sweeps: number[] = []
  for (let deleted = -1; deleted !== 0 && sweeps.length < 200;) {
    deleted = await store.webhooks.deleteMessagesOfDeletedEndpoints()
    sweeps.push(deleted)
  }
  t.equal(sweeps.at(-1), 0, 'the sweep ends with a step that finds none')
  t.equal(sweeps.reduce((sum, deleted) => sum + deleted, 0), 12_000 + 3 * 1500, 'the steps deleted every message owed, rows and bundled')
  t.equal(rowsOwedTo(gone), 0, 'none is left')
  t.equal(rowsOwedTo(live), 11, 'the live endpoint keeps its rows and its bundle')
  t.equal(await store.webhooks.pendingMessages(), 13)
  t.equal(requestConnectionOf(store).pragma('synchronous', { simple: true }), 2n, 'the connection waits for the disk again (FULL)')
  return sweeps
}

t.test("an endpoint's deletion leaves what it is owed to the sweep, which deletes it a few thousand messages at a time at most", async (t) => {
  const steps = (await sweepSteps(t)).slice(0, -1)
  t.ok(steps.every((deleted) => deleted >= 250), `each step deleted a slice of 250 at least (${steps.join(', ')})`)
  // Rows until 2,000 at most; a bundle is deleted whole, so a step that reaches one may go past.
  t.ok(steps.every((deleted) => deleted <= 2000 + 1500 - 1), 'each step stopped at 2,000 messages, or within the bundle that reached them')
})

t.test('a step of the sweep ends at its count of messages, or at the first slice or bundle past its time', async (t) => {
  t.test('with time to spare', async (t) => {
    t.same(await sweepSteps(t, { messages: 2000, budgetMs: Number.POSITIVE_INFINITY }), [2000, 2000, 2000, 2000, 2000, 2000, 3000, 1500, 0],
      '2,000 rows a step, then bundles, each whole, until 2,000 are reached')
  })
  t.test('with none', async (t) => {
    t.same(await sweepSteps(t, { messages: 2000, budgetMs: 0 }), [...Array.from({ length: 48 }, () => 250), 1500, 1500, 1500, 0],
      'one slice of 250 rows, or one bundle, a step')
  })
})

t.test('a count asked for as the store closes is answered', async (t) => {
  const store = await SqlitePlantStore.open({ filename: `${testFolder(t)}/plants.db` })
  await store.webhooks.createEndpoint({ id: '00000000-0000-4000-8000-000000000001', url: 'http://127.0.0.1:9/hook', events: null, secret: 'whsec_a', createdAt: Date.now() })
  const counted = store.webhooks.pendingMessages()
  await store.close()
  t.equal(await counted, 0)
})

t.test('closing the store stops its background connection and leaves no log behind', async (t) => {
  const filename = `${testFolder(t)}/plants.db`
  const store = await SqlitePlantStore.open({ filename })
  await createInStore(store, plantRow({ id: 1n, name: 'Fern' }))
  await store.close()
  t.notOk(existsSync(`${filename}-wal`), 'the last connection to close checkpointed and removed the log')
  t.same(inspect(filename, (database) => database.prepare('SELECT id FROM plants').pluck().all()), [1n])
})

// The thread's failure was silent: the checkpoints and counts moved back to the request thread
// with nothing in the log to say why requests had slowed.
t.test("the background thread's failure is logged once, and the store goes on without it", async (t) => {
  const warnings: string[] = []
  const store = await openPlantStore(
    { DATABASE_URL: `sqlite:${testFolder(t)}/plants.db`, DATABASE_POOL_SIZE: 1, DATABASE_FAILOVER_WAIT: 0 },
    { warn: (_details, message) => { warnings.push(message) } }
  )
  t.teardown(() => store.close())
  const { worker } = (store as unknown as { background: { worker: Worker } }).background
  // A message the thread cannot read throws outside its reads' own handling. (The thread is
  // unreferenced: held, so that the test waits for it.)
  worker.ref()
  const exited = new Promise((resolve) => worker.once('exit', resolve))
  worker.postMessage(null)
  await new Promise((resolve) => worker.once('error', resolve))
  // Node may report a second failure as the thread ends: heard, not thrown, and not told again.
  worker.emit('error', new Error('the thread failed again'))
  await exited
  t.equal(warnings.length, 1, 'one warning')
  t.match(warnings[0], /the SQLite background thread failed/)
  await createInStore(store, plantRow({ id: 1n, name: 'Fern' }))
  t.equal(await store.webhooks.pendingMessages(), 0, 'counted on the request thread')
})
