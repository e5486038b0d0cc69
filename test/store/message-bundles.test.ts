import { randomUUID } from 'node:crypto'
import pg from 'pg'
import t, { type Test } from 'tap'
import { applyMigrations } from '../../src/store/migration-runner.js'
import type { Outbox, PlantChange } from '../../src/store/outbox.js'
import type { PlantStore } from '../../src/store/plant-store.js'
import { postgresMigrationConnection } from '../../src/store/postgres/postgres-migrations.js'
import { PostgresPlantStore } from '../../src/store/postgres/postgres-plant-store.js'
import { Database } from '../../src/store/sqlite/sqlite-driver.js'
import { sqliteMigrationConnection } from '../../src/store/sqlite/sqlite-migrations.js'
import { SqlitePlantStore } from '../../src/store/sqlite/sqlite-plant-store.js'
import { beforeEveryMessage, type DueWebhookMessage } from '../../src/store/webhook-store.js'
import { createInStore, deleteFromStore, plantRow } from '../support/plant-rows.js'
import { postgresSkipReason, postgresTestDatabase } from '../support/test-databases.js'
import { testFolder } from '../support/test-folder.js'
import { loadOpenApiDocument } from '../../src/openapi/openapi-document.js'
import { webhookDefinitions } from '../../src/openapi/webhook-definitions.js'

// A batch's webhook messages are written as bundles, one per webhook and endpoint, and unpacked
// into a row per message by the instance delivering them: on SQLite every batch's
// (src/store/sqlite/message-bundles.ts), on PostgreSQL a batch of creates'
// (src/store/postgres/postgres-outbox-writes.ts). What is read back is what a row per message
// gave: every message, its plant, one id per message shared by every endpoint, and counts that
// include the messages still bundled.

const now = 1_000_000
const everyEvent = '00000000-0000-4000-8000-000000000001'
const deletesOnly = '00000000-0000-4000-8000-000000000002'
// Each change's webhook, as openapi.yaml names it.
const webhookOf = Object.fromEntries(webhookDefinitions(loadOpenApiDocument().document).map(({ name, sentWhen }) => [sentWhen, name])) as Record<PlantChange, string>

const outbox: Outbox = {
  wants: () => true,
  // PostgreSQL's batches with deletes write a row per message.
  messagesOf: (change, plant, committedAt, traceparent) => [{
    messageId: `msg_${randomUUID().replaceAll('-', '')}`, event: webhookOf[change], plant, traceparent, dueAt: committedAt,
  }],
  webhooksOf: (change) => [webhookOf[change]],
  firstAttemptAt: (committedAt) => committedAt,
  committed: () => undefined,
}

async function storeWithEndpoints (store: PlantStore): Promise<PlantStore> {
  await store.webhooks.createEndpoint({ id: everyEvent, url: 'http://127.0.0.1:1/every', events: null, secret: 'whsec_a', createdAt: now })
  await store.webhooks.createEndpoint({ id: deletesOnly, url: 'http://127.0.0.1:1/deletes', events: ['plantDeleted'], secret: 'whsec_b', createdAt: now + 1 })
  store.useOutbox(outbox)
  return store
}

const plantIdOf = (message: DueWebhookMessage): number => Number(message.plant.id)

function testBundles (t: Test, openStore: (t: Test) => Promise<PlantStore>): void {
  t.test('a batch of creates is owed, read and counted as one message per plant', async (t) => {
    const store = await storeWithEndpoints(await openStore(t))
    // Created together: one batch.
    await Promise.all([1n, 2n, 3n].map(async (id) => createInStore(store, plantRow({ id, name: `Fern ${id}` }))))

    t.equal(await store.webhooks.pendingMessages(), 3, 'counted while still bundled')
    t.same((await store.webhooks.listEndpoints()).map(({ pendingMessages }) => pendingMessages), [3, 0], 'only the endpoint subscribed is owed them')

    const due = await store.webhooks.dueMessages(everyEvent, Date.now() + 1000, beforeEveryMessage, 64)
    t.same(due.map(plantIdOf).sort(), [1, 2, 3])
    for (const message of due) {
      t.equal(message.event, 'newPlant')
      t.match(message.messageId, /^msg_[0-9a-f]{32}$/)
      t.same(message.plant, plantRow({ id: message.plant.id, name: `Fern ${message.plant.id}` }))
      t.equal(message.attempts, 0)
    }
    t.equal(new Set(due.map(({ messageId }) => messageId)).size, 3, 'every message has an id of its own')
    t.equal(await store.webhooks.pendingMessages(), 3, 'unpacked, still owed')
    t.same(await store.webhooks.dueMessages(deletesOnly, Date.now() + 1000, beforeEveryMessage, 64), [])

    await store.webhooks.deleteMessages(everyEvent, due.map(({ seq }) => seq))
    t.equal(await store.webhooks.pendingMessages(), 0)
  })

  t.test('a message has the same id at every endpoint subscribed to it, and its trace', async (t) => {
    const store = await storeWithEndpoints(await openStore(t))
    await createInStore(store, plantRow({ id: 7n, name: 'Ivy' }))
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'
    t.equal(await deleteFromStore(store, 7n, { traceparent }), true)

    const later = Date.now() + 1000
    const toEvery = await store.webhooks.dueMessages(everyEvent, later, beforeEveryMessage, 64)
    const toDeletes = await store.webhooks.dueMessages(deletesOnly, later, beforeEveryMessage, 64)
    // By event, not by place: on PostgreSQL a bundled create's row is made when it is unpacked,
    // after the delete's, and the two are due in the same millisecond now and then.
    t.same(toEvery.map(({ event }) => event).sort(), ['newPlant', 'plantDeleted'])
    t.same(toDeletes.map(({ event }) => event), ['plantDeleted'])
    const deletedToEvery = toEvery.find(({ event }) => event === 'plantDeleted')
    t.equal(toDeletes[0]!.messageId, deletedToEvery?.messageId, 'one message, one id')
    t.same(toDeletes[0]!.plant, deletedToEvery?.plant)
    t.equal(toDeletes[0]!.traceparent, traceparent)
    t.equal(toEvery.find(({ event }) => event === 'newPlant')?.traceparent, null)
  })

  t.test('ids past 2^53 and documents come out exactly as they went in', async (t) => {
    const store = await storeWithEndpoints(await openStore(t))
    await createInStore(store, plantRow({ id: 9007199254740993n, name: 'Fern', tag: 'shade' }))
    await createInStore(store, { id: -9223372036854775808n, document: '{}' })
    const messages = await store.webhooks.dueMessages(everyEvent, Date.now() + 1000, beforeEveryMessage, 64)
    t.same(messages.map(({ plant }) => plant), [plantRow({ id: 9007199254740993n, name: 'Fern', tag: 'shade' }), { id: -9223372036854775808n, document: '{}' }])
  })

  t.test('changes in one batch are sent in the order they were made', async (t) => {
    const store = await storeWithEndpoints(await openStore(t))
    // Sent together: one batch, which creates, deletes and creates plant 5 again.
    await Promise.all([
      createInStore(store, plantRow({ id: 5n, name: 'Fern' })),
      deleteFromStore(store, 5n),
      createInStore(store, plantRow({ id: 5n, name: 'Fern' })),
    ])
    const due = await store.webhooks.dueMessages(everyEvent, Date.now() + 1000, beforeEveryMessage, 64)
    t.same(due.map(({ event }) => event), ['newPlant', 'plantDeleted', 'newPlant'])
  })

  t.test('unpacking goes as far as it is asked, oldest bundles first', async (t) => {
    const store = await storeWithEndpoints(await openStore(t))
    for (let id = 1n; id <= 40n; id++) await createInStore(store, plantRow({ id, name: 'Moss' }))
    const firstFive = await store.webhooks.dueMessages(everyEvent, Date.now() + 1000, beforeEveryMessage, 5)
    t.same(firstFive.map(plantIdOf), [1, 2, 3, 4, 5])
    t.equal(await store.webhooks.pendingMessages(), 40)
    const last = firstFive.at(-1)!
    const rest = await store.webhooks.dueMessages(everyEvent, Date.now() + 1000, { nextAttemptAt: last.nextAttemptAt, seq: last.seq }, 100)
    t.same(rest.map(plantIdOf), Array.from({ length: 35 }, (_, index) => index + 6))
  })

  t.test('the bundles owed to a deleted endpoint are counted for no one', async (t) => {
    const store = await storeWithEndpoints(await openStore(t))
    await Promise.all([1n, 2n].map(async (id) => createInStore(store, plantRow({ id, name: 'Fern' }))))
    t.equal(await store.webhooks.deleteEndpoint(everyEvent), true)
    t.equal(await store.webhooks.pendingMessages(), 0)
  })

  t.test('what a disabled endpoint was still owed, rows and bundles, is counted as failed and not as pending', async (t) => {
    const store = await storeWithEndpoints(await openStore(t))
    for (let id = 1n; id <= 3n; id++) await createInStore(store, plantRow({ id, name: 'Fern' }))
    // Two unpacked into rows, one of them failed for good; the third still bundled.
    const [exhausted, waiting] = await store.webhooks.dueMessages(everyEvent, Date.now() + 1000, beforeEveryMessage, 2)
    await store.webhooks.rescheduleMessage(everyEvent, exhausted!.seq, 1, null)
    await store.webhooks.rescheduleMessage(everyEvent, waiting!.seq, 1, Date.now() + 60_000)
    await createInStore(store, plantRow({ id: 4n, name: 'Moss' }))
    const countsOf = async (): Promise<unknown[]> =>
      (await store.webhooks.listEndpoints()).map(({ id, pendingMessages, failedMessages }) => ({ id, pendingMessages, failedMessages }))
    t.same(await countsOf(), [{ id: everyEvent, pendingMessages: 3, failedMessages: 1 }, { id: deletesOnly, pendingMessages: 0, failedMessages: 0 }])
    t.equal(await store.webhooks.pendingMessages(), 3)

    await store.webhooks.disableEndpoint(everyEvent, Date.now(), 'it answered 410 Gone')
    t.same(await countsOf(), [{ id: everyEvent, pendingMessages: 0, failedMessages: 4 }, { id: deletesOnly, pendingMessages: 0, failedMessages: 0 }],
      'nothing more is sent to it: all four will not be delivered')
    t.equal(await store.webhooks.pendingMessages(), 0, 'the gauge counts what enabled endpoints are owed')
    await createInStore(store, plantRow({ id: 5n, name: 'Ivy' }))
    t.equal(await store.webhooks.pendingMessages(), 0, 'and a disabled endpoint is owed nothing new')
  })

  t.test('every message of every batch has an id of its own, across more bundles than one fill of prefixes', async (t) => {
    const store = await storeWithEndpoints(await openStore(t))
    // One create at a time: a batch, and a bundle, each; more than the 256 prefixes drawn at once.
    const creates = 300
    for (let id = 1n; id <= BigInt(creates); id++) await createInStore(store, plantRow({ id, name: 'Moss' }))
    const due = await store.webhooks.dueMessages(everyEvent, Date.now() + 1000, beforeEveryMessage, creates)
    t.equal(due.length, creates)
    const prefixes = new Set(due.map(({ messageId }) => messageId.slice(0, -8)))
    t.equal(prefixes.size, creates, 'a prefix per bundle')
    t.equal(new Set(due.map(({ messageId }) => messageId)).size, creates, 'an id per message')
  })
}

// Rows owed to an endpoint that no longer exists (`leftRows` counts them, bundled messages one
// each) are not counted as pending, and the sweep deletes them and nothing else: the live
// endpoints keep what they are owed, rows and bundles alike.
async function checkLeftRowsSwept (t: Test, store: PlantStore, leftRows: () => Promise<number>, left: number): Promise<void> {
  const owed = async (): Promise<number[]> => (await store.webhooks.listEndpoints()).map(({ pendingMessages }) => pendingMessages)
  const owedBefore = await owed()
  t.ok(owedBefore.some((pending) => pending > 0), 'a live endpoint is owed messages')
  t.equal(await leftRows(), left, 'rows are left for the deleted endpoint')
  t.equal(await store.webhooks.pendingMessages(), owedBefore.reduce((sum, pending) => sum + pending, 0), 'only what an endpoint is owed is pending')
  t.equal(await store.webhooks.deleteMessagesOfDeletedEndpoints(), left, 'the sweep says how many it deleted')
  t.equal(await leftRows(), 0, 'none is left')
  t.same(await owed(), owedBefore, 'every live endpoint is owed what it was')
  t.equal(await store.webhooks.deleteMessagesOfDeletedEndpoints(), 0, 'a second sweep finds nothing')
}

// A message's body as the releases before bundles wrote it, of plant 1.
const bodyBefore = `{"type":"newPlant","timestamp":"${new Date(now).toISOString()}","data":{"id":1,"name":"Fern"}}`

// An endpoint owed both kinds of rows: a message unpacked by a read, and a bundle written since.
const alsoEveryEvent = '00000000-0000-4000-8000-000000000003'
async function oweRowsAndABundle (store: PlantStore, endpointId: string, ids: readonly bigint[]): Promise<void> {
  await createInStore(store, plantRow({ id: ids[0]!, name: 'Moss' }))
  await store.webhooks.dueMessages(endpointId, Date.now() + 1000, beforeEveryMessage, 1)
  await createInStore(store, plantRow({ id: ids[1]!, name: 'Moss' }))
}

t.test('SQLite', async (t) => {
  testBundles(t, async (t) => {
    const store = await SqlitePlantStore.open({ filename: `${testFolder(t)}/plants.db` })
    t.teardown(() => store.close())
    return store
  })

  // Every SQLite write reads the endpoints under the write lock, so no race leaves such rows;
  // they are written here by hand, as a file edited elsewhere might hold them, for an id that
  // sorts after the live endpoints' (the lookup steps past theirs to find it).
  t.test('messages of an endpoint that no longer exists are not counted, and are swept', async (t) => {
    const filename = `${testFolder(t)}/plants.db`
    const store = await storeWithEndpoints(await SqlitePlantStore.open({ filename }))
    t.teardown(() => store.close())
    await oweRowsAndABundle(store, everyEvent, [1n, 2n])
    const gone = '00000000-0000-4000-8000-0000000000ff'
    const byHand = new Database(filename)
    t.teardown(() => byHand.close())
    byHand.prepare(`INSERT INTO webhook_messages (endpoint_id, message_id, event, plant_id, document, committed_at, next_attempt_at)
      VALUES (?, 'msg_00000000000000000000000000000001', 'newPlant', 1, '{}', ?, ?)`).run(gone, now, now)
    byHand.prepare(`INSERT INTO webhook_message_bundles (endpoint_id, event, id_prefix, messages, message_count, committed_at, due_at)
      VALUES (?, 'newPlant', 'msg_0000000000000000000000ff', '[]', 3, ?, ?)`).run(gone, now, now)
    const leftRows = async (): Promise<number> => Number(byHand.prepare(`SELECT
      (SELECT count(*) FROM webhook_messages WHERE endpoint_id = ?) + (SELECT coalesce(sum(message_count), 0) FROM webhook_message_bundles WHERE endpoint_id = ?)`)
      .pluck().get(gone, gone))
    await checkLeftRowsSwept(t, store, leftRows, 4)
    t.equal(await store.webhooks.pendingMessages(), 2, 'the live endpoint is still owed its two')
  })

  t.test('messages written a row each by the release before bundles are still delivered after the migration', async (t) => {
    const filename = `${testFolder(t)}/plants.db`
    const before = new Database(filename)
    try {
      await applyMigrations(sqliteMigrationConnection(before), 5)
      before.prepare('INSERT INTO webhook_endpoints (id, url, secret, created_at) VALUES (?, ?, ?, ?)').run(everyEvent, 'http://127.0.0.1:1/every', 'whsec_a', now)
      before.prepare(`INSERT INTO webhook_messages (endpoint_id, message_id, event, body, committed_at, next_attempt_at)
        VALUES (?, 'msg_00000000000000000000000000000001', 'newPlant', ?, ?, ?)`).run(everyEvent, bodyBefore, now, now)
    } finally {
      before.close()
    }
    const store = await SqlitePlantStore.open({ filename })
    t.teardown(() => store.close())
    t.equal(store.migrationsAtOpen.schemaVersion, 9)
    store.useOutbox(outbox)
    await createInStore(store, plantRow({ id: 9n, name: 'Fern' }))
    const due = await store.webhooks.dueMessages(everyEvent, Date.now() + 1000, beforeEveryMessage, 64)
    t.same(due.map(({ messageId }) => messageId).slice(0, 1), ['msg_00000000000000000000000000000001'])
    t.same(due[0]?.plant, plantRow({ id: 1n, name: 'Fern' }), 'its plant, read from its body')
    t.equal(due.length, 2, 'the message from before, and the one bundled since')
  })
})

t.test('PostgreSQL', { skip: postgresSkipReason }, async (t) => {
  testBundles(t, async (t) => {
    const database = await postgresTestDatabase(t)
    const store = await PostgresPlantStore.open({ connectionString: database.url, poolSize: 2 })
    t.teardown(() => store.close())
    return store
  })

  // The race itself: a batch of creates whose statement began before the endpoint's deletion
  // (held here by another transaction's insert of one of its ids) writes the endpoint a bundle
  // after the deletion committed, from the snapshot it began with. A message row is added by
  // hand too (an unpack racing the deletion leaves those), and a live endpoint whose id sorts
  // after the deleted one's is owed rows and a bundle.
  t.test('a batch that began before its endpoint was deleted leaves it messages, which are not counted and are swept', async (t) => {
    const database = await postgresTestDatabase(t)
    const store = await storeWithEndpoints(await PostgresPlantStore.open({ connectionString: database.url, poolSize: 2 }))
    t.teardown(() => store.close())
    await store.webhooks.createEndpoint({ id: alsoEveryEvent, url: 'http://127.0.0.1:1/also', events: null, secret: 'whsec_c', createdAt: now + 2 })
    await oweRowsAndABundle(store, alsoEveryEvent, [1n, 2n])
    const other = new pg.Client({ connectionString: database.url })
    await other.connect()
    t.teardown(() => other.end())

    await other.query('BEGIN')
    await other.query('INSERT INTO plants (id, document) VALUES (5, \'{"name":"Fern"}\')')
    const creates = Promise.all([5n, 6n].map(async (id) => createInStore(store, plantRow({ id, name: 'Fern' }))))
    // The batch waits for this transaction: a session of this database that it blocks.
    const waitingOnOther = `SELECT count(*)::integer AS waiting FROM pg_stat_activity
      WHERE datname = current_database() AND pg_backend_pid() = ANY (pg_blocking_pids(pid))`
    for (let waited = 0; (await other.query<{ waiting: number }>(waitingOnOther)).rows[0]!.waiting === 0; waited += 10) {
      if (waited > 10_000) throw new Error('the batch never waited for the other insert')
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
    t.equal(await store.webhooks.deleteEndpoint(everyEvent), true, 'deleted while the batch waits')
    await other.query('ROLLBACK')
    t.same((await creates).map(({ created }) => created), [true, true], 'both created')
    await other.query(`INSERT INTO webhook_messages (endpoint_id, message_id, event, plant_id, document, committed_at, next_attempt_at)
      VALUES ($1, 'msg_00000000000000000000000000000001', 'newPlant', 1, '{}', $2, $2)`, [everyEvent, now])

    const leftRows = async (): Promise<number> => Number((await other.query<{ count: string }>(`SELECT
      (SELECT count(*) FROM webhook_messages WHERE endpoint_id = $1) + (SELECT coalesce(sum(message_count), 0) FROM webhook_message_bundles WHERE endpoint_id = $1) AS count`,
    [everyEvent])).rows[0]!.count)
    await checkLeftRowsSwept(t, store, leftRows, 3)
    t.equal(await store.webhooks.pendingMessages(), 4, 'the live endpoint is still owed its four')
  })

  t.test('messages written a row each by the release before bundles are still delivered after the migration', async (t) => {
    const database = await postgresTestDatabase(t)
    const before = new pg.Client({ connectionString: database.url })
    await before.connect()
    try {
      await applyMigrations(postgresMigrationConnection(before), 6)
      await before.query('INSERT INTO webhook_endpoints (id, url, secret, created_at) VALUES ($1, $2, $3, $4)', [everyEvent, 'http://127.0.0.1:1/every', 'whsec_a', now])
      await before.query(`INSERT INTO webhook_messages (endpoint_id, message_id, event, body, committed_at, next_attempt_at)
        VALUES ($1, 'msg_00000000000000000000000000000001', 'newPlant', $2, $3, $3)`, [everyEvent, bodyBefore, now])
    } finally {
      await before.end()
    }
    const store = await PostgresPlantStore.open({ connectionString: database.url, poolSize: 2 })
    t.teardown(() => store.close())
    t.equal(store.migrationsAtOpen?.schemaVersion, 9)
    store.useOutbox(outbox)
    await createInStore(store, plantRow({ id: 9n, name: 'Fern' }))
    t.equal(await store.webhooks.pendingMessages(), 2, 'counted: the message from before, and the one bundled since')
    const due = await store.webhooks.dueMessages(everyEvent, Date.now() + 1000, beforeEveryMessage, 64)
    t.same(due.map(({ messageId }) => messageId).slice(0, 1), ['msg_00000000000000000000000000000001'])
    t.same(due[0]?.plant, plantRow({ id: 1n, name: 'Fern' }), 'its plant, read from its body')
    t.equal(due.length, 2, 'both delivered')
  })
})
