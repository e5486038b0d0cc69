import { randomUUID } from 'node:crypto'
import t, { type Test } from 'tap'
import { PostgresPlantStore } from '../../src/store/postgres/postgres-plant-store.js'
import type { PlantStore } from '../../src/store/plant-store.js'
import { SqlitePlantStore } from '../../src/store/sqlite/sqlite-plant-store.js'
import type { Outbox } from '../../src/store/outbox.js'
import { beforeEveryMessage } from '../../src/store/webhook-store.js'
import { createInStore, deleteFromStore, PlantConflictError, plantRow } from '../support/plant-rows.js'
import { postgresSkipReason, postgresTestDatabase } from '../support/test-databases.js'
import { testFolder } from '../support/test-folder.js'

// A batch of creates owes a newPlant for each plant it stored, written with the plants (on
// PostgreSQL by the batch's one statement, on SQLite in its transaction), and none for a replay,
// a conflict, or a second create of an id in the same batch: whatever else the batch holds.

const everyEvent = '00000000-0000-4000-8000-000000000001'
const deletesOnly = '00000000-0000-4000-8000-000000000002'
const disabled = '00000000-0000-4000-8000-000000000003'
const now = 1_000_000

const outbox: Outbox = {
  wants: () => true,
  messagesOf: (change, plant, committedAt, traceparent) => [{
    messageId: `msg_${randomUUID().replaceAll('-', '')}`, event: change === 'plant-created' ? 'newPlant' : 'plantDeleted', plant, traceparent, dueAt: committedAt,
  }],
  webhooksOf: (change) => [change === 'plant-created' ? 'newPlant' : 'plantDeleted'],
  firstAttemptAt: (committedAt) => committedAt,
  committed: () => undefined,
}

const plantIdsOf = (messages: ReadonlyArray<{ plant: { id: bigint } }>): bigint[] =>
  messages.map(({ plant }) => plant.id).sort((a, b) => a < b ? -1 : 1)

function testBatchMessages (t: Test, openStore: (t: Test) => Promise<PlantStore>): void {
  t.test('a batch of creates owes a message for each plant it stored, and none for a replay or a conflict', async (t) => {
    const store = await openStore(t)
    await store.webhooks.createEndpoint({ id: everyEvent, url: 'http://127.0.0.1:1/every', events: null, secret: 'whsec_a', createdAt: now })
    await store.webhooks.createEndpoint({ id: deletesOnly, url: 'http://127.0.0.1:1/deletes', events: ['plantDeleted'], secret: 'whsec_b', createdAt: now })
    await store.webhooks.createEndpoint({ id: disabled, url: 'http://127.0.0.1:1/off', events: null, secret: 'whsec_c', createdAt: now })
    await store.webhooks.disableEndpoint(disabled, now, 'gone')
    await createInStore(store, plantRow({ id: 1n, name: 'Fern' }))
    store.useOutbox(outbox)

    // Sent together: one batch.
    const outcomes = await Promise.allSettled([
      createInStore(store, plantRow({ id: 2n, name: 'Ivy' }), { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' }),
      createInStore(store, plantRow({ id: 2n, name: 'Ivy' })),
      createInStore(store, plantRow({ id: 1n, name: 'Fern' })),
      createInStore(store, plantRow({ id: 3n, name: 'Moss' })),
      createInStore(store, plantRow({ id: 3n, name: 'Not moss' })),
      createInStore(store, plantRow({ id: 9007199254740993n, name: 'Aloe' })),
    ])
    t.same(outcomes.map((outcome) => outcome.status === 'fulfilled' ? outcome.value.created : outcome.reason instanceof PlantConflictError ? 'conflict' : outcome.reason),
      [true, false, false, true, 'conflict', true])

    const due = await store.webhooks.dueMessages(everyEvent, Date.now() + 1000, beforeEveryMessage, 64)
    t.same(plantIdsOf(due), [2n, 3n, 9007199254740993n], 'one message for each plant stored, its id exact beyond 2^53')
    t.same(due.find(({ plant }) => plant.id === 2n)?.plant, plantRow({ id: 2n, name: 'Ivy' }), 'the plant as it was stored')
    t.equal(due.find(({ plant }) => plant.id === 2n)?.traceparent, '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      'with the trace of the request that stored it')
    t.same(await store.webhooks.dueMessages(deletesOnly, Date.now() + 1000, beforeEveryMessage, 64), [], 'none to an endpoint not subscribed')
    t.same(await store.webhooks.dueMessages(disabled, Date.now() + 1000, beforeEveryMessage, 64), [], 'none to a disabled endpoint')
    t.equal(await store.webhooks.pendingMessages(), 3)
  })
  t.test('the outbox is told of a commit once the messages it wrote can be read', async (t) => {
    const store = await openStore(t)
    await store.webhooks.createEndpoint({ id: everyEvent, url: 'http://127.0.0.1:1/every', events: null, secret: 'whsec_a', createdAt: now })
    const readsOnCommit: Array<Promise<unknown[]>> = []
    store.useOutbox({ ...outbox, committed: () => { readsOnCommit.push(store.webhooks.dueMessages(everyEvent, Date.now() + 1000, beforeEveryMessage, 64)) } })
    await Promise.all([createInStore(store, plantRow({ id: 1n, name: 'Fern' })), createInStore(store, plantRow({ id: 2n, name: 'Ivy' }))])
    await deleteFromStore(store, 1n)
    // Nothing is delivered here: each read finds the messages of every commit before it, and its
    // own. Each commit wrote at least one, so the read begun on the k-th commit finds at least k; it
    // may find more, as a read runs after its commit and a later batch may commit before it does.
    const found = (await Promise.all(readsOnCommit)).map((messages) => messages.length)
    t.equal(found.at(-1), 3, 'the read on the delete\'s commit found its message')
    t.ok(found.every((count, index) => count >= index + 1), `each read found its own commit's messages and those before (${found.join(', ')})`)
  })
  t.test('a commit that could have written no message tells the outbox nothing', async (t) => {
    const store = await openStore(t)
    await store.webhooks.createEndpoint({ id: deletesOnly, url: 'http://127.0.0.1:1/deletes', events: ['plantDeleted'], secret: 'whsec_b', createdAt: now })
    let commitsTold = 0
    store.useOutbox({ ...outbox, wants: (change) => change === 'plant-deleted', committed: () => { commitsTold++ } })
    await Promise.all([createInStore(store, plantRow({ id: 1n, name: 'Fern' })), createInStore(store, plantRow({ id: 2n, name: 'Ivy' }))])
    await createInStore(store, plantRow({ id: 3n, name: 'Moss' }))
    t.equal(commitsTold, 0, 'creates, which no endpoint is owed, tell nothing')
    await deleteFromStore(store, 1n)
    t.equal(commitsTold, 1, 'a delete, which one is, tells its commit')
    t.equal((await store.webhooks.dueMessages(deletesOnly, Date.now() + 1000, beforeEveryMessage, 64)).length, 1, 'whose message is there to read')
  })
}

t.test('SQLite', async (t) => {
  testBatchMessages(t, async (t) => {
    const store = await SqlitePlantStore.open({ filename: `${testFolder(t)}/plants.db` })
    t.teardown(() => store.close())
    return store
  })
})

t.test('PostgreSQL', { skip: postgresSkipReason }, async (t) => {
  testBatchMessages(t, async (t) => {
    const database = await postgresTestDatabase(t)
    const store = await PostgresPlantStore.open({ connectionString: database.url, poolSize: 2 })
    t.teardown(() => store.close())
    return store
  })
})
